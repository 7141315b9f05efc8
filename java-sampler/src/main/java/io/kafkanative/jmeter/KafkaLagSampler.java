package io.kafkanative.jmeter;

import org.apache.jmeter.config.Arguments;
import org.apache.jmeter.protocol.java.sampler.AbstractJavaSamplerClient;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerContext;
import org.apache.jmeter.samplers.SampleResult;
import org.apache.jmeter.testelement.TestElement;
import org.apache.jmeter.threads.JMeterVariables;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JMeter "Java Request" that samples a consumer group's lag: run it under a timer (e.g. every 2 s) in a thread
 * group of its own.
 *
 * <p>Each sample reads the group's committed offsets and the end offsets of the topic's partitions. The total lag
 * goes into the JMeter variable {@code lag.variable} (default {@code kafka.lag}; add it to the JTL with
 * {@code -Jsample_variables=kafka.lag}), the per-partition lag into the response message. The sample fails with
 * LAG_GROWING when the lag grew in each of the last {@code lag.windows} samples by more than
 * {@code lag.tolerance} records: the consumers are not keeping up.
 */
public class KafkaLagSampler extends AbstractJavaSamplerClient {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaLagSampler.class);

    // A lag sample is short (bounded by timeout.ms) and not interruptible: one lock is enough.
    private final Object lock = new Object();
    private long handle;
    private final long[] out = new long[NativeLag.OUT_LENGTH];
    private EngineError setupError;
    private String variable;

    public KafkaLagSampler() {
    }

    @Override
    public Arguments getDefaultParameters() {
        return ConsumerParameters.arguments(ConsumerParameters.LAG_DEFAULTS);
    }

    @Override
    public void setupTest(JavaSamplerContext context) {
        variable = ConsumerParameters.lagVariable(context);
        try {
            NativeLibrary.load();
            Verdict.atTestStart(); // kafka.verdict checked before any load; the generator watched
            long opened = NativeLag.open(ProducerParameters.engineConfig(context));
            synchronized (lock) {
                handle = opened;
            }
        } catch (RuntimeException | LinkageError e) {
            setupError = EngineError.parse(e.getMessage() != null ? e.getMessage() : e.toString(), "CONFIG_ERROR");
            LOG.error("{}: {}: {}", label(context), setupError.code(), setupError.message());
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
        synchronized (lock) {
            if (handle == 0) {
                result.fail(new EngineError("CLOSED", "the lag monitor is already closed (the test is ending)"));
                return result;
            }
            long start = System.currentTimeMillis();
            try {
                result.describeLag(start, NativeLag.sample(handle, out), out);
            } catch (IllegalStateException e) {
                result.fail(new EngineError("CLOSED", e.getMessage()));
                return result;
            }
        }
        JMeterVariables variables = context.getJMeterVariables();
        if (variables != null) {
            // Only a reading is a lag: after an error the variable is left empty rather than showing 0.
            boolean read = result.isSuccessful() || "LAG_GROWING".equals(result.getResponseCode());
            variables.put(variable, read ? String.valueOf(out[NativeLag.TOTAL_LAG]) : "");
        }
        if (out[NativeLag.LOG_LINES_WAITING] > 0) {
            EngineLogs.forward(NativeConsumer.drainLogs(), LOG);
        }
        return result;
    }

    @Override
    public void teardownTest(JavaSamplerContext context) {
        Verdict.atTestEnd(); // judged once JMeter has ended the test (JTL complete)
        long closing;
        synchronized (lock) {
            closing = handle;
            handle = 0;
        }
        if (closing != 0) {
            NativeLag.close(closing);
        }
    }

    private static String label(JavaSamplerContext context) {
        return context.getParameter(TestElement.NAME, "");
    }
}
