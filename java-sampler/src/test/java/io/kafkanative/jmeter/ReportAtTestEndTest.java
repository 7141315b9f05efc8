package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * When a kind's end-of-test report is due, now that a consumer closes when its JMeter thread ends: once, at the end
 * of the test, covering every handle, however the handles closed (no engine needed: the kind's books only).
 */
class ReportAtTestEndTest {

    private AbstractNativeSampler.Kind<KafkaSampleResult> kind;
    private long test = 1_000;

    @BeforeEach
    void newTest() {
        kind = new AbstractNativeSampler.Kind<>("consumer", ReportAtTestEndTest.class, List.of(), 1, 0, c -> 1L,
                () -> null);
        kind.atTestStart(++test);
    }

    private void open(int handles) {
        kind.openHandles.addAndGet(handles);
    }

    @Test
    void handlesClosedAtTestEndReportWhenTheLastCloses() {
        open(2);
        assertFalse(kind.closed(true));
        assertTrue(kind.closed(true));
        assertFalse(kind.atTestEnd(), "reported already");
    }

    @Test
    void handlesClosedAtTheirThreadsEndReportOnceAtTestEnd() {
        open(2);
        assertFalse(kind.closed(false));
        assertFalse(kind.closed(false), "a thread starting later may open another handle");
        assertTrue(kind.atTestEnd());
        assertFalse(kind.atTestEnd(), "one report");
    }

    @Test
    void aHandleOpenedAfterTheOthersClosedIsInTheSameReport() {
        open(1);
        assertFalse(kind.closed(false));
        open(1); // a ramp-up's later thread, or a later thread group
        assertFalse(kind.closed(false));
        assertTrue(kind.atTestEnd());
    }

    @Test
    void aThreadStillClosingWhenTheTestEndsReportsWhenDone() {
        open(2);
        assertFalse(kind.closed(false));
        assertFalse(kind.atTestEnd(), "one handle is still closing");
        assertTrue(kind.closed(false));
    }

    @Test
    void theEndOfOneTestDoesNotReportTheNextOnesThreadEnds() {
        open(1);
        assertTrue(kind.closed(true));
        assertFalse(kind.atTestEnd());
        kind.atTestStart(++test);
        open(1);
        assertFalse(kind.closed(false), "the new test has not ended");
        assertTrue(kind.atTestEnd());
    }
}
