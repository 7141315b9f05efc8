package io.kafkanative.jmeter;

import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.jmeter.protocol.java.sampler.JavaSamplerContext;
import org.apache.jmeter.samplers.Interruptible;
import org.apache.jmeter.util.JMeterUtils;

/**
 * JMeter "Java Request" that sends Kafka messages through the Rust engine.
 *
 * <p>JMeter creates one instance per thread and Java Request element: {@code setupTest} (on the thread's first
 * sample) opens an engine producer, every {@code runTest} makes one native call that sends
 * {@code messages.per.sample} messages and waits for their acks, and {@code teardownTest} (at test end, on another
 * thread) closes it. When the last producer of the test is closed, the engine's kafka-producer-perf-test style
 * summary is printed and written as JSON to the file named by {@code kafka.summary.file}.
 */
public class KafkaProducerSampler extends AbstractNativeSampler<KafkaSampleResult> implements Interruptible {

    static final String SUMMARY_FILE_PROPERTY = "kafka.summary.file";
    static final String DEFAULT_SUMMARY_FILE = "kafka-native-summary.json";

    private static final Kind<KafkaSampleResult> PRODUCER = new Kind<>("producer", KafkaProducerSampler.class,
            ProducerParameters.DEFAULTS, ResultLayout.Producer.OUT_LENGTH, ResultLayout.Producer.LOG_LINES_WAITING,
            NativeProducer::open, KafkaSampleResult::new)
            .interruptible(NativeProducer::interrupt)
            .reporting(SUMMARY_FILE_PROPERTY, DEFAULT_SUMMARY_FILE, path -> NativeEngine.report("producer", path));

    /** The JMeter property naming how results travel from remote engines (JMeter's own {@code mode}). */
    static final String MODE_PROPERTY = "mode";
    /** Set once this JVM has warned that Statistical mode undercounts batch samples' failures. */
    private static final AtomicBoolean WARNED_STATISTICAL = new AtomicBoolean();

    private boolean valueFromJMeter;
    private long closeTimeoutMs;

    /** Kept cheap: the GUI instantiates every candidate class; the engine is loaded only in setupTest. */
    public KafkaProducerSampler() {
        super(PRODUCER);
    }

    /** value is read for every sample: it usually holds a variable such as ${payload}. */
    @Override
    protected String value(JavaSamplerContext context) {
        return valueFromJMeter ? context.getParameter(ProducerParameters.VALUE, "") : null;
    }

    @Override
    protected void configure(String[] config) {
        valueFromJMeter = ProducerParameters.valueFromJMeter(config);
        // close() flushes messages still in flight: give it the send timeout plus a margin.
        closeTimeoutMs = ProducerParameters.timeoutMs(config) + 1000;
        warnIfUndercounted(ProducerParameters.number(config, "messages.per.sample", 1),
                JMeterUtils.getPropDefault(MODE_PROPERTY, ""));
    }

    /**
     * Remote engines in {@code mode=Statistical} count a failed sample as one error whatever its message count:
     * 100 failed samples of 5 messages show as 100 errors, not 500. Said once per JVM, at the first setup, so that
     * the error rate of a batch test run that way is not read as a message error rate.
     *
     * @return whether this call printed the warning
     */
    static boolean warnIfUndercounted(long messagesPerSample, String mode) {
        if (messagesPerSample > 1 && "Statistical".equalsIgnoreCase(mode.trim())
                && WARNED_STATISTICAL.compareAndSet(false, true)) {
            PRODUCER.log.warn("messages.per.sample={} with mode=Statistical: JMeter counts a failed sample as ONE"
                    + " error whatever its message count, so the error count undercounts failed messages; keep the"
                    + " default mode (StrippedBatch) or Standard/Batch/Asynch for batch samples, or read the failures"
                    + " from the engine's end-of-test report", messagesPerSample);
            return true;
        }
        return false;
    }

    @Override
    protected void call(long handle, long start, String value, KafkaSampleResult result) {
        result.describeSend(start, NativeProducer.send(handle, value, out), out);
    }

    @Override
    protected String close(long handle, boolean interrupted) {
        // A stopped test wants to end now: waiting for acks that may never come (broker down) would hold up
        // JMeter, which tears its samplers down one after the other.
        return NativeProducer.close(handle, interrupted ? 0 : closeTimeoutMs);
    }
}
