package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The producer's whole JNI path (Java Request, native call, engine, librdkafka, delivery callback, result layout)
 * with no broker: each client starts librdkafka's in-process mock cluster ({@code test.mock.num.brokers}), which
 * creates a topic on first use. The surefire configuration allows the mock (KAFKA_NATIVE_MOCK_CLUSTER=allow); in a
 * real test the engine refuses it (engine test {@code mock_cluster::a_mock_cluster_is_refused_unless_allowed}).
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BrokerLessSamplerTest {

    /** A producer on a mock cluster of 3 brokers; nothing listens on the bootstrap address. */
    private static JavaRequestThread<KafkaProducerSampler, KafkaSampleResult> onMock(Map<String, String> changes) {
        Map<String, String> parameters = new HashMap<>(Map.of("topic", "broker-less", "test.mock.num.brokers", "3",
                "bootstrap.servers", TestKafka.UNREACHABLE, "preflight", "off"));
        parameters.putAll(changes);
        return JavaRequestThread.producer(parameters);
    }

    @Test
    void aSampleIsAckedByTheMockCluster() throws Exception {
        try (var thread = onMock(Map.of())) {
            KafkaSampleResult result = thread.sample();

            assertEquals("OK", result.getResponseCode(), result.getResponseMessage());
            assertTrue(result.getResponseMessage().matches("acked: partition \\d+, offset 0"),
                    result.getResponseMessage());
            assertEquals(1024, result.getSentBytes());
            assertEquals(1, result.getSampleCount());
        }
    }

    @Test
    void aBatchToOnePartitionIsCountedMessageByMessage() throws Exception {
        try (var thread = onMock(Map.of("messages.per.sample", "10", "record.size", "100", "partition", "0"))) {
            KafkaSampleResult first = thread.sample();
            KafkaSampleResult second = thread.sample();

            assertEquals("10 acked, the last at partition 0, offset 9", first.getResponseMessage());
            assertEquals("10 acked, the last at partition 0, offset 19", second.getResponseMessage());
            assertEquals(10, second.getSampleCount());
            assertEquals(0, second.getErrorCount());
            assertEquals(1000, second.getSentBytes());
        }
    }

    @Test
    void aRecordAboveTheLimitFailsWithItsCode() throws Exception {
        try (var thread = onMock(Map.of("record.size", "2000", "message.max.bytes", "1000"))) {
            KafkaSampleResult result = thread.sample();

            assertEquals("MSG_SIZE_TOO_LARGE", result.getResponseCode(), result.getResponseMessage());
            assertEquals(1, result.getErrorCount());
        }
    }
}
