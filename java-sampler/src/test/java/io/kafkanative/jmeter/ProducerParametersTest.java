package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.jmeter.config.Arguments;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerContext;
import org.apache.jmeter.testelement.TestElement;
import org.apache.jmeter.threads.JMeterContext;
import org.apache.jmeter.threads.JMeterContextService;
import org.apache.jmeter.threads.ThreadGroup;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the GUI lists, and what reaches the engine. No native code involved. */
class ProducerParametersTest {

    @BeforeAll
    static void initJMeter() {
        TestJMeter.init();
    }

    @Test
    void guiListsEveryParameterWithItsDefaultInOrder() {
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("bootstrap.servers", "${__P(kafka.bootstrap,127.0.0.1:9092)}");
        expected.put("topic", "${__P(kafka.topic,jmeter-kafka-native)}");
        expected.put("policy", "capacity");
        expected.put("acks", "");
        expected.put("retries", "");
        expected.put("enable.idempotence", "");
        expected.put("linger.ms", "0");
        expected.put("batch.size", "");
        expected.put("compression.type", "none");
        expected.put("producer.scope", "test");
        expected.put("producer.pool.size", "");
        expected.put("timeout.ms", ""); // blank: the policy decides (3000 capacity, 30000 reliability)
        expected.put("messages.per.sample", "1");
        expected.put("value.mode", "fixed");
        expected.put("record.size", "1024");
        expected.put("value.template", "");
        expected.put("payload.file", "");
        expected.put("value", "");
        expected.put("key.mode", "none");
        expected.put("key", "");
        for (String schemaParameter : List.of("value.schema.file", "value.schema.message", "value.schema.subject",
                "value.schema.version", "value.schema.rules", "value.schema.rules.file", "value.schema.input",
                "key.schema.file", "schema.registry.url", "schema.registry.username", "schema.registry.password",
                "schema.registry.ssl.ca.location", "schema.registry.auth", "schema.registry.ssl.certificate.location",
                "schema.registry.ssl.key.location", "schema.registry.ssl.key.password", "auto.register.schemas",
                "value.subject.name.strategy")) {
            expected.put(schemaParameter, ""); // blank: not sent, the engine's default applies
        }
        expected.put("headers", "");
        expected.put("partition", "");
        expected.put("preflight", "warn");
        expected.put("topic.create", "false");
        expected.put("topic.partitions", "");
        expected.put("topic.replication", "");
        expected.put("target.rate", "");
        expected.put("transactional.id.prefix", "");
        expected.put("transaction.samples", "");
        expected.put("transaction.abort.percent", "");
        expected.put("stamp.time", "false");
        expected.put("audit", "false");
        expected.put("extra.properties", "");

        Arguments shown = new KafkaProducerSampler().getDefaultParameters();

        assertEquals(expected, shown.getArgumentsAsMap());
        assertEquals(new ArrayList<>(expected.keySet()), new ArrayList<>(shown.getArgumentsAsMap().keySet()));
    }

    @Test
    void engineGetsNonBlankTrimmedParametersButNotValueNorJMeterOwn() {
        Arguments arguments = new Arguments();
        arguments.addArgument("topic", "  orders ");
        arguments.addArgument("acks", "   ");
        arguments.addArgument("linger.ms", "5");
        arguments.addArgument("value", "${payload}");
        arguments.addArgument("my.typo", "1"); // added in the GUI: the engine must see it to reject it
        arguments.addArgument(TestElement.NAME, "Kafka send");

        String[] config = ProducerParameters.engineConfig(new JavaSamplerContext(arguments));

        assertArrayEquals(new String[] {"topic", "orders", "linger.ms", "5", "my.typo", "1"}, config);
    }

    @Test
    void engineLearnsTheJMeterThreadAndThreadGroupSize() {
        ThreadGroup group = new ThreadGroup();
        group.setNumThreads(4);
        JMeterContext jmeter = JMeterContextService.getContext();
        jmeter.setThreadGroup(group);
        jmeter.setThreadNum(2);
        try {
            String[] config = ProducerParameters.engineConfig(context("topic", "orders"));

            assertArrayEquals(new String[] {"topic", "orders", "thread.number", "3", "thread.count", "4"}, config);
        } finally {
            jmeter.setThreadGroup(null); // back to "outside a running test" for the other tests of this thread
            jmeter.setThreadNum(0);
        }
    }

    @Test
    void onlyValueModeJmeterSendsTheValueParameter() {
        assertTrue(ProducerParameters.valueFromJMeter(config("value.mode", " jmeter ")));
        assertFalse(ProducerParameters.valueFromJMeter(config("value.mode", "fixed")));
        assertFalse(ProducerParameters.valueFromJMeter(config("topic", "t")));
        // a schema mode encoding JMeter's JSON value against the schema sends it too
        assertTrue(ProducerParameters.valueFromJMeter(config("value.mode", "avro", "value.schema.input", "jmeter")));
        assertFalse(ProducerParameters.valueFromJMeter(config("value.mode", "avro")));
    }

    @Test
    void malformedOrMissingTimeoutFallsBackToThePolicysForClosing() {
        assertEquals(1500, ProducerParameters.timeoutMs(config("timeout.ms", " 1500")));
        assertEquals(3000, ProducerParameters.timeoutMs(config("timeout.ms", "soon")));
        assertEquals(3000, ProducerParameters.timeoutMs(config("topic", "t")));
        assertEquals(30000, ProducerParameters.timeoutMs(config("policy", "reliability")));
        assertEquals(1500, ProducerParameters.timeoutMs(config("policy", "reliability", "timeout.ms", "1500")));
    }

    private static String[] config(String... nameValuePairs) {
        return ProducerParameters.engineConfig(context(nameValuePairs));
    }

    private static JavaSamplerContext context(String... nameValuePairs) {
        List<String> pairs = List.of(nameValuePairs);
        Arguments arguments = new Arguments();
        for (int i = 0; i < pairs.size(); i += 2) {
            arguments.addArgument(pairs.get(i), pairs.get(i + 1));
        }
        return new JavaSamplerContext(arguments);
    }
}
