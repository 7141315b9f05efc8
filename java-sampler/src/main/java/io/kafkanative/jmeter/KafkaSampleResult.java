package io.kafkanative.jmeter;

import static io.kafkanative.jmeter.ResultLayout.Producer.ACKED;
import static io.kafkanative.jmeter.ResultLayout.Producer.BYTES_SENT;
import static io.kafkanative.jmeter.ResultLayout.Producer.ELAPSED_MICROS;
import static io.kafkanative.jmeter.ResultLayout.Producer.FAILED;
import static io.kafkanative.jmeter.ResultLayout.Producer.OFFSET;
import static io.kafkanative.jmeter.ResultLayout.Producer.PARTITION;
import static io.kafkanative.jmeter.ResultLayout.Producer.SENT;

import java.nio.charset.StandardCharsets;

import org.apache.jmeter.samplers.SampleResult;

/**
 * One sample: the messages of one native send, as JMeter's listeners will show them.
 *
 * <p>A sample may stand for several messages and several errors. JMeter 5.6.3 honours {@code setSampleCount} but
 * ignores {@code setErrorCount} (it derives the error count from the success flag), so the number of failed
 * messages is reported by overriding {@link #getErrorCount()}. In distributed mode this class travels to the
 * controller, which therefore needs our jar too.
 */
public class KafkaSampleResult extends SampleResult {

    private static final long serialVersionUID = 1L;

    private int failedMessages;

    public KafkaSampleResult() {
        setDataType(TEXT);
    }

    /** The failed messages; at least 1 if the sample failed for another reason (configuration, an assertion). */
    @Override
    public int getErrorCount() {
        return isSuccessful() ? 0 : Math.max(1, failedMessages);
    }

    /**
     * Fills in what {@link NativeProducer#send} reported.
     *
     * @param start when the send was called (epoch millis)
     * @param error null if every message was acked, else the first failure
     * @param out   the counters send filled in
     */
    void describeSend(long start, EngineError error, long[] out) {
        // The engine's own send -> ack time, not the time around the JNI call. JMeter's time stamp is the start
        // or (by default) the end of the sample, depending on its property sampleresult.timestamp.start.
        long elapsedMillis = Math.round(out[ELAPSED_MICROS] / 1000.0);
        setStampAndTime(isStampedAtStart() ? start : start + elapsedMillis, elapsedMillis);
        setLatency(elapsedMillis);
        setSentBytes(out[BYTES_SENT]);

        long acked = out[ACKED];
        long failed = out[FAILED];
        // Never 0: JMeter divides by it; messages that failed before being sent still count.
        long messages = Math.max(1, Math.max(out[SENT], acked + failed));
        setSampleCount((int) messages);
        failedMessages = (int) failed;

        String where = "partition=" + out[PARTITION] + " offset=" + out[OFFSET];
        if (error == null) {
            setSuccessful(true);
            setResponseCode("OK");
            String lastAck = "partition " + out[PARTITION] + ", offset " + out[OFFSET];
            setResponseMessage(messages == 1 ? "acked: " + lastAck : messages + " acked, the last at " + lastAck);
            setResponseData(where, StandardCharsets.UTF_8.name());
        } else {
            setSuccessful(false);
            setResponseCode(error.code());
            setResponseMessage(messages == 1 ? error.message()
                    : Math.max(1, failed) + " of " + messages + " failed: " + error.code() + ": " + error.message());
            setResponseData(where + "\n" + error.code() + ": " + error.message(), StandardCharsets.UTF_8.name());
        }
    }

    /** A sample that made no native call, or whose call threw: a failed setup, a closed handle, an engine fault. */
    void fail(EngineError error) {
        setStampAndTime(System.currentTimeMillis(), 0);
        setSuccessful(false);
        setResponseCode(error.code());
        setResponseMessage(error.message());
        setResponseData(error.code() + ": " + error.message(), StandardCharsets.UTF_8.name());
    }
}
