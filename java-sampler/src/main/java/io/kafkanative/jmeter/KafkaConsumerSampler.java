package io.kafkanative.jmeter;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import org.apache.jmeter.config.Arguments;
import org.apache.jmeter.protocol.java.sampler.AbstractJavaSamplerClient;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerContext;
import org.apache.jmeter.samplers.Interruptible;
import org.apache.jmeter.samplers.SampleResult;
import org.apache.jmeter.testelement.TestElement;
import org.apache.jmeter.util.JMeterUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JMeter "Java Request" that consumes Kafka records through the Rust engine.
 *
 * <p>One native consumer per JMeter thread: {@code setupTest} opens it (static assignment of the thread's share of
 * the partitions by default, so that thread counts never trigger a rebalance), every {@code runTest} is one native
 * poll of up to {@code max.records} records within {@code poll.timeout.ms}, and {@code teardownTest} closes it.
 * When the last consumer of the test closes, kafka-consumer-perf-test's columns and the end-to-end latency line
 * are printed and written to the JSON summary ({@code kafka.consumer.summary.file}).
 */
public class KafkaConsumerSampler extends AbstractJavaSamplerClient implements Interruptible {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaConsumerSampler.class);

    static final String SUMMARY_FILE_PROPERTY = "kafka.consumer.summary.file";
    static final String DEFAULT_SUMMARY_FILE = "kafka-native-consumer-summary.json";

    /** Consumers opened and not yet closed in this JVM: the test is over when it drops back to 0. */
    private static final AtomicInteger OPEN_HANDLES = new AtomicInteger();

    // Same discipline as KafkaProducerSampler: the handle is a raw pointer; written holding both locks, read holding
    // either; interrupt() needs only interruptLock so it never waits behind a poll.
    private final Object pollLock = new Object();
    private final Object interruptLock = new Object();
    private long handle;

    /** Filled by every poll and reused. */
    private final long[] out = new long[NativeConsumer.OUT_LENGTH];

    private EngineError setupError;
    private Pattern checkRegex;
    private boolean stopOnEmpty;
    private long pollTimeoutMs;

    /** Kept cheap: the GUI instantiates every candidate class; the engine is loaded only in setupTest. */
    public KafkaConsumerSampler() {
    }

    @Override
    public Arguments getDefaultParameters() {
        return ConsumerParameters.arguments(ConsumerParameters.CONSUMER_DEFAULTS);
    }

    @Override
    public void setupTest(JavaSamplerContext context) {
        stopOnEmpty = ConsumerParameters.stopOnEmpty(context);
        pollTimeoutMs = context.getLongParameter("poll.timeout.ms", 1000);
        boolean loaded = false;
        try {
            checkRegex = ConsumerParameters.checkRegex(context);
            NativeLibrary.load();
            Verdict.atTestStart(); // kafka.verdict checked before any load; the generator watched
            loaded = true;
            long opened = NativeConsumer.open(ProducerParameters.engineConfig(context));
            synchronized (pollLock) {
                synchronized (interruptLock) {
                    handle = opened;
                }
            }
            OPEN_HANDLES.incrementAndGet();
        } catch (RuntimeException | LinkageError e) {
            // Reported by runTest as one failed sample that stops the test (see KafkaProducerSampler).
            setupError = EngineError.parse(e.getMessage() != null ? e.getMessage() : e.toString(), "CONFIG_ERROR");
            LOG.error("{}: {}: {}", label(context), setupError.code(), setupError.message());
        }
        if (loaded) {
            EngineLogs.forward(NativeConsumer.drainLogs(), LOG); // the assignment, warnings about the settings
        }
    }

    @Override
    public SampleResult runTest(JavaSamplerContext context) {
        ConsumerSampleResult result = new ConsumerSampleResult();
        result.setSampleLabel(label(context));
        if (setupError != null) {
            result.fail(setupError);
            result.setStopTest(true);
            return result;
        }
        String[] values = null;
        synchronized (pollLock) {
            if (handle == 0) {
                result.fail(new EngineError("CLOSED", "the consumer is already closed (the test is ending)"));
                return result;
            }
            long start = System.currentTimeMillis();
            try {
                String error = NativeConsumer.poll(handle, out);
                result.describePoll(start, error, out, pollTimeoutMs);
                if (checkRegex != null && out[NativeConsumer.RECORDS] > 0) {
                    values = NativeConsumer.values(handle);
                }
            } catch (IllegalStateException e) {
                result.fail(new EngineError("CLOSED", e.getMessage()));
                return result;
            }
        }
        if (values != null) {
            check(result, values);
        }
        if (stopOnEmpty && out[NativeConsumer.RECORDS] == 0 && result.isSuccessful()) {
            // The thread's partitions are drained: like kafka-consumer-perf-test's end of input.
            result.setStopThread(true);
        }
        if (out[NativeConsumer.LOG_LINES_WAITING] > 0) {
            EngineLogs.forward(NativeConsumer.drainLogs(), LOG);
        }
        return result;
    }

    /** check.regex: every value must contain a match. */
    private void check(ConsumerSampleResult result, String[] values) {
        int mismatches = 0;
        String first = null;
        for (String value : values) {
            if (!checkRegex.matcher(value).find()) {
                mismatches++;
                if (first == null) {
                    first = value;
                }
            }
        }
        if (mismatches > 0) {
            result.failCheck(mismatches, values.length, checkRegex.pattern(), first);
        }
    }

    /** Called by JMeter on test stop: ends a poll waiting on this thread's consumer. */
    @Override
    public boolean interrupt() {
        synchronized (interruptLock) {
            if (handle != 0) {
                NativeConsumer.interrupt(handle);
            }
        }
        return true;
    }

    /** Runs on a JMeter thread other than the sampling one; lets the current poll finish, then closes the consumer. */
    @Override
    public void teardownTest(JavaSamplerContext context) {
        Verdict.atTestEnd(); // judged once JMeter has ended the test (JTL complete)
        long closing;
        synchronized (pollLock) {
            synchronized (interruptLock) {
                closing = handle;
                handle = 0;
            }
        }
        if (closing == 0) {
            return;
        }
        try {
            LOG.info("{}: {}", label(context), NativeConsumer.close(closing));
            EngineLogs.forward(NativeConsumer.drainLogs(), LOG);
        } catch (RuntimeException e) {
            LOG.error("{}: closing the Kafka consumer failed: {}", label(context), e.getMessage());
        }
        if (OPEN_HANDLES.decrementAndGet() == 0) {
            printSummary();
        }
    }

    /** kafka-consumer-perf-test's header and row, then the end-to-end latency line, on lines of their own. */
    private static void printSummary() {
        String path = JMeterUtils.getPropDefault(SUMMARY_FILE_PROPERTY, DEFAULT_SUMMARY_FILE);
        try {
            EngineLogs.printReport(NativeConsumer.report(path), LOG);
        } catch (RuntimeException e) {
            LOG.error("the Kafka consumer summary could not be written to {}: {}", path, e.getMessage());
        }
    }

    private static String label(JavaSamplerContext context) {
        return context.getParameter(TestElement.NAME, "");
    }
}
