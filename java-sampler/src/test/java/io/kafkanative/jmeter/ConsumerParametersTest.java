package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
        assertEquals(List.of("bootstrap.servers", "topic", "group.id", "assignment", "group.protocol", "commit", "max.records",
                "poll.timeout.ms", "auto.offset.reset", "session.timeout.ms", "fail.on.empty", "stop.on.empty",
                "check.sequence", "check.regex", "value.decode", "value.assert", "value.schema.file",
                "schema.registry.url", "schema.registry.username", "schema.registry.password",
                "schema.registry.ssl.ca.location", "schema.registry.auth", "schema.registry.ssl.certificate.location",
                "schema.registry.ssl.key.location", "schema.registry.ssl.key.password", "timeout.ms", "extra.properties"),
                List.copyOf(new KafkaConsumerSampler().getDefaultParameters().getArgumentsAsMap().keySet()));
        Map<String, String> lag = new KafkaLagSampler().getDefaultParameters().getArgumentsAsMap();
        assertEquals(List.of("bootstrap.servers", "topic", "group.id", "lag.windows", "lag.tolerance", "lag.variable",
                "timeout.ms", "extra.properties"), List.copyOf(lag.keySet()));
        assertEquals("${__P(kafka.group,jmeter-kafka-native)}", lag.get("group.id"));
        assertEquals("kafka.lag", lag.get("lag.variable"));
    }

    @Test
    void javaReadsOnlyTheLagVariableAndThePollTimeout() {
        assertEquals("kafka.lag", ConsumerParameters.lagVariable(config()));
        assertEquals("lag.orders", ConsumerParameters.lagVariable(config("lag.variable", " lag.orders ")));
        assertEquals(300, ConsumerParameters.pollTimeoutMs(config("poll.timeout.ms", "300")));
        assertEquals(1000, ConsumerParameters.pollTimeoutMs(config("poll.timeout.ms", "soon")));
        assertEquals(1000, ConsumerParameters.pollTimeoutMs(config()));
    }

    @Test
    void theConsumersVerdictSettingsGoToTheEngine() {
        String[] config = config("check.regex", "^order-\\d+$", "stop.on.empty", "true", "fail.on.empty", "true");

        assertArrayEquals(new String[] {"check.regex", "^order-\\d+$", "stop.on.empty", "true", "fail.on.empty",
                "true"}, config);
    }

    /** The engine configuration of a Java Request with these parameters. */
    private static String[] config(String... nameValuePairs) {
        Arguments arguments = new Arguments();
        for (int i = 0; i < nameValuePairs.length; i += 2) {
            arguments.addArgument(nameValuePairs[i], nameValuePairs[i + 1]);
        }
        return ProducerParameters.engineConfig(new JavaSamplerContext(arguments));
    }
}
