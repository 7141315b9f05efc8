package io.kafkanative.jmeter;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.jmeter.services.FileServer;
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

    // Guarded by Verdict.class. prepared is set from the first setupTest of a test to its judgement, and health then
    // too unless the test was refused (its limits may be the reason); settings are
    // resolved at that first setupTest and kept after the judgement (VerdictExit asks whether one was asked for).
    private static boolean prepared;
    private static GeneratorHealth health;
    private static boolean judgementScheduled;
    private static Settings settings = new Settings(null, null, null);
    /** Why the plan's verdict settings cannot be used (two Connections disagree), or null. */
    private static String planError;
    /**
     * Why this test cannot run as set up (invalid criteria, a report path that would replace a file it should not, an
     * unreadable baseline, an invalid generator limit), found at its first setup; every setup then fails with it and
     * the judgement fails the run. Null when all is well.
     */
    private static String refused;
    /** What the test is: its samplers by kind and name, with their main settings (the summaries' test block). */
    private static final Map<String, Map<String, String>> SAMPLERS = new TreeMap<>();

    /**
     * The settings that make a test what it is, for the summaries' identity of the test: a baseline whose identity
     * differs is of another test. Only these names are read, so no secret can reach a summary.
     */
    static final Set<String> IDENTITY_SETTINGS = Set.of("topic", "policy", "acks", "retries", "enable.idempotence",
            "linger.ms", "batch.size", "compression.type", "producer.scope", "producer.pool.size",
            "messages.per.sample", "value.mode", "record.size", "key.mode", "partition", "target.rate", "audit",
            "group.id", "assignment", "commit", "max.records", "value.decode", ProducerParameters.THREAD_COUNT);
    private static final ObjectMapper JSON = new ObjectMapper();

    private Verdict() {
    }

    /**
     * Called by every sampler's setup once the engine is loaded, before any load and before any file is removed: the
     * first call of a test resolves the settings, starts the generator's health watch and checks, once, the criteria,
     * the generator's limits, the report paths and the baseline (read now); any setup of a test so refused throws
     * {@link EngineException} {@code CONFIG_ERROR} (the samplers' setup error). Every call adds its sampler to the
     * test's identity.
     *
     * @param kind   the sampler's kind ("producer", "consumer", "lag monitor")
     * @param label  the element's name
     * @param config the engine's configuration, [name0, value0, ...]
     */
    static synchronized void atTestStart(String kind, String label, String[] config) {
        if (!prepared) {
            prepared = true;
            judgementScheduled = false;
            SAMPLERS.clear();
            resolveSettings();
            refused = prepare();
            health = refused == null ? GeneratorHealth.start() : null;
        }
        identify(kind, label, config);
        if (refused != null) {
            throw new EngineException(Codes.CONFIG_ERROR, refused);
        }
    }

    /** The test's checks before any load (see {@link #atTestStart}): why it is refused, or null. */
    private static String prepare() {
        if (planError != null) {
            return planError;
        }
        String limits = GeneratorHealth.limitsError();
        if (limits != null) {
            return limits;
        }
        List<String> reports = new ArrayList<>();
        for (String[] summary : new String[][] {
            {KafkaProducerSampler.SUMMARY_FILE_PROPERTY, KafkaProducerSampler.DEFAULT_SUMMARY_FILE},
            {KafkaConsumerSampler.SUMMARY_FILE_PROPERTY, KafkaConsumerSampler.DEFAULT_SUMMARY_FILE}}) {
            reports.add(summary[0]);
            reports.add(JMeterUtils.getPropDefault(summary[0], summary[1]));
        }
        if (settings.junit() != null) {
            reports.add(JUNIT_PROPERTY);
            reports.add(settings.junit());
        }
        List<String> inputs = new ArrayList<>();
        String plan = planPath();
        if (plan != null) {
            inputs.add("the test plan (-t)");
            inputs.add(plan);
        }
        for (String[] option : new String[][] {{"-l", "--logfile", "the -l results file (JTL)"},
            {"-j", "--jmeterlogfile", "the -j JMeter log"}}) {
            for (String path : commandLineFiles(option[0], option[1])) {
                inputs.add(option[2]);
                inputs.add(path);
            }
        }
        if (settings.baseline() != null) {
            inputs.add("the baseline (" + BASELINE_PROPERTY + ")");
            inputs.add(settings.baseline());
        }
        return NativeVerdict.prepare(settings.spec(), settings.baseline(), reports.toArray(new String[0]),
                inputs.toArray(new String[0]));
    }

    /**
     * The files JMeter's command line names with an option ({@code -l out.jtl}, {@code -lout.jtl},
     * {@code --logfile out.jtl}, {@code --logfile=out.jtl}), relative ones as JMeter resolves them (the current folder),
     * from this process's arguments: JMeter keeps no property for them, and its JTL is created only with its first
     * sample, after the setups, so it cannot be told by its content. Empty where the arguments cannot be read.
     */
    static List<String> commandLineFiles(String shortOption, String longOption) {
        String[] args = ProcessHandle.current().info().arguments().orElse(new String[0]);
        List<String> files = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String file = null;
            if ((a.equals(shortOption) || a.equals(longOption)) && i + 1 < args.length) {
                file = args[++i];
            } else if (a.startsWith(longOption + "=")) {
                file = a.substring(longOption.length() + 1);
            } else if (a.startsWith(shortOption) && !a.startsWith("--") && a.length() > shortOption.length()) {
                file = a.substring(shortOption.length());
            }
            if (file != null && !file.isBlank()) {
                files.add(Path.of(System.getProperty("user.dir", ".")).resolve(file).toString());
            }
        }
        return files;
    }

    /** The running plan's file, or null when JMeter runs none from a file (a unit test). */
    private static String planPath() {
        FileServer files = FileServer.getFileServer();
        String name = files.getScriptName();
        if (name == null || name.isBlank()) {
            return null;
        }
        Path script = Path.of(name);
        return script.isAbsolute() ? script.toString() : files.getBaseDir() == null ? name
                : Path.of(files.getBaseDir()).resolve(script).toString();
    }

    /** Adds a sampler to the test's identity; the engine is told when the identity grows (once per new sampler). */
    private static void identify(String kind, String label, String[] config) {
        if (config.length == 0) {
            return; // a setup that failed before its configuration was built
        }
        Map<String, String> main = new TreeMap<>();
        for (int i = 0; i + 1 < config.length; i += 2) {
            if (IDENTITY_SETTINGS.contains(config[i]) && config[i + 1] != null && !config[i + 1].isBlank()) {
                main.put(config[i], config[i + 1].trim());
            }
        }
        if (main.equals(SAMPLERS.put(kind + " '" + label + "'", main))) {
            return;
        }
        Map<String, Object> identity = new LinkedHashMap<>();
        String plan = FileServer.getFileServer().getScriptName();
        identity.put("plan", plan == null ? null : Path.of(plan).getFileName().toString());
        identity.put("samplers", SAMPLERS);
        try {
            NativeVerdict.identify(JSON.writeValueAsString(identity));
        } catch (JsonProcessingException e) {
            LOG.warn("the test's identity could not be written for the summaries: {}", e.toString());
        }
    }

    /**
     * Called by every sampler's teardown and by the plan's Kafka elements at their test end: the first call schedules
     * the judgement after JMeter's end of test. A test in which no sampler of ours set up (a thread group of 0 threads)
     * is judged too when a verdict was asked for: nothing was measured, and the verdict must fail, not be skipped.
     */
    static synchronized void atTestEnd() {
        if (judgementScheduled) {
            return;
        }
        if (!prepared) {
            resolveSettings();
            if (settings.spec() == null) {
                return;
            }
            try {
                NativeLibrary.load();
            } catch (LinkageError e) {
                return; // no engine on this machine: the samplers' ENGINE_UNAVAILABLE said so
            }
            refused = planError;
        } else if (!NativeLibrary.isLoaded()) {
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
            prepared = false;
            judgementScheduled = false;
        }
        GeneratorHealth.Report generator = watched == null ? null : watched.stop();
        if (generator != null && generator.warning() != null) {
            System.out.println("WARNING " + generator.warning());
            LOG.warn(generator.warning());
        }
        long[] out = new long[ResultLayout.Judgement.OUT_LENGTH];
        Settings judged;
        String why;
        synchronized (Verdict.class) {
            judged = settings;
            why = refused;
            refused = null;
        }
        if (why != null) {
            // Refused at setup: nothing ran, and no report is written to paths that were refused. The engine forgets
            // the run all the same.
            NativeVerdict.judge(null, null, null, null, out);
            String line = "verdict: FAIL: the test was refused at setup: " + why + "; jmeter -n exits with code "
                    + FAILED_EXIT_CODE;
            System.out.println(line);
            LOG.error(line);
            return FAILED_EXIT_CODE;
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
        return settings.spec() != null || planError != null || refused != null;
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
