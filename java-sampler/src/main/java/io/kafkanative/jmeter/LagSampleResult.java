package io.kafkanative.jmeter;

import static io.kafkanative.jmeter.ResultLayout.Lag.ELAPSED_MICROS;
import static io.kafkanative.jmeter.ResultLayout.Lag.GROWING_WINDOWS;
import static io.kafkanative.jmeter.ResultLayout.Lag.GROWTH;
import static io.kafkanative.jmeter.ResultLayout.Lag.TOTAL_LAG;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * One lag reading, as JMeter's listeners show it: the total lag and its growth in the response message, one
 * partition per line in the response data, then the note on open transactions holding the lag, if any;
 * LAG_GROWING (or why there is no reading) as the response code.
 */
public class LagSampleResult extends KafkaSampleResult {

    private static final long serialVersionUID = 1L;
    private static final Pattern PARTITION_START = Pattern.compile(" (?=p\\d+=)");

    private boolean reading;

    /**
     * Fills in what {@link NativeLag#sample} reported.
     *
     * @param start when sample was called (epoch millis)
     * @param lag   the per-partition lag and the failure (null when the sample passed)
     * @param out   the counters sample filled in
     */
    void describeLag(long start, LagReading lag, long[] out) {
        long elapsedMillis = Math.round(out[ELAPSED_MICROS] / 1000.0);
        setStampAndTime(isStampedAtStart() ? start : start + elapsedMillis, elapsedMillis);
        setLatency(elapsedMillis);
        EngineError error = lag.error();
        String partitions = lag.partitions() == null ? "" : lag.partitions();
        // A growing lag is still a reading; a missing group or topic is not.
        reading = error == null || error.code().equals(Codes.LAG_GROWING);
        String note = lag.note() == null ? "" : "; " + lag.note();
        String text = "lag " + out[TOTAL_LAG] + " (growth " + String.format(Locale.ROOT, "%+d",
                out[GROWTH]) + ", growing " + out[GROWING_WINDOWS] + " sample(s) in a row): "
                + partitions + note;
        setSuccessful(error == null);
        if (error == null) {
            setResponseCode("OK");
            setResponseMessage(text);
        } else {
            setResponseCode(error.code());
            setResponseMessage(reading ? error.message() + "; " + text : error.message());
        }
        // One partition per line: "p0=12 p1=0(no commit)" splits before each "pN=", not inside "(no commit)".
        String perLine = PARTITION_START.matcher(partitions).replaceAll("\n");
        setResponseData("total=" + out[TOTAL_LAG] + "\n" + perLine + (lag.note() == null ? "" : "\n" + lag.note())
                + (error == null ? "" : "\n" + error.code() + ": " + error.message()), StandardCharsets.UTF_8.name());
    }

    /** Whether the sample read the group's lag (it passed or found it growing): the lag variable is set then. */
    boolean isReading() {
        return reading;
    }
}
