package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** How one native send's outcome reads in JMeter's listeners. The counters are made up: no native code involved. */
class KafkaSampleResultTest {

    private static final long START = 1_700_000_000_000L;

    @BeforeAll
    static void initJMeter() {
        TestJMeter.init();
    }

    @Test
    void oneAckedMessage() {
        KafkaSampleResult result = describe(null, 1, 1, 0, 2_600, 1024, 3, 12345);

        assertTrue(result.isSuccessful());
        assertEquals("OK", result.getResponseCode());
        assertEquals("acked: partition 3, offset 12345", result.getResponseMessage());
        assertEquals("partition=3 offset=12345", result.getResponseDataAsString());
        assertEquals(START, result.getStartTime());
        assertEquals(3, result.getTime(), "2.6 ms, rounded");
        assertEquals(3, result.getLatency());
        assertEquals(1024, result.getSentBytes());
        assertEquals(1, result.getSampleCount());
        assertEquals(0, result.getErrorCount());
    }

    @Test
    void batchWithSomeFailuresCountsEveryFailedMessage() {
        KafkaSampleResult result = describe(new EngineError("MSG_TIMED_OUT", "Local: Message timed out"), 100, 97, 3,
                3_000_400, 102_400, 1, 99);

        assertFalse(result.isSuccessful());
        assertEquals("MSG_TIMED_OUT", result.getResponseCode());
        assertEquals("3 of 100 failed: MSG_TIMED_OUT: Local: Message timed out", result.getResponseMessage());
        assertEquals(100, result.getSampleCount());
        assertEquals(3, result.getErrorCount());
        assertEquals(3000, result.getTime());
    }

    @Test
    void singleFailureShowsTheEngineMessage() {
        KafkaSampleResult result = describe(new EngineError("MSG_SIZE_TOO_LARGE", "Broker: Message size too large"),
                1, 0, 1, 0, 0, -1, -1);

        assertEquals("MSG_SIZE_TOO_LARGE", result.getResponseCode());
        assertEquals("Broker: Message size too large", result.getResponseMessage());
        assertEquals("partition=-1 offset=-1\nMSG_SIZE_TOO_LARGE: Broker: Message size too large",
                result.getResponseDataAsString());
        assertEquals(1, result.getErrorCount());
    }

    @Test
    void nothingSentStillCountsOneFailedSample() {
        KafkaSampleResult result = describe(new EngineError("INTERRUPTED", "stopped"), 0, 0, 0, 0, 0, -1, -1);

        assertEquals(1, result.getSampleCount(), "JMeter divides by the sample count");
        assertEquals(1, result.getErrorCount());
    }

    @Test
    void failedSetupIsStampedNow() {
        KafkaSampleResult result = new KafkaSampleResult();
        long before = System.currentTimeMillis();

        result.fail(new EngineError("CONFIG_ERROR", "acks: 'banana' is not valid; use one of all, -1, 0, 1"));

        assertFalse(result.isSuccessful());
        assertEquals("CONFIG_ERROR", result.getResponseCode());
        assertEquals("acks: 'banana' is not valid; use one of all, -1, 0, 1", result.getResponseMessage());
        assertTrue(result.getStartTime() >= before);
        assertEquals(1, result.getErrorCount());
    }

    private static KafkaSampleResult describe(EngineError error, long sent, long acked, long failed, long micros,
                                              long bytes, long partition, long offset) {
        long[] out = new long[ResultLayout.Producer.OUT_LENGTH];
        long[] filled = {sent, acked, failed, micros, bytes, partition, offset};
        System.arraycopy(filled, 0, out, 0, filled.length);
        KafkaSampleResult result = new KafkaSampleResult();
        KafkaProducerSampler.describeSend(result, START, error, out);
        return result;
    }
}
