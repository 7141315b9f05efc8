package io.kafkanative.jmeter;

import org.apache.jmeter.samplers.Interruptible;

/**
 * JMeter "Java Request" that consumes Kafka records through the Rust engine.
 *
 * <p>One native consumer per JMeter thread: {@code setupTest} opens it (static assignment of the thread's share of
 * the partitions by default, so that thread counts never trigger a rebalance), every {@code runTest} is one native
 * poll of up to {@code max.records} records within {@code poll.timeout.ms}, and it closes, leaving its group, when
 * the JMeter thread ends (JMeter calls {@code teardownTest} only at the end of the test, which then does nothing).
 * The engine decides each poll's verdict (fail.on.empty, check.sequence, check.regex) and whether the thread is
 * done (stop.on.empty). When the last consumer of the test closes, kafka-consumer-perf-test's columns and the
 * end-to-end latency line are printed and written to the JSON summary ({@code kafka.consumer.summary.file}).
 */
public class KafkaConsumerSampler extends AbstractNativeSampler<ConsumerSampleResult> implements Interruptible {

    static final String SUMMARY_FILE_PROPERTY = "kafka.consumer.summary.file";
    static final String DEFAULT_SUMMARY_FILE = "kafka-native-consumer-summary.json";

    private static final Kind<ConsumerSampleResult> CONSUMER = new Kind<>("consumer", KafkaConsumerSampler.class,
            ConsumerParameters.CONSUMER_DEFAULTS, ResultLayout.Consumer.OUT_LENGTH,
            ResultLayout.Consumer.LOG_LINES_WAITING, NativeConsumer::open, ConsumerSampleResult::new)
            .interruptible(NativeConsumer::interrupt)
            .closingAtThreadEnd()
            .reporting(SUMMARY_FILE_PROPERTY, DEFAULT_SUMMARY_FILE, path -> NativeEngine.report("consumer", path));

    private long pollTimeoutMs;

    /** Kept cheap: the GUI instantiates every candidate class; the engine is loaded only in setupTest. */
    public KafkaConsumerSampler() {
        super(CONSUMER);
    }

    @Override
    protected void configure(String[] config) {
        pollTimeoutMs = ConsumerParameters.pollTimeoutMs(config); // only for the EMPTY message
    }

    @Override
    protected void call(long handle, long start, String value, ConsumerSampleResult result) {
        result.describePoll(start, NativeConsumer.poll(handle, out), out, pollTimeoutMs);
    }

    @Override
    protected String close(long handle, boolean interrupted) {
        return NativeConsumer.close(handle);
    }
}
