package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.jmeter.threads.JMeterContextService;
import org.apache.jmeter.util.JMeterUtils;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The consumer and lag samplers against the real broker, asserting on what a JMeter user sees: response codes and
 * messages, sample counts, bytes, the Latency column (end-to-end), the lag variable, the end-of-test report.
 */
@Timeout(value = 90, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class KafkaConsumerSamplerTest {

    static final Path SUMMARY_FILE = Path.of("target", "test-kafka-native-consumer-summary.json").toAbsolutePath();

    @BeforeAll
    static void init() {
        TestJMeter.init();
        JMeterUtils.setProperty(KafkaConsumerSampler.SUMMARY_FILE_PROPERTY, SUMMARY_FILE.toString());
    }

    private static String group(String purpose) {
        return "java-group-" + purpose + "-" + System.nanoTime();
    }

    /** Sends {@code samples} x {@code perSample} messages stamped with their send time (and audit headers). */
    private static void produce(String topic, int samples, int perSample, Map<String, String> extra) {
        Map<String, String> parameters = new HashMap<>(Map.of("topic", topic, "messages.per.sample",
                String.valueOf(perSample), "record.size", "100", "stamp.time", "true", "audit", "true"));
        parameters.putAll(extra);
        try (var producer = JavaRequestThread.producer(parameters)) {
            for (int i = 0; i < samples; i++) {
                assertEquals("OK", producer.sample().getResponseCode());
            }
        }
    }

    /** Polls until {@code expected} records came (or 30 polls); returns the samples. */
    private static List<ConsumerSampleResult> consume(JavaRequestThread<KafkaConsumerSampler, ConsumerSampleResult> consumer, int expected) {
        List<ConsumerSampleResult> results = new ArrayList<>();
        int records = 0;
        for (int i = 0; i < 30 && records < expected; i++) {
            ConsumerSampleResult result = consumer.sample();
            results.add(result);
            records += records(result);
        }
        return results;
    }

    /** The records of a sample, whatever its outcome (the sample count is at least 1 even for none). */
    private static int records(ConsumerSampleResult result) {
        Matcher matcher = Pattern.compile("^records=(\\d+) ").matcher(result.getResponseDataAsString());
        return matcher.find() ? Integer.parseInt(matcher.group(1)) : 0;
    }

    @Test
    void recordsAreCountedWithTheirBytesAndEndToEndLatency() throws Exception {
        String topic = TestKafka.createTopic("consume", 3);
        produce(topic, 3, 10, Map.of());
        try (var consumer = JavaRequestThread.consumer(Map.of("topic", topic, "group.id", group("consume"),
                "check.sequence", "true", "commit", "sync"))) {
            List<ConsumerSampleResult> results = consume(consumer, 30);

            int records = 0;
            for (ConsumerSampleResult r : results) {
                assertTrue(r.isSuccessful(), r.getResponseCode() + " " + r.getResponseMessage());
                if (r.getResponseCode().equals("OK")) {
                    records += r.getSampleCount();
                    assertTrue(r.getResponseMessage().contains("end-to-end latency avg"), r.getResponseMessage());
                    assertTrue(r.getBytesAsLong() >= 100L * r.getSampleCount(), "values of 100 bytes plus headers");
                    assertTrue(r.getLatency() >= 0 && r.getLatency() < 30_000, "end-to-end ms: " + r.getLatency());
                    assertEquals(0, r.getSentBytes());
                } else {
                    assertEquals("EMPTY", r.getResponseCode());
                }
            }
            assertEquals(30, records);
        }
    }

    @Test
    void emptyPollIsNotAnErrorAndStopOnEmptyStopsTheThread() throws Exception {
        String topic = TestKafka.createTopic("empty", 1);
        try (var consumer = JavaRequestThread.consumer(Map.of("topic", topic, "group.id", group("empty"),
                "poll.timeout.ms", "300", "stop.on.empty", "true"))) {
            ConsumerSampleResult result = consumer.sample();

            assertTrue(result.isSuccessful());
            assertEquals("EMPTY", result.getResponseCode());
            assertEquals("no record within 300 ms (poll.timeout.ms)", result.getResponseMessage());
            assertEquals(1, result.getSampleCount(), "JMeter divides by the sample count");
            assertTrue(result.isStopThread(), "stop.on.empty: the thread's partitions are drained");
        }
        try (var consumer = JavaRequestThread.consumer(Map.of("topic", topic, "group.id", group("empty-fails"),
                "poll.timeout.ms", "300", "fail.on.empty", "true"))) {
            ConsumerSampleResult result = consumer.sample();

            assertFalse(result.isSuccessful());
            assertEquals("EMPTY", result.getResponseCode());
            assertFalse(result.isStopThread());
        }
    }

    @Test
    void checkRegexFailsTheSampleOnAValueWithoutAMatch() throws Exception {
        String topic = TestKafka.createTopic("regex", 1);
        produce(topic, 1, 3, Map.of("value.mode", "jmeter", "value", "order-42"));
        try (var matching = JavaRequestThread.consumer(Map.of("topic", topic, "group.id", group("regex-ok"),
                "check.regex", "^order-\\d+$"))) {
            ConsumerSampleResult result = consume(matching, 3).get(0);
            assertEquals("OK", result.getResponseCode(), result.getResponseMessage());
        }
        try (var failing = JavaRequestThread.consumer(Map.of("topic", topic, "group.id", group("regex-bad"),
                "check.regex", "invoice"))) {
            ConsumerSampleResult result = consume(failing, 3).get(0);
            assertEquals("CONTENT_MISMATCH", result.getResponseCode());
            assertTrue(result.getResponseMessage().startsWith("3 of 3 records do not contain a match of check.regex "
                    + "'invoice'; the first: 'order-42'"), result.getResponseMessage());
        }
    }

    @Test
    void configurationMistakesStopTheTestWithOneClearSample() {
        for (Map<String, String> mistake : List.of(Map.of("commit", "always"), Map.of("check.regex", "(unclosed"),
                Map.of("extra.properties", "fetch.wait.max.mss=5"))) {
            Map<String, String> parameters = new HashMap<>(mistake);
            parameters.putAll(Map.of("topic", "never-created", "group.id", "g"));
            try (var consumer = JavaRequestThread.consumer(parameters)) {
                ConsumerSampleResult result = consumer.sample();

                assertEquals("CONFIG_ERROR", result.getResponseCode(), result.getResponseMessage());
                String key = mistake.keySet().iterator().next();
                String named = key.equals("extra.properties") ? "fetch.wait.max.mss" : key;
                assertTrue(result.getResponseMessage().contains(named), result.getResponseMessage());
                assertTrue(result.isStopTest());
            }
        }
    }

    @Test
    void missingTopicIsReportedAtTheFirstSample() {
        try (var consumer = JavaRequestThread.consumer(Map.of("topic", "no-such-topic-java", "group.id", "g",
                "timeout.ms", "1000"))) {
            ConsumerSampleResult result = consumer.sample();

            assertEquals("UNKNOWN_TOPIC_OR_PART", result.getResponseCode());
            assertTrue(result.getResponseMessage().contains("topic 'no-such-topic-java' does not exist"),
                    result.getResponseMessage());
        }
    }

    @Test
    void lagSamplerSetsTheVariableAndFailsWhenLagKeepsGrowing() throws Exception {
        String topic = TestKafka.createTopic("lag", 2);
        String group = group("lag");
        try (var lag = JavaRequestThread.lag(Map.of("topic", topic, "group.id", group, "lag.windows", "2",
                "lag.tolerance", "5"))) {
            LagSampleResult missing = lag.sample();
            assertEquals("GROUP_NOT_FOUND", missing.getResponseCode(), missing.getResponseMessage());
            assertFalse(missing.isStopTest(), "the group may appear once the consumers commit");
            assertEquals("", JMeterContextService.getContext().getVariables().get("kafka.lag"));

            // A consumer that commits 1 record per sample while 10 arrive per round falls behind.
            try (var slow = JavaRequestThread.consumer(Map.of("topic", topic, "group.id", group, "commit", "sync",
                    "max.records", "1", "assignment", "0"))) {
                List<LagSampleResult> readings = new ArrayList<>();
                for (int round = 0; round < 4; round++) {
                    produce(topic, 1, 10, Map.of("partition", "0"));
                    slow.sample();
                    readings.add(lag.sample());
                }
                LagSampleResult first = readings.get(0);
                assertEquals("OK", first.getResponseCode(), first.getResponseMessage());
                assertTrue(Pattern.compile("^lag 9 \\(growth [+-]\\d+, growing \\d sample\\(s\\) in a row\\): "
                        + "p0=9 p1=0\\(no commit\\)$").matcher(first.getResponseMessage()).find(),
                        first.getResponseMessage());
                LagSampleResult last = readings.get(3);
                assertEquals("LAG_GROWING", last.getResponseCode(), last.getResponseMessage());
                assertTrue(last.getResponseMessage().contains("is not keeping up"), last.getResponseMessage());
                assertEquals("36", JMeterContextService.getContext().getVariables().get("kafka.lag"));
            }
        }
    }

    @Test
    void closingTheLastConsumerPrintsThePerfTestColumnsAndTheLatencyLine() throws Exception {
        String topic = TestKafka.createTopic("summary", 1);
        produce(topic, 1, 5, Map.of());
        Files.deleteIfExists(SUMMARY_FILE);
        var consumer = JavaRequestThread.consumer(Map.of("topic", topic, "group.id", group("summary")));
        consume(consumer, 5);

        String printed = TestJMeter.captureStandardOutput(consumer::close);

        assertTrue(printed.contains("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, "
                + "nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n"), printed);
        assertTrue(Pattern.compile("(?m)^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d:\\d{3}, .*, 5, [\\d.]+, 0, \\d+, "
                + "[\\d.]+, [\\d.]+$").matcher(printed).find(), printed);
        assertTrue(Pattern.compile("(?m)^end-to-end latency: 5 records, avg [\\d.]+ ms, p50 [\\d.]+ ms, "
                + "p99 [\\d.]+ ms, p99\\.9 [\\d.]+ ms").matcher(printed).find(), printed);
        String json = Files.readString(SUMMARY_FILE);
        assertNotNull(json);
        assertTrue(json.contains("\"data.consumed.in.nMsg\": 5"), json);
    }

}
