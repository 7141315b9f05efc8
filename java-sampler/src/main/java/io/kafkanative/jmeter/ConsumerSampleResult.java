package io.kafkanative.jmeter;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One consumer poll or one lag reading, as JMeter's listeners show it.
 *
 * <p>A poll: sample count = records (at least 1, JMeter divides by it), bytes = their size, elapsed = the engine's
 * poll time, and JMeter's Latency column = the mean produce-to-consume latency of the sample's records (0 when
 * none had a send time), so JMeter's own graphs and dashboard show end-to-end latency.
 */
public class ConsumerSampleResult extends KafkaSampleResult {

    private static final long serialVersionUID = 1L;

    /** Fills in what {@link NativeConsumer#poll} reported; {@code start} = epoch millis when it was called. */
    void describePoll(long start, String error, long[] out, long pollTimeoutMs) {
        long elapsedMillis = Math.round(out[NativeConsumer.ELAPSED_MICROS] / 1000.0);
        setStampAndTime(isStampedAtStart() ? start : start + elapsedMillis, elapsedMillis);
        long e2eMean = out[NativeConsumer.E2E_MEAN_MICROS];
        setLatency(e2eMean < 0 ? 0 : Math.round(e2eMean / 1000.0));
        long records = out[NativeConsumer.RECORDS];
        setSampleCount((int) Math.max(1, records));
        // JMeter's bytes column is headers + body size, falling back to the response data's length when both are 0:
        // the body size is the records' size, and an empty sample has no response data.
        setBytes(out[NativeConsumer.BYTES]);
        setBodySize(out[NativeConsumer.BYTES]);
        setSentBytes(0);
        String data = "records=" + records + " bytes=" + out[NativeConsumer.BYTES]
                + " partition=" + out[NativeConsumer.PARTITION] + " offset=" + out[NativeConsumer.OFFSET]
                + " e2e.mean.us=" + e2eMean + " e2e.max.us=" + out[NativeConsumer.E2E_MAX_MICROS]
                + " rebalances=" + out[NativeConsumer.REBALANCES]
                + " assigned=" + out[NativeConsumer.ASSIGNED_PARTITIONS];
        if (error == null) {
            setSuccessful(true);
            if (records == 0) {
                setResponseCode("EMPTY");
                setResponseMessage("no record within " + pollTimeoutMs + " ms (poll.timeout.ms)");
            } else {
                setResponseCode("OK");
                setResponseMessage(summary(out));
                setResponseData(data, StandardCharsets.UTF_8.name());
            }
        } else {
            EngineError first = EngineError.parse(error, "POLL_FAILED");
            setSuccessful(false);
            setResponseCode(first.code());
            setResponseMessage(records == 0 ? first.message() : summary(out) + "; " + first.message());
            setResponseData(data + "\n" + first.code() + ": " + first.message(), StandardCharsets.UTF_8.name());
        }
    }

    private static String summary(long[] out) {
        long records = out[NativeConsumer.RECORDS];
        StringBuilder text = new StringBuilder().append(records).append(records == 1 ? " record" : " records");
        long mean = out[NativeConsumer.E2E_MEAN_MICROS];
        if (mean >= 0) {
            text.append(String.format(Locale.ROOT, ", end-to-end latency avg %.2f ms, max %.2f ms", mean / 1000.0,
                    out[NativeConsumer.E2E_MAX_MICROS] / 1000.0));
        }
        return text.append(", last at partition ").append(out[NativeConsumer.PARTITION])
                .append(", offset ").append(out[NativeConsumer.OFFSET]).toString();
    }

    /** A content check that failed on {@code mismatches} of the sample's records; the first one is shown. */
    void failCheck(int mismatches, int records, String regex, String firstValue) {
        String excerpt = firstValue.length() > 100 ? firstValue.substring(0, 100) + "..." : firstValue;
        setSuccessful(false);
        setResponseCode("CONTENT_MISMATCH");
        setResponseMessage(mismatches + " of " + records + " records do not contain a match of check.regex '" + regex
                + "'; the first: '" + excerpt + "'");
    }

    /**
     * Fills in what {@link NativeLag#sample} reported: {@code text} is the per-partition lag, preceded by
     * "CODE\tmessage\n" when the sample failed.
     */
    void describeLag(long start, String text, long[] out) {
        long elapsedMillis = Math.round(out[NativeLag.ELAPSED_MICROS] / 1000.0);
        setStampAndTime(isStampedAtStart() ? start : start + elapsedMillis, elapsedMillis);
        setLatency(elapsedMillis);
        boolean ok = out[NativeLag.OK] == 1;
        String partitions = text;
        EngineError error = null;
        if (!ok) {
            int newline = text.indexOf('\n');
            error = EngineError.parse(newline < 0 ? text : text.substring(0, newline), "LAG_FAILED");
            partitions = newline < 0 ? "" : text.substring(newline + 1);
        }
        String lag = "lag " + out[NativeLag.TOTAL_LAG] + " (growth " + String.format(Locale.ROOT, "%+d",
                out[NativeLag.GROWTH]) + ", growing " + out[NativeLag.GROWING_WINDOWS] + " sample(s) in a row): "
                + partitions;
        setSuccessful(ok);
        if (ok) {
            setResponseCode("OK");
            setResponseMessage(lag);
        } else {
            setResponseCode(error.code());
            setResponseMessage(error.code().equals("LAG_GROWING") ? error.message() + "; " + lag : error.message());
        }
        setResponseData("total=" + out[NativeLag.TOTAL_LAG] + "\n" + partitions.replace(' ', '\n')
                + (error == null ? "" : "\n" + error.code() + ": " + error.message()), StandardCharsets.UTF_8.name());
    }
}
