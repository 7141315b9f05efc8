package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.apache.jmeter.config.Arguments;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the consumer and lag samplers' GUI tables list, and what Java reads itself. No native code involved. */
class ConsumerParametersTest {

    @BeforeAll
    static void initJMeter() {
        TestJMeter.init();
    }

    @Test
    void guiTablesListTheParametersInOrder() {
        assertEquals(List.of("bootstrap.servers", "topic", "group.id", "assignment", "commit", "max.records",
                "poll.timeout.ms", "auto.offset.reset", "session.timeout.ms", "fail.on.empty", "stop.on.empty",
                "check.sequence", "check.regex", "timeout.ms", "extra.properties"),
                List.copyOf(new KafkaConsumerSampler().getDefaultParameters().getArgumentsAsMap().keySet()));
        Map<String, String> lag = new KafkaLagSampler().getDefaultParameters().getArgumentsAsMap();
        assertEquals(List.of("bootstrap.servers", "topic", "group.id", "lag.windows", "lag.tolerance", "lag.variable",
                "timeout.ms", "extra.properties"), List.copyOf(lag.keySet()));
        assertEquals("${__P(kafka.group,jmeter-kafka-native)}", lag.get("group.id"));
        assertEquals("kafka.lag", lag.get("lag.variable"));
    }

    @Test
    void javaReadsCheckRegexStopOnEmptyAndTheLagVariable() {
        assertNull(ConsumerParameters.checkRegex(context(Map.of("check.regex", " "))));
        assertTrue(ConsumerParameters.checkRegex(context(Map.of("check.regex", "^a+$"))).matcher("aa").find());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConsumerParameters.checkRegex(context(Map.of("check.regex", "[a"))));
        assertTrue(e.getMessage().startsWith("CONFIG_ERROR\tcheck.regex: '[a' is not a valid"), e.getMessage());
        assertTrue(ConsumerParameters.stopOnEmpty(context(Map.of("stop.on.empty", "true"))));
        assertEquals("kafka.lag", ConsumerParameters.lagVariable(context(Map.of())));
        assertEquals("lag.orders", ConsumerParameters.lagVariable(context(Map.of("lag.variable", "lag.orders"))));
    }

    private static JavaSamplerContext context(Map<String, String> parameters) {
        Arguments arguments = new Arguments();
        parameters.forEach(arguments::addArgument);
        return new JavaSamplerContext(arguments);
    }
}
