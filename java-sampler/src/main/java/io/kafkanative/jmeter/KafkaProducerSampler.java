package io.kafkanative.jmeter;

import java.util.concurrent.atomic.AtomicInteger;

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
 * JMeter "Java Request" that sends Kafka messages through the Rust engine.
 *
 * <p>JMeter creates one instance per thread and Java Request element: {@code setupTest} (on the thread's first
 * sample) opens an engine handle, every {@code runTest} makes one native call that sends {@code messages.per.sample}
 * messages and waits for their acks, and {@code teardownTest} (at test end, on another thread) closes the handle.
 * When the last handle of the test is closed, the engine's perf-test style summary is printed.
 */
public class KafkaProducerSampler extends AbstractJavaSamplerClient implements Interruptible {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaProducerSampler.class);

    static final String SUMMARY_FILE_PROPERTY = "kafka.summary.file";
    static final String DEFAULT_SUMMARY_FILE = "kafka-native-summary.json";

    /** Handles opened and not yet closed in this JVM: the test is over when it drops back to 0. */
    private static final AtomicInteger OPEN_HANDLES = new AtomicInteger();

    // The handle is a raw pointer into the engine: using it after close would crash the JVM. It is written only
    // while holding both locks and read while holding either; close happens after it has been set to 0.
    // interrupt() needs only interruptLock, so it never waits behind a send blocked on sendLock.
    private final Object sendLock = new Object();
    private final Object interruptLock = new Object();
    private long handle;
    /** Set when JMeter stopped the test (guarded by interruptLock): close then does not wait for in-flight messages. */
    private boolean interrupted;

    /** Filled by every send: reused so that a sample allocates nothing on the Java side beyond its SampleResult. */
    private final long[] out = new long[NativeProducer.OUT_LENGTH];

    private EngineError setupError;
    private boolean valueFromJMeter;
    private long closeTimeoutMs;

    /** Kept cheap: the GUI instantiates every candidate class; the engine is loaded only in setupTest. */
    public KafkaProducerSampler() {
    }

    @Override
    public Arguments getDefaultParameters() {
        return ProducerParameters.defaultArguments();
    }

    @Override
    public void setupTest(JavaSamplerContext context) {
        valueFromJMeter = ProducerParameters.valueFromJMeter(context);
        // close() flushes messages still in flight: give it the send timeout plus a margin.
        closeTimeoutMs = ProducerParameters.timeoutMs(context) + 1000;
        try {
            NativeLibrary.load();
            Verdict.atTestStart(); // kafka.verdict checked before any load; the generator watched
            long opened = NativeProducer.open(ProducerParameters.engineConfig(context));
            synchronized (sendLock) {
                synchronized (interruptLock) {
                    handle = opened;
                }
            }
            OPEN_HANDLES.incrementAndGet();
        } catch (RuntimeException | LinkageError e) {
            // A configuration mistake or a failed pre-flight check (IllegalArgumentException "CODE\tmessage"), or
            // an engine that does not load. Not thrown: JMeter would only log it and call runTest anyway, so
            // runTest reports it as a failed sample.
            setupError = EngineError.parse(e.getMessage() != null ? e.getMessage() : e.toString(), "CONFIG_ERROR");
            LOG.error("{}: {}: {}", label(context), setupError.code(), setupError.message());
            if (NativeLibrary.isLoaded()) {
                EngineLogs.forward(NativeProducer.drainLogs(), LOG); // librdkafka's own account of the failure
            }
        }
    }

    @Override
    public SampleResult runTest(JavaSamplerContext context) {
        KafkaSampleResult result = new KafkaSampleResult();
        result.setSampleLabel(label(context));
        if (setupError != null) {
            result.fail(setupError);
            // Every further sample would fail the same way (bad configuration, broker unreachable, topic missing):
            // stop the test with this one clear message instead of flooding the results with identical failures.
            result.setStopTest(true);
            return result;
        }
        String value = valueFromJMeter ? context.getParameter(ProducerParameters.VALUE, "") : null;
        synchronized (sendLock) {
            if (handle == 0) {
                result.fail(new EngineError("CLOSED", "the producer is already closed (the test is ending)"));
                return result;
            }
            long start = System.currentTimeMillis();
            try {
                String error = NativeProducer.send(handle, value, out);
                result.describeSend(start, error, out);
            } catch (IllegalStateException e) {
                result.fail(new EngineError("CLOSED", e.getMessage()));
                return result;
            }
        }
        if (out[NativeProducer.LOG_LINES_WAITING] > 0) {
            EngineLogs.forward(NativeProducer.drainLogs(), LOG);
        }
        return result;
    }

    /** Called by JMeter on test stop: wakes a send blocked on this thread's handle. */
    @Override
    public boolean interrupt() {
        synchronized (interruptLock) {
            interrupted = true;
            if (handle != 0) {
                NativeProducer.interrupt(handle);
            }
        }
        return true;
    }

    /** Runs on a JMeter thread other than the sampling one; lets the current send finish, then closes the handle. */
    @Override
    public void teardownTest(JavaSamplerContext context) {
        Verdict.atTestEnd(); // judged once JMeter has ended the test (JTL complete)
        long closing;
        long flushMs;
        synchronized (sendLock) {
            synchronized (interruptLock) {
                closing = handle;
                handle = 0;
                // A stopped test wants to end now: waiting for acks that may never come (broker down) would hold
                // up JMeter, which tears its samplers down one after the other.
                flushMs = interrupted ? 0 : closeTimeoutMs;
            }
        }
        if (closing == 0) {
            return; // never opened, or already closed
        }
        try {
            LOG.info("{}: {}", label(context), NativeProducer.close(closing, flushMs));
            EngineLogs.forward(NativeProducer.drainLogs(), LOG);
        } catch (RuntimeException e) {
            LOG.error("{}: closing the Kafka producer failed: {}", label(context), e.getMessage());
        }
        if (OPEN_HANDLES.decrementAndGet() == 0) {
            printSummary();
        }
    }

    /** The engine's totals over every handle of the test, in kafka-producer-perf-test form on a line of its own. */
    private static void printSummary() {
        String path = JMeterUtils.getPropDefault(SUMMARY_FILE_PROPERTY, DEFAULT_SUMMARY_FILE);
        try {
            EngineLogs.printReport(NativeProducer.report(path), LOG);
        } catch (RuntimeException e) {
            LOG.error("the Kafka summary could not be written to {}: {}", path, e.getMessage());
        }
    }

    /** Same as JMeter's own JavaTest: the element's name (JMeter fills it in if empty). */
    private static String label(JavaSamplerContext context) {
        return context.getParameter(TestElement.NAME, "");
    }
}
