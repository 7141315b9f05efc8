package io.kafkanative.jmeter;

import org.apache.jmeter.util.JMeterUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end of a test as a whole, for every sampler of ours: {@code kafka.verdict} (pass/fail criteria),
 * {@code kafka.verdict.baseline} (a previous summary to compare with), {@code kafka.verdict.junit} (JUnit XML report)
 * and the load generator's health ({@link GeneratorHealth}).
 *
 * <p>Two hooks in {@link AbstractNativeSampler}: {@link #atTestStart} in setup (checks the criteria before any load,
 * starts watching the generator; once per test) and {@link #atTestEnd} in teardown. The judgement itself runs once,
 * after JMeter's own end of test ({@link VerdictExit}), when every sampler has written its summary.
 */
final class Verdict {

    static final String SPEC_PROPERTY = "kafka.verdict";
    static final String BASELINE_PROPERTY = "kafka.verdict.baseline";
    static final String JUNIT_PROPERTY = "kafka.verdict.junit";
    /** Exit code of jmeter -n when the verdict failed; the engine's verdict::FAILED_EXIT_CODE. */
    static final int FAILED_EXIT_CODE = 3;

    private static final Logger LOG = LoggerFactory.getLogger(Verdict.class);

    // Guarded by Verdict.class. health is set from the first setupTest of a test to its judgement.
    private static GeneratorHealth health;
    private static boolean judgementScheduled;

    private Verdict() {
    }

    /**
     * Called by every sampler's setupTest once the engine is loaded: starts the generator's health watch (first call
     * of a test) and refuses an invalid {@code kafka.verdict} before any load with {@link EngineException}
     * {@code CONFIG_ERROR} (the samplers' setup error).
     */
    static synchronized void atTestStart() {
        if (health == null) {
            health = GeneratorHealth.start();
            judgementScheduled = false;
        }
        String error = NativeVerdict.check(property(SPEC_PROPERTY));
        if (error != null) {
            throw new EngineException("CONFIG_ERROR", error);
        }
    }

    /** Called by every sampler's teardownTest: the first call schedules the judgement after JMeter's end of test. */
    static synchronized void atTestEnd() {
        if (judgementScheduled || !NativeLibrary.isLoaded()) {
            return;
        }
        judgementScheduled = true;
        VerdictExit.afterJMeterEnds(Verdict::judge);
    }

    /** Prints the generator's warning and the verdict (stdout and jmeter.log); returns the exit code. */
    static int judge() {
        GeneratorHealth watched;
        synchronized (Verdict.class) {
            watched = health;
            health = null;
            judgementScheduled = false;
        }
        GeneratorHealth.Report generator = watched == null ? null : watched.stop();
        if (generator != null && generator.warning() != null) {
            System.out.println("WARNING " + generator.warning());
            LOG.warn(generator.warning());
        }
        long[] out = new long[NativeVerdict.OUT_LENGTH];
        String report = NativeVerdict.judge(property(SPEC_PROPERTY), property(BASELINE_PROPERTY),
                property(JUNIT_PROPERTY), generator == null ? null : generator.json(), out);
        EngineLogs.printReport(report, LOG);
        return (int) out[NativeVerdict.EXIT_CODE];
    }

    private static String property(String name) {
        String value = JMeterUtils.getPropDefault(name, "");
        return value == null || value.isBlank() ? null : value.trim();
    }
}
