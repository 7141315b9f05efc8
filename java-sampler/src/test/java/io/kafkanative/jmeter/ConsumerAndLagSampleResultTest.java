package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * How the engine's verdict on a poll or a lag reading reads in JMeter's listeners. The counters are made up: no
 * native code involved.
 */
class ConsumerAndLagSampleResultTest {

    private static final long START = 1_700_000_000_000L;

    @BeforeAll
    static void initJMeter() {
        TestJMeter.init();
    }

    @Test
    void emptyPollWithoutFailOnEmptyIsASuccessAndStopThreadIsTheEngines() {
        ConsumerSampleResult result = poll(null, 0, 0);

        assertTrue(result.isSuccessful());
        assertEquals("EMPTY", result.getResponseCode());
        assertEquals("no record within 300 ms (poll.timeout.ms)", result.getResponseMessage());
        assertEquals(1, result.getSampleCount(), "JMeter divides by the sample count");
        assertFalse(result.isStopThread());

        assertTrue(poll(null, 0, 1).isStopThread(), "stop_thread = 1: the thread's partitions are drained");
    }

    @Test
    void recordsWithEndToEndLatency() {
        ConsumerSampleResult result = poll(null, 3, 0);

        assertTrue(result.isSuccessful());
        assertEquals("OK", result.getResponseCode());
        assertEquals("3 records, end-to-end latency avg 2.50 ms, max 4.00 ms, last at partition 1, offset 41",
                result.getResponseMessage());
        assertEquals(3, result.getSampleCount());
        assertEquals(3, result.getLatency(), "2.5 ms mean end-to-end, rounded");
        assertEquals(300, result.getBytesAsLong());
    }

    @Test
    void thePollThatEndedARebalancePauseSaysSoAtTheEndOfItsMessage() {
        long[] out = counters(3, 0);
        out[ResultLayout.Consumer.REBALANCE_ENDED] = 2;
        out[ResultLayout.Consumer.REBALANCE_PAUSE_MICROS] = 845_400;
        ConsumerSampleResult result = new ConsumerSampleResult();
        result.setSampleLabel("kafka-consume");
        result.describePoll(START, null, out, 300);

        assertEquals("3 records, end-to-end latency avg 2.50 ms, max 4.00 ms, last at partition 1, offset 41; "
                + "after rebalance #2: paused 845 ms", result.getResponseMessage());
        assertEquals("kafka-consume", result.getSampleLabel(), "the label stays the element's");

        long[] empty = counters(0, 0);
        empty[ResultLayout.Consumer.REBALANCE_ENDED] = 3;
        empty[ResultLayout.Consumer.REBALANCE_PAUSE_MICROS] = 0;
        ConsumerSampleResult nothing = new ConsumerSampleResult();
        nothing.describePoll(START, null, empty, 300);
        assertEquals("no record within 300 ms (poll.timeout.ms); after rebalance #3: paused 0 ms",
                nothing.getResponseMessage());

        assertFalse(poll(null, 3, 0).getResponseMessage().contains("rebalance"), "no rebalance ended: no mark");
    }

    @Test
    void sequenceErrorKeepsTheSamplesSummaryContentMismatchCountsItself() {
        ConsumerSampleResult sequence = poll(new EngineError("SEQUENCE_ERROR", "kn.seq went from 4 to 2"), 3, 0);
        assertFalse(sequence.isSuccessful());
        assertEquals("SEQUENCE_ERROR", sequence.getResponseCode());
        assertTrue(sequence.getResponseMessage().startsWith("3 records, end-to-end latency avg"),
                sequence.getResponseMessage());
        assertTrue(sequence.getResponseMessage().endsWith("; kn.seq went from 4 to 2"), sequence.getResponseMessage());

        String mismatch = "3 of 3 records do not contain a match of check.regex 'invoice'; the first: 'order-42'";
        ConsumerSampleResult content = poll(new EngineError("CONTENT_MISMATCH", mismatch), 3, 0);
        assertEquals("CONTENT_MISMATCH", content.getResponseCode());
        assertEquals(mismatch, content.getResponseMessage());
        assertTrue(content.getResponseDataAsString().startsWith("records=3 bytes=300 "),
                content.getResponseDataAsString());
    }

    @Test
    void lagReadingThatPassed() {
        LagSampleResult result = lag(new LagReading("p0=9 p1=0(no commit)", null, null), 9, 9, 0);

        assertTrue(result.isSuccessful());
        assertTrue(result.isReading());
        assertEquals("OK", result.getResponseCode());
        assertEquals("lag 9 (growth +9, growing 0 sample(s) in a row): p0=9 p1=0(no commit)",
                result.getResponseMessage());
        assertEquals("total=9\np0=9\np1=0(no commit)", result.getResponseDataAsString());
    }

    @Test
    void anOpenTransactionIsExplainedAfterThePartitions() {
        String note = "an open transaction holds the last-stable offset of p0 at 100 while its high watermark is 150";
        LagSampleResult result = lag(new LagReading("p0=0 p1=0", note, null), 0, 0, 0);

        assertTrue(result.isSuccessful());
        assertEquals("lag 0 (growth +0, growing 0 sample(s) in a row): p0=0 p1=0; " + note,
                result.getResponseMessage());
        assertEquals("total=0\np0=0\np1=0\n" + note, result.getResponseDataAsString());
    }

    @Test
    void growingLagIsAFailedReadingAMissingGroupIsNoReading() {
        LagSampleResult growing = lag(new LagReading("p0=36", null, new EngineError("LAG_GROWING",
                "the lag grew in each of the last 2 samples: the consumers are not keeping up")), 36, 9, 2);
        assertFalse(growing.isSuccessful());
        assertTrue(growing.isReading());
        assertEquals("LAG_GROWING", growing.getResponseCode());
        assertEquals("the lag grew in each of the last 2 samples: the consumers are not keeping up; "
                + "lag 36 (growth +9, growing 2 sample(s) in a row): p0=36", growing.getResponseMessage());

        LagSampleResult missing = lag(new LagReading("", null, new EngineError("GROUP_NOT_FOUND", "no group 'g'")),
                0, 0, 0);
        assertFalse(missing.isSuccessful());
        assertFalse(missing.isReading());
        assertEquals("no group 'g'", missing.getResponseMessage());
        assertEquals("total=0\n\nGROUP_NOT_FOUND: no group 'g'", missing.getResponseDataAsString());
    }

    private static ConsumerSampleResult poll(EngineError error, long records, long stopThread) {
        ConsumerSampleResult result = new ConsumerSampleResult();
        result.describePoll(START, error, counters(records, stopThread), 300);
        return result;
    }

    private static long[] counters(long records, long stopThread) {
        long[] out = new long[ResultLayout.Consumer.OUT_LENGTH];
        out[ResultLayout.Consumer.RECORDS] = records;
        out[ResultLayout.Consumer.BYTES] = 100 * records;
        out[ResultLayout.Consumer.ELAPSED_MICROS] = 1_200;
        out[ResultLayout.Consumer.E2E_MEAN_MICROS] = records == 0 ? -1 : 2_500;
        out[ResultLayout.Consumer.E2E_MAX_MICROS] = records == 0 ? -1 : 4_000;
        out[ResultLayout.Consumer.PARTITION] = records == 0 ? -1 : 1;
        out[ResultLayout.Consumer.OFFSET] = records == 0 ? -1 : 41;
        out[ResultLayout.Consumer.STOP_THREAD] = stopThread;
        return out;
    }

    private static LagSampleResult lag(LagReading reading, long total, long growth, long growingWindows) {
        long[] out = new long[ResultLayout.Lag.OUT_LENGTH];
        out[ResultLayout.Lag.TOTAL_LAG] = total;
        out[ResultLayout.Lag.GROWTH] = growth;
        out[ResultLayout.Lag.GROWING_WINDOWS] = growingWindows;
        out[ResultLayout.Lag.OK] = reading.error() == null ? 1 : 0;
        LagSampleResult result = new LagSampleResult();
        result.describeLag(START, reading, out);
        return result;
    }
}
