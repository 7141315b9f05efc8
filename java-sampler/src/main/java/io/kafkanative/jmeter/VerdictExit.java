package io.kafkanative.jmeter;

import java.util.function.IntSupplier;

import org.apache.jmeter.JMeter;
import org.apache.jmeter.threads.JMeterContextService;
import org.apache.jmeter.util.JMeterUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the verdict after JMeter's own end of test and gives a stock {@code jmeter -n} its exit code.
 *
 * <p>How JMeter 5.4.3 to 5.6.3 end a local non-GUI run: the engine's thread ({@code StandardJMeterEngine}, a pool
 * thread in 5.6) calls {@code testEnded()} on every TestStateListener in tree order: the Java Request samplers (their
 * teardownTest, where our hook runs), then the {@code -l} ResultCollector (flushes and closes the JTL) and
 * {@code ListenToTest} (generates the {@code -e -o} dashboard, prints "... end of run"); then it calls
 * {@code JMeterContextService.endTest()}, which zeroes the test's start time. Nobody calls System.exit: the JVM ends
 * with status 0 when the last non-daemon thread does, whatever the results.
 *
 * <p>So the hook starts a non-daemon thread that waits until the engine's thread has ended or the start time is 0
 * (all listeners done: the JTL is complete), judges, and then, only in {@code jmeter -n} ({@link JMeter#isNonGUI()};
 * not in the GUI nor in a jmeter-server engine, which must keep serving) and only when the verdict failed, calls
 * {@code System.exit(code)}; JMeter's shutdown hooks still run. A passing verdict lets the JVM end by itself (0).
 *
 * <p>With {@code jmeterengine.force.system.exit=true} JMeter calls System.exit(0) itself right after its listeners,
 * before this thread could act. The verdict is then judged in a JVM shutdown hook, which runs after that call, when
 * every listener has ended (every summary is written, the JTL closed); when it failed, the hook ends the JVM with
 * its code through {@code Runtime.halt} (System.exit cannot be called from a shutdown hook), after flushing stdout.
 */
final class VerdictExit {

    static final String FORCE_EXIT_PROPERTY = "jmeterengine.force.system.exit";
    private static final long POLL_MS = 20;
    private static final Logger LOG = LoggerFactory.getLogger(VerdictExit.class);

    private VerdictExit() {
    }

    /** Runs judge (which returns the exit code) once JMeter's end of test is over; see the class comment. */
    static void afterJMeterEnds(IntSupplier judge) {
        Thread endingThread = Thread.currentThread();
        if (JMeterUtils.getPropDefault(FORCE_EXIT_PROPERTY, false) && JMeter.isNonGUI()) {
            // Judged at the sampler's teardown, the run would miss the summaries other samplers write after it.
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                int code = judgeSafely(judge);
                if (code != 0) {
                    LOG.info("kafka.verdict failed: JMeter exits with code {} ({}=true)", code, FORCE_EXIT_PROPERTY);
                    System.out.flush();
                    Runtime.getRuntime().halt(code); // NOSONAR the only way to set the code from a shutdown hook
                }
            }, "kafka-verdict"));
            return;
        }
        Thread waiter = new Thread(() -> {
            waitForEndOfTest(endingThread);
            int code = judgeSafely(judge);
            if (code != 0 && JMeter.isNonGUI()) {
                LOG.info("kafka.verdict failed: JMeter exits with code {}", code);
                System.exit(code); // NOSONAR the documented purpose of this class
            }
        }, "kafka-verdict");
        waiter.setDaemon(false); // keeps the JVM alive until the verdict is out
        waiter.start();
    }

    /** Waits until the thread running the listeners' testEnded has ended, or JMeter marked the test ended. */
    static void waitForEndOfTest(Thread endingThread) {
        try {
            while (endingThread.isAlive() && JMeterContextService.getTestStartTime() != 0) {
                Thread.sleep(POLL_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A verdict that cannot be judged (engine error) fails when one was asked for: CI must not pass on a broken gate. */
    private static int judgeSafely(IntSupplier judge) {
        try {
            return judge.getAsInt();
        } catch (RuntimeException | LinkageError e) {
            boolean asked = Verdict.asked();
            String message = (asked ? "verdict: FAIL: " : "") + "the end-of-test verdict could not be judged: " + e;
            System.out.println(message);
            LOG.error(message);
            return asked ? Verdict.FAILED_EXIT_CODE : 0;
        }
    }
}
