package io.kafkanative.jmeter;

import java.util.List;


/**
 * The consumer and lag samplers' parameters: the tables the JMeter GUI shows. As for the producer, Java only
 * passes them on ({@link ProducerParameters#engineConfig}, with the thread's number and its group's thread count)
 * and the engine validates and applies them, the consumer's verdict included (fail.on.empty, stop.on.empty,
 * check.sequence, check.regex). Java reads only {@code lag.variable} and, for a message, {@code poll.timeout.ms}.
 */
final class ConsumerParameters {

    static final String POLL_TIMEOUT_MS = "poll.timeout.ms";
    static final long DEFAULT_POLL_TIMEOUT_MS = 1000;
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
            parameter("group.protocol", "classic"),   // classic | consumer (KIP-848: the broker assigns, Kafka 4.0+)
            parameter("commit", "auto"),              // auto | sync (after each sample) | none
            parameter("max.records", "500"),
            parameter(POLL_TIMEOUT_MS, String.valueOf(DEFAULT_POLL_TIMEOUT_MS)),
            parameter("auto.offset.reset", "earliest"),
            parameter("session.timeout.ms", ""),      // classic protocol only; blank: 45000
            parameter("fail.on.empty", "false"),
            parameter("stop.on.empty", "false"),
            parameter("check.sequence", "false"),     // kn.seq increases per producer and partition (audit=true)
            parameter("check.regex", ""),             // every value must contain a match (Java-style regex)
            parameter("value.decode", ""),            // blank/none | avro | json-schema | protobuf: each record decodes
            parameter("value.assert", ""),            // with value.decode: field.path=expected on every record
            parameter("value.schema.file", ""),       // records without the registry header: their schema file
            parameter("schema.registry.url", ""),     // resolves the records' schema ids
            parameter("schema.registry.username", ""),
            parameter("schema.registry.password", ""),
            parameter("schema.registry.ssl.ca.location", ""),
            parameter("schema.registry.auth", ""),    // blank/basic | oauthbearer: the connection's OIDC token
            parameter("schema.registry.ssl.certificate.location", ""), // mTLS to the registry
            parameter("schema.registry.ssl.key.location", ""),
            parameter("schema.registry.ssl.key.password", ""),
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

    /** poll.timeout.ms, for the message of an empty poll (the engine validates it). */
    static long pollTimeoutMs(String[] config) {
        return ProducerParameters.number(config, POLL_TIMEOUT_MS, DEFAULT_POLL_TIMEOUT_MS);
    }

    static String lagVariable(String[] config) {
        String name = ProducerParameters.setting(config, LAG_VARIABLE);
        return name == null ? DEFAULT_LAG_VARIABLE : name;
    }
}
