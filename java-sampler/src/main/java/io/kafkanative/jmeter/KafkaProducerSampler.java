package io.kafkanative.jmeter;

import static io.kafkanative.jmeter.ResultLayout.Producer.ACKED;
import static io.kafkanative.jmeter.ResultLayout.Producer.BYTES_SENT;
import static io.kafkanative.jmeter.ResultLayout.Producer.ELAPSED_MICROS;
import static io.kafkanative.jmeter.ResultLayout.Producer.FAILED;
import static io.kafkanative.jmeter.ResultLayout.Producer.OFFSET;
import static io.kafkanative.jmeter.ResultLayout.Producer.PARTITION;
import static io.kafkanative.jmeter.ResultLayout.Producer.SENT;
import static io.kafkanative.jmeter.ResultLayout.Producer.TRANSACTION;
import static io.kafkanative.jmeter.ResultLayout.Producer.TXN_ABORTED;
import static io.kafkanative.jmeter.ResultLayout.Producer.TXN_COMMITTED;
import static io.kafkanative.jmeter.ResultLayout.Producer.TXN_OPEN;

import java.nio.charset.StandardCharsets;
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
    /** The key and headers fields as JMeter evaluated them for the next sample (null: the thread's settings). */
    private String key, headers;

    /** Kept cheap: the GUI instantiates every candidate class; the engine is loaded only in setupTest. */
    public KafkaProducerSampler() {
        super(PRODUCER);
    }

    /**
     * value, key and headers are read for every sample: they may hold a variable such as ${payload} or ${user}
     * (JMeter evaluates the Java Request's parameters before each sample anyway).
     */
    @Override
    protected String readSample(JavaSamplerContext context) {
        perSample(context.getParameter(ProducerParameters.KEY), context.getParameter(ProducerParameters.HEADERS));
        return valueFromJMeter ? context.getParameter(ProducerParameters.VALUE, "") : null;
    }

    /** The key and headers fields for the next sample, as JMeter evaluated them (the Kafka Producer element's). */
    void perSample(String key, String headers) {
        this.key = key;
        this.headers = headers;
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
        describeSend(result, start, NativeProducer.send(handle, value, key, headers, out), out);
    }

    @Override
    protected String close(long handle, boolean interrupted) {
        // A stopped test wants to end now: waiting for acks that may never come (broker down) would hold up
        // JMeter, which tears its samplers down one after the other.
        return NativeProducer.close(handle, interrupted ? 0 : closeTimeoutMs);
    }

    /**
     * Fills in what {@link NativeProducer#send} reported.
     *
     * @param result the sample to fill in
     * @param start when the send was called (epoch millis)
     * @param error null if every message was acked, else the first failure
     * @param out   the counters send filled in
     */
    static void describeSend(KafkaSampleResult result, long start, EngineError error, long[] out) {
        // The engine's own send -> ack time, not the time around the JNI call. JMeter's time stamp is the start
        // or (by default) the end of the sample, depending on its property sampleresult.timestamp.start.
        long elapsedMillis = Math.round(out[ELAPSED_MICROS] / 1000.0);
        result.setStampAndTime(result.isStampedAtStart() ? start : start + elapsedMillis, elapsedMillis);
        result.setLatency(elapsedMillis);
        result.setSentBytes(out[BYTES_SENT]);

        long acked = out[ACKED];
        long failed = out[FAILED];
        // Never 0: JMeter divides by it; messages that failed before being sent still count.
        long messages = Math.max(1, Math.max(out[SENT], acked + failed));
        result.setSampleCount((int) messages);
        result.setFailedMessages((int) failed);

        String where = "partition=" + out[PARTITION] + " offset=" + out[OFFSET];
        if (error == null) {
            result.setSuccessful(true);
            long txn = out[TRANSACTION];
            // An aborted transaction is a successful sample (abort-path testing), told apart by its code.
            result.setResponseCode(txn == TXN_ABORTED ? Codes.ABORTED : "OK");
            String lastAck = "partition " + out[PARTITION] + ", offset " + out[OFFSET];
            String acks = messages == 1 ? "acked: " + lastAck : messages + " acked, the last at " + lastAck;
            if (txn == TXN_COMMITTED) {
                acks += "; transaction committed";
            } else if (txn == TXN_ABORTED) {
                acks += "; transaction aborted on purpose (transaction.abort.percent): not visible to read_committed";
            } else if (txn == TXN_OPEN) {
                acks += "; in an open transaction (transaction.samples), committed by a later sample";
            }
            result.setResponseMessage(acks);
            result.setResponseData(where, StandardCharsets.UTF_8.name());
        } else {
            result.setSuccessful(false);
            result.setResponseCode(error.code());
            result.setResponseMessage(messages == 1 ? error.message()
                    : Math.max(1, failed) + " of " + messages + " failed: " + error.code() + ": " + error.message());
            result.setResponseData(where + "\n" + error.code() + ": " + error.message(),
                    StandardCharsets.UTF_8.name());
        }
    }
}
