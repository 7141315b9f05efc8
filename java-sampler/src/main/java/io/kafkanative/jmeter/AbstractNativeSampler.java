package io.kafkanative.jmeter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import java.util.function.UnaryOperator;

import org.apache.jmeter.config.Arguments;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerClient;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerContext;
import org.apache.jmeter.testelement.AbstractTestElement;
import org.apache.jmeter.testelement.ThreadListener;
import org.apache.jmeter.threads.JMeterContextService;
import org.apache.jmeter.threads.JMeterThread;
import org.apache.jmeter.util.JMeterUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every sampler of the engine shares, whatever JMeter element drives it: one engine handle per JMeter thread,
 * opened by {@link #setup}, used by {@link #sample} (one native call per sample), woken by {@link #interrupt} and
 * closed by {@link #teardown}.
 *
 * <p>These four methods know nothing of JMeter's Java Request API: {@link #setup} takes the element's label and
 * the engine's configuration as [name0, value0, name1, value1, ...], {@link #sample} the label and the producer's
 * per-sample value. The Java Request methods ({@code setupTest}, {@code runTest}, {@code teardownTest}) adapt a
 * {@code JavaSamplerContext} to them for the Java Request classes ({@link KafkaProducerSampler},
 * {@link KafkaConsumerSampler}, {@link KafkaLagSampler}); another element (a TestBean) can hold one instance per
 * thread and call the four methods with its own properties.
 *
 * <p>Shared here: the handle and its two locks, the setup failure turned into one clear failed sample that stops
 * the test (one per kind and test: the other threads whose setup fails too end without a sample or a log line),
 * the CLOSED result after teardown, the engine's log lines forwarded to JMeter's log, the previous run's summary
 * file removed at test start (once the report paths were checked), and the count of open handles per kind, whose drop to 0 at the end of the test prints
 * the kind's end-of-test report (also from a JVM shutdown hook when JMeter is terminated mid-test). A handle may
 * close earlier, when its JMeter thread ends ({@link #threadEnded}: a consumer then leaves its group); its totals
 * are kept for that report.
 * A subclass describes its kind ({@link Kind}: open, interrupt, report natives) and makes the calls that need
 * its settings: {@link #call} and {@link #close}.
 *
 * @param <R> the kind's sample result
 */
public abstract class AbstractNativeSampler<R extends KafkaSampleResult> implements JavaSamplerClient {

    /**
     * What the samplers of one kind share in a JVM: their natives that need no instance state, their name in
     * messages, their log, their end-of-test report and the number of their handles open. One per subclass, in a
     * static field.
     *
     * @param <R> the kind's sample result
     */
    protected static final class Kind<R extends KafkaSampleResult> {

        final String noun;
        final Logger log;
        final List<ProducerParameters.Parameter> parameters;
        final int outLength;
        final int logLinesWaiting;
        final ToLongFunction<String[]> open;
        final Supplier<R> newResult;
        // Set once, by the subclass's static initializer (whose completion publishes them to every thread).
        String summaryProperty;
        String defaultSummaryFile;
        UnaryOperator<String> report;
        LongConsumer interrupt;
        /** A Java Request's handle closes when its JMeter thread ends (the consumer: it leaves its group then). */
        boolean closesAtThreadEnd;
        /** Handles opened and not yet closed in this JVM: the kind's test is over when it drops back to 0. */
        final AtomicInteger openHandles = new AtomicInteger();
        /** The samplers whose handle is open, for the shutdown hook. */
        final Set<AbstractNativeSampler<?>> openSamplers = ConcurrentHashMap.newKeySet();
        // Guarded by this: the JMeter test (its start time) whose start was seen, and whether a setup failure of
        // that test was already reported.
        private long testSeen;
        private boolean failureReported;
        /** The previous run's summary is still to be removed in this test (the first setup past the checks does it). */
        private boolean previousSummaryPending;
        // Guarded by this: JMeter has ended the test (its end-of-test close began), and the last handle open closed
        // at its thread's end before that, its report held back until the test ends (another thread may open one).
        private boolean testEnding;
        private boolean reportPending;

        /**
         * @param noun            what a handle is, in messages ("producer", "consumer", "lag monitor")
         * @param owner           the sampler class, whose logger is used
         * @param parameters      the Java Request's parameters and defaults, in the order the GUI lists them
         * @param outLength       the length of the kind's result array (its OUT_LENGTH)
         * @param logLinesWaiting the index of its log_lines_waiting slot
         * @param open            opens a handle; throws {@link EngineException} on a bad configuration or check
         * @param newResult       a new, empty result of the kind
         */
        Kind(String noun, Class<?> owner, List<ProducerParameters.Parameter> parameters, int outLength,
                int logLinesWaiting, ToLongFunction<String[]> open, Supplier<R> newResult) {
            this.noun = noun;
            this.log = LoggerFactory.getLogger(owner);
            this.parameters = parameters;
            this.outLength = outLength;
            this.logLinesWaiting = logLinesWaiting;
            this.open = open;
            this.newResult = newResult;
        }

        /**
         * The kind's end-of-test report, once the last handle has closed: {@code report} returns perf-test style
         * lines (null if nothing was sampled) and writes the JSON summary to the file named by the JMeter property
         * {@code summaryProperty} (default {@code defaultSummaryFile}).
         */
        Kind<R> reporting(String summaryProperty, String defaultSummaryFile, UnaryOperator<String> report) {
            this.summaryProperty = summaryProperty;
            this.defaultSummaryFile = defaultSummaryFile;
            this.report = report;
            return this;
        }

        /**
         * Called by every setup of a JMeter test (testStart: JMeter's start time of the test, 0 outside one): the first
         * of the test starts the test afresh for the kind (its setup failure not yet reported).
         */
        synchronized void atTestStart(long testStart) {
            if (testStart == 0 || testStart == testSeen) {
                return;
            }
            testSeen = testStart;
            failureReported = false;
            previousSummaryPending = summaryProperty != null;
            testEnding = false;
            reportPending = false;
        }

        /**
         * A handle has closed (its statistics merged into the test's totals); returns whether the kind's report is
         * due now: the last open handle closed at test end, or at its thread's end once the test is ending. The
         * last one to close at its thread's end before the test ends holds the report back for {@link #atTestEnd}:
         * a thread starting later (a ramp-up, a later thread group) opens another, and one report covers them all.
         */
        synchronized boolean closed(boolean atTestEnd) {
            if (openHandles.decrementAndGet() != 0) {
                return false;
            }
            if (atTestEnd || testEnding) {
                reportPending = false;
                return true;
            }
            reportPending = true;
            return false;
        }

        /**
         * JMeter's end of test, once the handles open then have begun to close: returns whether the report that
         * {@link #closed} held back is due now. A close still running on a thread that is ending reports when done.
         */
        synchronized boolean atTestEnd() {
            testEnding = true;
            boolean due = reportPending && openHandles.get() == 0;
            reportPending = false;
            return due;
        }

        /**
         * Called by every setup once the test's report paths were checked ({@link Verdict#atTestStart}: a file at the
         * summary's path is then a summary of ours): the first of the test removes the previous run's summary, so that
         * a run whose setup fails does not leave an old success behind for a CI job to read.
         */
        synchronized void removePreviousSummary() {
            if (!previousSummaryPending) {
                return;
            }
            previousSummaryPending = false;
            String path = JMeterUtils.getPropDefault(summaryProperty, defaultSummaryFile);
            try {
                if (path != null && !path.isBlank() && Files.deleteIfExists(Path.of(path.trim()))) {
                    log.info("removed the previous run's {} summary {} ({}): this run writes its own at the end",
                            noun, path, summaryProperty);
                }
            } catch (IOException | RuntimeException e) {
                log.warn("the previous run's {} summary {} could not be removed: {}", noun, path, e.toString());
            }
        }

        /** Whether this is the test's first setup failure of the kind, the one to report. */
        synchronized boolean firstFailure(long testStart) {
            if (testStart == 0 || testStart != testSeen) {
                return true; // outside a JMeter test (a unit test): every failure is reported
            }
            boolean first = !failureReported;
            failureReported = true;
            return first;
        }

        /**
         * A Java Request's handle closes when its JMeter thread ends, not only at the end of the test (JMeter's
         * JavaSampler calls teardownTest at the end of the test only): see {@link #setupTest}.
         */
        Kind<R> closingAtThreadEnd() {
            this.closesAtThreadEnd = true;
            return this;
        }

        /** The native that wakes a call blocked on a handle (a kind whose calls are short has none). */
        Kind<R> interruptible(LongConsumer interrupt) {
            this.interrupt = interrupt;
            return this;
        }
    }

    /**
     * The response code of the one sample that says the engine does not load in this JVM (another OS or CPU, a
     * missing or broken library): the plan is fine, the machine is not a load generator.
     */
    public static final String ENGINE_UNAVAILABLE = Codes.ENGINE_UNAVAILABLE;

    private final Kind<R> kind;

    /**
     * Filled by every native call and reused, so that a sample allocates nothing on the Java side beyond its
     * SampleResult and its strings. Read by {@link #call} only, on the sampling thread.
     */
    protected final long[] out;

    // The handle is a raw pointer into the engine: using it after close would crash the JVM. It is written only
    // while holding both locks and read while holding either; close happens after it has been set to 0.
    // interrupt() needs only interruptLock, so it never waits behind a native call blocked on sendLock.
    private final Object sendLock = new Object();
    private final Object interruptLock = new Object();
    private long handle;
    /** Set when JMeter stopped the test (guarded by interruptLock): close may then skip waiting for the broker. */
    private boolean interrupted;

    private String label = "";
    private EngineError setupError;
    /**
     * The setup failed like another thread's of the same test before it: that thread's sample says why and stops
     * the test; this one ends its JMeter thread without a sample.
     */
    private boolean silent;

    /** Every kind, for the shutdown hook. */
    private static final CopyOnWriteArrayList<Kind<?>> KINDS = new CopyOnWriteArrayList<>();
    private static final AtomicBoolean HOOK_INSTALLED = new AtomicBoolean();

    /**
     * Kept cheap: JMeter's GUI instantiates every candidate class; the engine is loaded only in {@link #setup}.
     *
     * @param kind the kind's shared state (a static of the subclass)
     */
    protected AbstractNativeSampler(Kind<R> kind) {
        this.kind = kind;
        this.out = new long[kind.outLength];
        KINDS.addIfAbsent(kind);
    }

    /** Java Request: the parameters the GUI lists, with their defaults. */
    @Override
    public final Arguments getDefaultParameters() {
        return ProducerParameters.arguments(kind.parameters);
    }

    /**
     * Java Request: opens the handle with the element's parameters (see {@link #setup}). For a kind that closes at
     * its thread's end, a {@link ThreadEnd} joins the calling JMeter thread's own copy of the plan, so that JMeter
     * calls it when the thread ends, as it calls the TestBean elements that are ThreadListeners.
     */
    @Override
    public final void setupTest(JavaSamplerContext context) {
        setup(ProducerParameters.label(context), ProducerParameters.engineConfig(context));
        JMeterThread thread = JMeterContextService.getContext().getThread();
        if (kind.closesAtThreadEnd && thread != null && thread.getTestTree() != null) {
            thread.getTestTree().add(new ThreadEnd(this));
        }
    }

    /**
     * Closes a Java Request's handle when its JMeter thread ends: JMeter calls every ThreadListener of the thread's
     * copy of the plan then, on that thread, after its last sample. A test element, as every node of a plan is.
     */
    static final class ThreadEnd extends AbstractTestElement implements ThreadListener {

        private static final long serialVersionUID = 1L;
        private final transient AbstractNativeSampler<?> sampler;

        ThreadEnd(AbstractNativeSampler<?> sampler) {
            this.sampler = sampler;
        }

        @Override
        public void threadStarted() {
            // added once the thread runs: never called
        }

        @Override
        public void threadFinished() {
            if (sampler != null) {
                sampler.threadEnded();
            }
        }
    }

    /** Java Request: one sample (see {@link #sample}); the label is read per sample, as JMeter may change it. */
    @Override
    public final R runTest(JavaSamplerContext context) {
        return sample(ProducerParameters.label(context), readSample(context));
    }

    /** Java Request: closes the handle (see {@link #teardown}). */
    @Override
    public final void teardownTest(JavaSamplerContext context) {
        teardown();
    }

    /**
     * Reads what a kind takes with each sample from the Java Request's parameters (the producer: value, key and
     * headers) and returns the value to pass to {@link #sample}; null for the kinds that take nothing.
     */
    protected String readSample(JavaSamplerContext context) {
        return null;
    }

    /** Reads the few settings Java acts on itself from the engine's configuration; called first by setup. */
    protected void configure(String[] config) {
    }

    /**
     * The sample's one native call on an open handle, then the result described from {@link #out} and the
     * returned failure. Called holding the send lock.
     *
     * @param start when the call is made (epoch millis)
     * @param value the per-sample value {@link #sample} was given (the producer's value.mode=jmeter; else null)
     */
    protected abstract void call(long handle, long start, String value, R result);

    /**
     * Frees the handle (exactly once per handle), after the sampling thread's last call.
     *
     * @param interrupted whether JMeter stopped the test: do not wait for a broker that may never answer
     * @return a one-line report for JMeter's log, or null
     */
    protected abstract String close(long handle, boolean interrupted);

    /**
     * Opens the handle for the calling JMeter thread. A failure (bad configuration, failed pre-flight check, an
     * engine that does not load) is not thrown: JMeter would only log it and sample anyway, so it is kept and
     * every {@link #sample} reports it.
     *
     * @param label  the element's name, for the log
     * @param config the engine's configuration, [name0, value0, name1, value1, ...]
     */
    public final void setup(String label, String[] config) {
        setup(label, () -> config);
    }

    /**
     * As {@link #setup(String, String[])}, the configuration being built first: a mistake found while building it
     * (e.g. a Kafka Connection name that the plan does not have) is an {@link EngineException} reported the same way.
     */
    public final void setup(String label, Supplier<String[]> configuration) {
        this.label = label;
        long testStart = JMeterContextService.getTestStartTime();
        kind.atTestStart(testStart);
        try {
            String[] config = configuration.get();
            configure(config);
            NativeLibrary.load();
            // kafka.verdict, report paths and the baseline checked before any load and before any file is removed.
            Verdict.atTestStart(kind.noun, label, config);
            kind.removePreviousSummary();
            long opened = kind.open.applyAsLong(config);
            synchronized (sendLock) {
                synchronized (interruptLock) {
                    handle = opened;
                }
            }
            synchronized (kind) {
                kind.openHandles.incrementAndGet();
            }
            kind.openSamplers.add(this);
            installShutdownHook();
        } catch (EngineException e) {
            setupError = e.toError();
        } catch (LinkageError e) {
            // The engine does not load: a laptop building plans (macOS, Windows, another CPU) or a broken install.
            setupError = new EngineError(ENGINE_UNAVAILABLE, "the Kafka engine is built for " + NativeLibrary.PLATFORM
                    + " and did not load in this JVM (" + (e.getMessage() != null ? e.getMessage() : e.toString())
                    + "); plans can be built and edited here, run them on a Linux x86_64 load generator");
        } catch (RuntimeException e) {
            setupError = new EngineError(Codes.CONFIG_ERROR, e.getMessage() != null ? e.getMessage() : e.toString());
        }
        if (setupError != null) {
            removePreviousSummaryAfterFailure();
        }
        if (setupError != null && !kind.firstFailure(testStart) && inJMeterThread()) {
            // Another thread of this test already reported a setup failure and stopped the test: 200 threads on a dead
            // broker give one failed sample and one log line, not 200 of each.
            silent = true;
            kind.log.debug("{}: {}: {} (reported once, by the first thread that met it)", label, setupError.code(),
                    setupError.message());
            if (NativeLibrary.isLoaded()) {
                EngineLogs.demote(NativeEngine.drainLogs(), kind.log); // librdkafka's lines about the same failure
            }
            return;
        }
        if (setupError != null) {
            kind.log.error("{}: {}: {}", label, setupError.code(), setupError.message());
            // librdkafka's own account of the failure, at WARN: the line above is the one ERROR line of its cause.
            if (NativeLibrary.isLoaded()) {
                EngineLogs.forward(NativeEngine.drainLogs(), kind.log, true);
            }
            return;
        }
        // The assignment, warnings about the settings.
        drainLogs();
    }

    /**
     * A setup that failed before the test's checks (a bad configuration) still removes the previous run's summary, so
     * that no old success is left for CI to read: once the checks pass (they run here if they had not), never before.
     */
    private void removePreviousSummaryAfterFailure() {
        try {
            NativeLibrary.load();
            Verdict.atTestStart(kind.noun, label, new String[0]);
            kind.removePreviousSummary();
        } catch (EngineException | LinkageError e) {
            // Refused, or no engine here: the summary is not removed; the failure reported is the setup's own.
        }
    }

    private static boolean inJMeterThread() {
        return JMeterContextService.getContext().getThread() != null;
    }

    /**
     * One sample: one native call on the thread's handle. After a failed setup, that failure, flagged to stop the
     * test: every further sample would fail the same way (bad configuration, broker unreachable, topic missing),
     * and one clear message is better than a flood of identical failures. A thread whose setup failed after another
     * thread's of the same test had already reported it returns null (no sample) and ends its JMeter thread.
     *
     * @param label the sample's label (the element's name, evaluated for this sample)
     * @param value the producer's value for value.mode=jmeter; null otherwise
     */
    public final R sample(String label, String value) {
        R result = kind.newResult.get();
        result.setSampleLabel(label);
        if (silent) {
            JMeterThread thread = JMeterContextService.getContext().getThread();
            if (thread != null) {
                thread.stop();
            }
            return null;
        }
        if (setupError != null) {
            result.fail(setupError);
            result.setStopTest(true);
            return result;
        }
        synchronized (sendLock) {
            if (handle == 0) {
                result.fail(new EngineError(Codes.CLOSED, "the " + kind.noun + " is already closed (the test is ending)"));
                return result;
            }
            try {
                call(handle, System.currentTimeMillis(), value, result);
            } catch (EngineException e) {
                result.fail(e.toError()); // CLOSED, or INTERNAL_ERROR: a fault the engine caught
                return result;
            }
        }
        if (out[kind.logLinesWaiting] > 0) {
            drainLogs();
        }
        return result;
    }

    /**
     * JMeter's test stop (for the kinds that are {@code Interruptible}): wakes a native call blocked on this
     * thread's handle. Harmless before setup or after close.
     */
    public boolean interrupt() {
        synchronized (interruptLock) {
            interrupted = true;
            if (handle != 0 && kind.interrupt != null) {
                kind.interrupt.accept(handle);
            }
        }
        return true;
    }

    /**
     * Closes the handle; JMeter calls it at test end on a thread other than the sampling one, so it waits for the
     * current native call to finish. A second call, one after {@link #threadEnded} or after a failed setup does
     * nothing. Closing the kind's last open handle prints the kind's end-of-test report.
     */
    public final void teardown() {
        Verdict.atTestEnd(); // judged once JMeter has ended the test (JTL complete)
        closeHandle(true);
        if (kind.atTestEnd()) {
            printReport(kind); // the kind's handles had all closed at their threads' end
        }
    }

    /**
     * Closes the handle when its JMeter thread ends, before the test does: a consumer leaves its group then, and its
     * totals are merged into the test's, which the end-of-test report covers. Idempotent with {@link #teardown}
     * (whichever comes first closes the handle). The report waits for the end of the test ({@link #atTestEnd}).
     */
    public final void threadEnded() {
        closeHandle(false);
    }

    /**
     * JMeter's end of test, after {@link #teardown} of the handles still open: prints the report of each kind whose
     * last handle closed at its thread's end. Called once per test by the TestBean elements.
     */
    static void atTestEnd() {
        for (Kind<?> k : KINDS) {
            if (k.atTestEnd()) {
                printReport(k);
            }
        }
    }

    /**
     * Closes the handle (see {@link #teardown}), the verdict left out: the shutdown hook's part of a teardown.
     *
     * @param atTestEnd JMeter is ending the test (else the handle's thread is ending): see {@link Kind#closed}
     */
    private void closeHandle(boolean atTestEnd) {
        long closing;
        boolean stopped;
        synchronized (sendLock) {
            synchronized (interruptLock) {
                closing = handle;
                handle = 0;
                stopped = interrupted;
            }
        }
        if (closing == 0) {
            return; // never opened, or already closed
        }
        try {
            String line = close(closing, stopped);
            if (line != null) {
                kind.log.info("{}: {}", label, line);
            }
        } catch (RuntimeException e) {
            kind.log.error("{}: closing the Kafka {} failed: {}", label, kind.noun, e.getMessage());
        }
        drainLogs();
        kind.openSamplers.remove(this);
        if (kind.closed(atTestEnd)) {
            printReport(kind);
        }
    }

    /**
     * Once per JVM: when JMeter is terminated during a test (SIGTERM, Ctrl-C), the handles still open are stopped
     * and closed without waiting, so that the engine's report (perf line, summary JSON saying the test was stopped,
     * audit skipped with a note) is still written. JMeter's own hook flushes the JTL meanwhile. Outside a test, or
     * after a normal end (every handle closed), it does nothing.
     */
    private static void installShutdownHook() {
        if (!HOOK_INSTALLED.compareAndSet(false, true)) {
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (JMeterContextService.getTestStartTime() == 0) {
                return;
            }
            for (Kind<?> k : KINDS) {
                for (AbstractNativeSampler<?> sampler : k.openSamplers) {
                    sampler.interrupt(); // wakes a send waiting for acks, so that close need not wait for it
                    sampler.closeHandle(true);
                }
            }
            atTestEnd(); // every handle had closed at its thread's end: the report they held back
        }, "kafka-native-shutdown"));
    }

    /** The kind's totals over every handle of the test, on stdout and in jmeter.log. */
    private static void printReport(Kind<?> kind) {
        if (kind.report == null) {
            return;
        }
        String path = JMeterUtils.getPropDefault(kind.summaryProperty, kind.defaultSummaryFile);
        try {
            EngineLogs.printReport(kind.report.apply(path), kind.log);
        } catch (RuntimeException e) {
            kind.log.error("the Kafka {} summary could not be written to {}: {}", kind.noun, path, e.getMessage());
        }
    }

    /** Moves the engine's queued log lines (every handle's) into JMeter's log, once the engine is loaded. */
    private void drainLogs() {
        if (NativeLibrary.isLoaded()) {
            EngineLogs.forward(NativeEngine.drainLogs(), kind.log);
        }
    }
}
