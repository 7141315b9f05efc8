package io.kafkanative.jmeter;

import static io.kafkanative.jmeter.ResultLayout.Consumer.ASSIGNED_PARTITIONS;
import static io.kafkanative.jmeter.ResultLayout.Consumer.BYTES;
import static io.kafkanative.jmeter.ResultLayout.Consumer.E2E_MAX_MICROS;
import static io.kafkanative.jmeter.ResultLayout.Consumer.E2E_MEAN_MICROS;
import static io.kafkanative.jmeter.ResultLayout.Consumer.ELAPSED_MICROS;
import static io.kafkanative.jmeter.ResultLayout.Consumer.OFFSET;
import static io.kafkanative.jmeter.ResultLayout.Consumer.PARTITION;
import static io.kafkanative.jmeter.ResultLayout.Consumer.REBALANCES;
import static io.kafkanative.jmeter.ResultLayout.Consumer.REBALANCE_ENDED;
import static io.kafkanative.jmeter.ResultLayout.Consumer.REBALANCE_PAUSE_MICROS;
import static io.kafkanative.jmeter.ResultLayout.Consumer.RECORDS;
import static io.kafkanative.jmeter.ResultLayout.Consumer.STOP_THREAD;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One consumer poll, as JMeter's listeners show it.
 *
 * <p>Sample count = records (at least 1, JMeter divides by it), bytes = their size, elapsed = the engine's poll
 * time, and JMeter's Latency column = the mean produce-to-consume latency of the sample's records (0 when none had
 * a send time), so JMeter's own graphs and dashboard show end-to-end latency. The verdict is the engine's; this
 * class only words it. The sample that ended a rebalance's pause (its first record after the new assignment) has
 * its response message end with {@code ; after rebalance #N: paused X ms}: the label stays the element's, so
 * JMeter's reports keep one row per sampler.
 */
public class ConsumerSampleResult extends KafkaSampleResult {

    private static final long serialVersionUID = 1L;

    /**
     * Fills in what {@link NativeConsumer#poll} reported.
     *
     * @param start         when poll was called (epoch millis)
     * @param error         null if the sample succeeded, else the engine's verdict
     * @param out           the counters poll filled in
     * @param pollTimeoutMs poll.timeout.ms, for the message of an empty poll
     */
    void describePoll(long start, EngineError error, long[] out, long pollTimeoutMs) {
        long elapsedMillis = Math.round(out[ELAPSED_MICROS] / 1000.0);
        setStampAndTime(isStampedAtStart() ? start : start + elapsedMillis, elapsedMillis);
        long e2eMean = out[E2E_MEAN_MICROS];
        setLatency(e2eMean < 0 ? 0 : Math.round(e2eMean / 1000.0));
        long records = out[RECORDS];
        setSampleCount((int) Math.max(1, records));
        // JMeter's bytes column is headers + body size, falling back to the response data's length when both are 0:
        // the body size is the records' size, and an empty sample has no response data.
        setBytes(out[BYTES]);
        setBodySize(out[BYTES]);
        setSentBytes(0);
        // stop.on.empty: the engine saw this thread's partitions drained, like kafka-consumer-perf-test's end of input.
        setStopThread(out[STOP_THREAD] == 1);
        String data = "records=" + records + " bytes=" + out[BYTES]
                + " partition=" + out[PARTITION] + " offset=" + out[OFFSET]
                + " e2e.mean.us=" + e2eMean + " e2e.max.us=" + out[E2E_MAX_MICROS]
                + " rebalances=" + out[REBALANCES]
                + " assigned=" + out[ASSIGNED_PARTITIONS];
        String rebalance = out[REBALANCE_ENDED] == 0 ? ""
                : "; after rebalance #" + out[REBALANCE_ENDED] + ": paused "
                        + Math.round(out[REBALANCE_PAUSE_MICROS] / 1000.0) + " ms";
        if (error == null) {
            setSuccessful(true);
            if (records == 0) {
                setResponseCode(Codes.EMPTY);
                setResponseMessage("no record within " + pollTimeoutMs + " ms (poll.timeout.ms)" + rebalance);
            } else {
                setResponseCode("OK");
                setResponseMessage(summary(out) + rebalance);
                setResponseData(data, StandardCharsets.UTF_8.name());
            }
        } else {
            setSuccessful(false);
            setResponseCode(error.code());
            // CONTENT_MISMATCH's message counts the sample's records itself ("3 of 3 records do not contain ...").
            boolean selfContained = records == 0 || error.code().equals(Codes.CONTENT_MISMATCH);
            setResponseMessage((selfContained ? error.message() : summary(out) + "; " + error.message()) + rebalance);
            setResponseData(data + "\n" + error.code() + ": " + error.message(), StandardCharsets.UTF_8.name());
        }
    }

    private static String summary(long[] out) {
        long records = out[RECORDS];
        StringBuilder text = new StringBuilder().append(records).append(records == 1 ? " record" : " records");
        long mean = out[E2E_MEAN_MICROS];
        if (mean >= 0) {
            text.append(String.format(Locale.ROOT, ", end-to-end latency avg %.2f ms, max %.2f ms", mean / 1000.0,
                    out[E2E_MAX_MICROS] / 1000.0));
        }
        return text.append(", last at partition ").append(out[PARTITION])
                .append(", offset ").append(out[OFFSET]).toString();
    }
}
