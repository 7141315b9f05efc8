package io.kafkanative.jmeter;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

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
 *
 * <p>The three settings also come from the plan: a Kafka Connection's Verdict fields, registered at test start
 * ({@link #fromConnection}). For each of them the JMeter property wins when both are set (a CI job overrides the
 * plan with {@code -Jkafka.verdict=...}); they are resolved once per test, at its first sampler's setup.
 */
final class Verdict {

    static final String SPEC_PROPERTY = "kafka.verdict";
    static final String BASELINE_PROPERTY = "kafka.verdict.baseline";
    static final String JUNIT_PROPERTY = "kafka.verdict.junit";
    /** Exit code of jmeter -n when the verdict failed; the engine's verdict::FAILED_EXIT_CODE. */
    static final int FAILED_EXIT_CODE = 3;

    private static final Logger LOG = LoggerFactory.getLogger(Verdict.class);

    /** The verdict settings of a plan's Kafka Connection (its Verdict group), or resolved for the test. */
    record Settings(String spec, String baseline, String junit) {
    }

    /** The Verdict fields of the plan's Kafka Connections in this JVM, by Connection name (set at test start). */
    private static final Map<String, Settings> PLAN = new ConcurrentHashMap<>();

    // Guarded by Verdict.class. health is set from the first setupTest of a test to its judgement; settings are
    // resolved at that first setupTest and kept after the judgement (VerdictExit asks whether one was asked for).
    private static GeneratorHealth health;
    private static boolean judgementScheduled;
    private static Settings settings = new Settings(null, null, null);
    /** Why the plan's verdict settings cannot be used (two Connections disagree), or null. */
    private static String planError;

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
            resolveSettings();
        }
        if (planError != null) {
            throw new EngineException(Codes.CONFIG_ERROR, planError);
        }
        String error = NativeVerdict.check(settings.spec());
        if (error != null) {
            throw new EngineException(Codes.CONFIG_ERROR, error);
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
        long[] out = new long[ResultLayout.Judgement.OUT_LENGTH];
        Settings judged;
        synchronized (Verdict.class) {
            judged = settings;
        }
        String report = NativeVerdict.judge(judged.spec(), judged.baseline(), judged.junit(),
                generator == null ? null : generator.json(), out);
        EngineLogs.printReport(report, LOG);
        return (int) out[ResultLayout.Judgement.EXIT_CODE];
    }

    /** A Kafka Connection's Verdict fields, evaluated at its test start (before any sampler's setup). */
    static void fromConnection(String connection, Settings fields) {
        PLAN.put(connection, fields);
    }

    /** At the Connection's test end: its fields no longer belong to a running test. */
    static void forgetConnection(String connection) {
        PLAN.remove(connection);
    }

    /** This test's settings, as resolved at its first sampler's setup. */
    static synchronized Settings settings() {
        return settings;
    }

    /** Why the plan's verdict settings cannot be used, or null. */
    static synchronized String planError() {
        return planError;
    }

    /** Whether the test being judged (or the last one) asked for criteria, from a property or a Connection. */
    static synchronized boolean asked() {
        return settings.spec() != null || planError != null;
    }

    /**
     * This test's settings: for each, the JMeter property when it is set, else the one value the plan's Connections
     * give. Two Connections giving different values for a setting without its property is a configuration error.
     */
    static synchronized void resolveSettings() {
        Map<String, Settings> connections = new TreeMap<>(PLAN);
        List<String> problems = new ArrayList<>();
        settings = new Settings(pick(SPEC_PROPERTY, "Verdict criteria", connections, Settings::spec, problems),
                pick(BASELINE_PROPERTY, "Verdict baseline", connections, Settings::baseline, problems),
                pick(JUNIT_PROPERTY, "Verdict JUnit file", connections, Settings::junit, problems));
        planError = problems.isEmpty() ? null : String.join("; ", problems);
    }

    /** The property when set (jmeter.log says so when it overrides a Connection's field), else the Connections'. */
    private static String pick(String property, String field, Map<String, Settings> connections,
            Function<Settings, String> value, List<String> problems) {
        Map<String, String> given = new TreeMap<>();
        connections.forEach((name, fields) -> {
            String v = blankToNull(value.apply(fields));
            if (v != null) {
                given.put(name, v);
            }
        });
        String set = blankToNull(JMeterUtils.getPropDefault(property, ""));
        if (set != null) {
            if (!given.isEmpty()) {
                LOG.info("{}: the JMeter property is used; it overrides the {} field of Kafka Connection {}", property,
                        field, given.keySet());
            }
            return set;
        }
        if (new HashSet<>(given.values()).size() > 1) {
            problems.add(property + ": the Kafka Connections " + given.keySet() + " have different " + field
                    + " fields; fill it in one Connection only, or set -J" + property + " (the property wins)");
            return null;
        }
        return given.values().stream().findFirst().orElse(null);
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }
}
