package io.kafkanative.jmeter;

import org.apache.jmeter.threads.JMeterContextService;
import org.apache.jmeter.threads.JMeterVariables;

/**
 * JMeter "Java Request" that samples a consumer group's lag: run it under a timer (e.g. every 2 s) in a thread
 * group of its own.
 *
 * <p>Each sample reads the group's committed offsets and the end offsets of the topic's partitions. The total lag
 * goes into the JMeter variable {@code lag.variable} (default {@code kafka.lag}; add it to the JTL with
 * {@code -Jsample_variables=kafka.lag}), the per-partition lag into the response message. The sample fails with
 * LAG_GROWING when the lag grew in each of the last {@code lag.windows} samples by more than
 * {@code lag.tolerance} records: the consumers are not keeping up.
 *
 * <p>Not {@code Interruptible}: a lag sample is short (bounded by timeout.ms).
 */
public class KafkaLagSampler extends AbstractNativeSampler<LagSampleResult> {

    private static final Kind<LagSampleResult> LAG = new Kind<>("lag monitor", KafkaLagSampler.class,
            ConsumerParameters.LAG_DEFAULTS, ResultLayout.Lag.OUT_LENGTH, ResultLayout.Lag.LOG_LINES_WAITING,
            NativeLag::open, LagSampleResult::new);

    private String variable;

    /** Kept cheap: the GUI instantiates every candidate class; the engine is loaded only in setupTest. */
    public KafkaLagSampler() {
        super(LAG);
    }

    @Override
    protected void configure(String[] config) {
        variable = ConsumerParameters.lagVariable(config);
    }

    @Override
    protected void call(long handle, long start, String value, LagSampleResult result) {
        result.describeLag(start, NativeLag.sample(handle, out), out);
        JMeterVariables variables = JMeterContextService.getContext().getVariables();
        if (variables != null) {
            // Only a reading is a lag: after an error the variable is left empty rather than showing 0.
            variables.put(variable, result.isReading() ? String.valueOf(out[ResultLayout.Lag.TOTAL_LAG]) : "");
        }
    }

    @Override
    protected String close(long handle, boolean interrupted) {
        NativeLag.close(handle);
        return null;
    }
}
