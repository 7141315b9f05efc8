package io.kafkanative.jmeter;

import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import org.apache.jmeter.config.Arguments;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerContext;

/**
 * The consumer and lag samplers' parameters: the tables the JMeter GUI shows. As for the producer, Java only
 * passes them on ({@link ProducerParameters#engineConfig}, with the thread's number and its group's thread count)
 * and the engine validates them; Java reads the few it acts on itself: {@code check.regex}, {@code stop.on.empty},
 * {@code lag.variable}.
 */
final class ConsumerParameters {

    static final String CHECK_REGEX = "check.regex";
    static final String STOP_ON_EMPTY = "stop.on.empty";
    static final String LAG_VARIABLE = "lag.variable";
    static final String DEFAULT_LAG_VARIABLE = "kafka.lag";

    private static final ProducerParameters.Parameter BOOTSTRAP =
            new ProducerParameters.Parameter("bootstrap.servers", "${__P(kafka.bootstrap,127.0.0.1:9092)}");
    private static final ProducerParameters.Parameter TOPIC =
            new ProducerParameters.Parameter("topic", "${__P(kafka.topic,jmeter-kafka-native)}");
    private static final ProducerParameters.Parameter GROUP =
            new ProducerParameters.Parameter("group.id", "${__P(kafka.group,jmeter-kafka-native)}");

    /** The consumer sampler's parameters and defaults, in the order the GUI lists them. */
    static final List<ProducerParameters.Parameter> CONSUMER_DEFAULTS = List.of(
            BOOTSTRAP,
            TOPIC,
            GROUP,
            parameter("assignment", "all"),           // all | 0,1,2 | 0-5 (static, split across threads) | subscribe
            parameter("commit", "auto"),              // auto | sync (after each sample) | none
            parameter("max.records", "500"),
            parameter("poll.timeout.ms", "1000"),
            parameter("auto.offset.reset", "earliest"),
            parameter("session.timeout.ms", "45000"),
            parameter("fail.on.empty", "false"),
            parameter(STOP_ON_EMPTY, "false"),
            parameter("check.sequence", "false"),     // kn.seq increases per producer and partition (audit=true)
            parameter(CHECK_REGEX, ""),               // every value must contain a match (Java regex)
            parameter("timeout.ms", "5000"),
            parameter("extra.properties", ""));

    /** The lag sampler's parameters and defaults. */
    static final List<ProducerParameters.Parameter> LAG_DEFAULTS = List.of(
            BOOTSTRAP,
            TOPIC,
            GROUP,
            parameter("lag.windows", "3"),
            parameter("lag.tolerance", "0"),
            parameter(LAG_VARIABLE, DEFAULT_LAG_VARIABLE),
            parameter("timeout.ms", "5000"),
            parameter("extra.properties", ""));

    private ConsumerParameters() {
    }

    private static ProducerParameters.Parameter parameter(String name, String defaultValue) {
        return new ProducerParameters.Parameter(name, defaultValue);
    }

    static Arguments arguments(List<ProducerParameters.Parameter> table) {
        Arguments arguments = new Arguments();
        for (ProducerParameters.Parameter parameter : table) {
            arguments.addArgument(parameter.name(), parameter.defaultValue());
        }
        return arguments;
    }

    /** check.regex compiled, or null when blank; an invalid regex is a configuration error naming it. */
    static Pattern checkRegex(JavaSamplerContext context) {
        String regex = context.getParameter(CHECK_REGEX, "");
        if (regex.isBlank()) {
            return null;
        }
        try {
            return Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException("CONFIG_ERROR\tcheck.regex: '" + regex + "' is not a valid Java regular"
                    + " expression: " + e.getDescription());
        }
    }

    static boolean stopOnEmpty(JavaSamplerContext context) {
        return "true".equals(context.getParameter(STOP_ON_EMPTY, "").trim());
    }

    static String lagVariable(JavaSamplerContext context) {
        String name = context.getParameter(LAG_VARIABLE, "").trim();
        return name.isEmpty() ? DEFAULT_LAG_VARIABLE : name;
    }
}
