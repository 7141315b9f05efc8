package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sampler against the real broker (TestKafka.BOOTSTRAP), asserting on what a JMeter user sees: response codes
 * and messages, sample counts, partitions and offsets.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a native call that hangs must not hang the build
class KafkaProducerSamplerTest {

    private static final Pattern PARTITION_OFFSET = Pattern.compile("partition=(-?\\d+) offset=(-?\\d+)");

    @Test
    void oneMessageIsAckedWithItsPartitionAndOffset() throws Exception {
        String topic = TestKafka.createTopic("one", 1);
        try (var thread = JavaRequestThread.producer(Map.of("topic", topic))) {
            KafkaSampleResult result = thread.sample();

            assertTrue(result.isSuccessful(), result.getResponseMessage());
            assertEquals("OK", result.getResponseCode());
            assertEquals("acked: partition 0, offset 0", result.getResponseMessage());
            assertEquals("partition=0 offset=0", result.getResponseDataAsString());
            assertEquals(JavaRequestThread.PRODUCER_LABEL, result.getSampleLabel());
            assertTrue(result.getTime() >= 0);
            assertEquals(1024, result.getSentBytes(), "record.size 1024, no key, no headers");
            assertEquals(1, result.getSampleCount());
            assertEquals(0, result.getErrorCount());
        }
    }

    @Test
    void fiftySamplesToOnePartitionGetIncreasingOffsets() throws Exception {
        String topic = TestKafka.createTopic("fifty", 3);
        try (var thread = JavaRequestThread.producer(Map.of("topic", topic, "partition", "0"))) {
            long previousOffset = -1;
            for (int i = 0; i < 50; i++) {
                KafkaSampleResult result = thread.sample();
                assertEquals("OK", result.getResponseCode(), result.getResponseMessage());
                Matcher where = partitionAndOffset(result);
                assertEquals(0, Long.parseLong(where.group(1)));
                long offset = Long.parseLong(where.group(2));
                assertTrue(offset > previousOffset, "offset " + offset + " after " + previousOffset);
                previousOffset = offset;
            }
        }
    }

    @Test
    void batchSampleCountsEveryMessage() throws Exception {
        KafkaSampleResult result = firstSampleOnANewTopic("batch", Map.of("messages.per.sample", "10",
                "record.size", "100"));

        assertEquals("OK", result.getResponseCode(), result.getResponseMessage());
        assertEquals(10, result.getSampleCount());
        assertEquals(0, result.getErrorCount());
        assertEquals(1000, result.getSentBytes());
        assertEquals("10 acked, the last at partition 0, offset 9", result.getResponseMessage());
    }

    @Test
    void valueModeJmeterSendsTheValueParameter() throws Exception {
        KafkaSampleResult result = firstSampleOnANewTopic("jmeter-value", Map.of("value.mode", "jmeter",
                "value", "héllo 😀"));

        assertEquals("OK", result.getResponseCode(), result.getResponseMessage());
        assertEquals(11, result.getSentBytes(), "UTF-8, not Java's modified UTF-8: 1+2+3+1+4 bytes");
    }

    /** Opens a producer on a new topic of one partition with these changes and takes one sample. */
    private static KafkaSampleResult firstSampleOnANewTopic(String purpose, Map<String, String> changes)
            throws Exception {
        Map<String, String> parameters = new HashMap<>(changes);
        parameters.put("topic", TestKafka.createTopic(purpose, 1));
        try (var thread = JavaRequestThread.producer(parameters)) {
            return thread.sample();
        }
    }

    @Test
    void unreachableBrokerIsReportedBeforeTheFirstSend() {
        KafkaSampleResult result = sampleAgainstUnreachableBroker(Map.of());

        assertTrue(result.isStopTest(), "the pre-flight check failed: no point in sending");
    }

    @Test
    void unreachableBrokerFailsTheSendWithinTheTimeout() {
        sampleAgainstUnreachableBroker(Map.of("preflight", "off"));
    }

    /** Opens a sampler against a port nothing listens on and takes one sample: it must fail within 5 s. */
    private static KafkaSampleResult sampleAgainstUnreachableBroker(Map<String, String> changes) {
        Map<String, String> parameters = new HashMap<>(changes);
        parameters.putAll(Map.of("bootstrap.servers", TestKafka.UNREACHABLE, "topic", "nowhere", "timeout.ms", "1500"));
        long started = System.nanoTime();
        try (var thread = JavaRequestThread.producer(parameters)) {
            KafkaSampleResult result = thread.sample();
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            System.out.printf("unreachable broker %s, after %d ms: %s / %s%n", changes, tookMillis,
                    result.getResponseCode(), result.getResponseMessage());

            assertFalse(result.isSuccessful());
            assertNotEquals("OK", result.getResponseCode());
            assertFalse(result.getResponseMessage().isBlank());
            assertTrue(tookMillis < 5000, "took " + tookMillis + " ms");
            return result;
        }
    }

    @Test
    void oversizedMessageIsRejected() throws Exception {
        KafkaSampleResult result = firstSampleOnANewTopic("oversized", Map.of("record.size", "2000000"));

        assertEquals("MSG_SIZE_TOO_LARGE", result.getResponseCode(), result.getResponseMessage());
        assertFalse(result.isSuccessful());
    }

    @Test
    void invalidAcksIsAConfigurationErrorThatStopsTheThread() {
        try (var thread = JavaRequestThread.producer(Map.of("topic", "never-created", "acks", "banana"))) {
            KafkaSampleResult result = thread.sample();

            assertEquals("CONFIG_ERROR", result.getResponseCode());
            assertTrue(result.getResponseMessage().contains("acks"), result.getResponseMessage());
            assertTrue(result.isStopTest(), "the test must stop instead of failing every sample");
            assertFalse(result.isSuccessful());
        }
    }

    @Test
    void misspeltExtraPropertyIsNamedWithASuggestion() {
        try (var thread = JavaRequestThread.producer(Map.of("topic", "never-created",
                "extra.properties", "linger.mss=5"))) {
            KafkaSampleResult result = thread.sample();

            assertEquals("CONFIG_ERROR", result.getResponseCode());
            String message = result.getResponseMessage();
            assertTrue(message.contains("linger.mss"), message);
            assertTrue(message.replace("linger.mss", "").contains("linger.ms"), "suggests linger.ms: " + message);
        }
    }

    @Test
    void idempotenceWithAcksOneIsAConfigurationError() {
        try (var thread = JavaRequestThread.producer(Map.of("topic", "never-created",
                "enable.idempotence", "true", "acks", "1"))) {
            KafkaSampleResult result = thread.sample();

            assertEquals("CONFIG_ERROR", result.getResponseCode());
            assertTrue(result.getResponseMessage().toLowerCase(Locale.ROOT).contains("idempotence"),
                    result.getResponseMessage());
        }
    }

    @Test
    void interruptWakesASendBlockedOnAnUnreachableBroker() throws Exception {
        try (var thread = JavaRequestThread.producer(Map.of("bootstrap.servers", TestKafka.UNREACHABLE,
                "topic", "nowhere", "timeout.ms", "20000", "preflight", "off"))) {
            CompletableFuture<KafkaSampleResult> sending = CompletableFuture.supplyAsync(thread::sample);
            Thread.sleep(500); // let the send block
            assertFalse(sending.isDone(), "the send should still wait for its ack");

            long interrupted = System.nanoTime();
            assertTrue(thread.sampler.interrupt());
            KafkaSampleResult result = sending.get(2, TimeUnit.SECONDS);
            long wokenAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - interrupted);
            System.out.printf("interrupted after %d ms: %s / %s%n", wokenAfterMillis, result.getResponseCode(),
                    result.getResponseMessage());

            assertEquals("INTERRUPTED", result.getResponseCode(), result.getResponseMessage());
            assertFalse(result.isSuccessful());

            long closing = System.nanoTime();
            thread.close();
            long closedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closing);
            assertTrue(closedAfterMillis < 3000, "a stopped test does not wait for acks at close: " + closedAfterMillis);
        }
    }

    @Test
    void teardownFromAnotherThreadThenAgainIsHarmless() throws Exception {
        String topic = TestKafka.createTopic("teardown", 1);
        var thread = JavaRequestThread.producer(Map.of("topic", topic));
        assertEquals("OK", thread.sample().getResponseCode());

        CompletableFuture.runAsync(thread::close).get(10, TimeUnit.SECONDS); // JMeter tears down on another thread
        thread.close(); // no-op

        KafkaSampleResult afterClose = thread.sample();
        assertEquals("CLOSED", afterClose.getResponseCode());
        assertFalse(afterClose.isSuccessful());
        assertTrue(thread.sampler.interrupt(), "interrupt after close is harmless");
    }

    @Test
    void closingTheLastSamplerPrintsThePerfTestSummary() throws Exception {
        String topic = TestKafka.createTopic("summary", 1);
        Files.deleteIfExists(TestJMeter.SUMMARY_FILE);
        var thread = JavaRequestThread.producer(Map.of("topic", topic));
        for (int i = 0; i < 5; i++) {
            assertEquals("OK", thread.sample().getResponseCode());
        }

        String printed = TestJMeter.captureStandardOutput(thread::close);

        Pattern perfTestLine = Pattern.compile("(?m)^5 records sent, [\\d.]+ records/sec \\([\\d.]+ MB/sec\\), "
                + "[\\d.]+ ms avg latency, [\\d.]+ ms max latency, \\d+ ms 50th, \\d+ ms 95th, \\d+ ms 99th, "
                + "\\d+ ms 99\\.9th\\.$");
        assertTrue(perfTestLine.matcher(printed).find(), "printed: " + printed);
        assertTrue(Files.size(TestJMeter.SUMMARY_FILE) > 0, "JSON summary written");
    }

    private static Matcher partitionAndOffset(KafkaSampleResult result) {
        Matcher matcher = PARTITION_OFFSET.matcher(result.getResponseDataAsString());
        assertTrue(matcher.find(), result.getResponseDataAsString());
        return matcher;
    }

}
