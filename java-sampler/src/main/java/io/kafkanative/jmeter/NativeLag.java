package io.kafkanative.jmeter;

/**
 * The Rust engine's consumer-lag monitor, as seen from Java: the native methods only (rust-core's JNI bridge,
 * {@code jni/lag.rs}). One handle per {@link KafkaLagSampler} thread; never use it after {@link #close}.
 */
final class NativeLag extends NativeDeclarations {

    private NativeLag() {
    }

    /** Opens a monitor (it never joins the group nor commits). Throws {@link EngineException} (CONFIG_ERROR, ...). */
    static native long open(String[] config);

    /**
     * Reads the group's lag now. Fills out ({@link ResultLayout.Lag}): total lag, partitions, elapsed micros, growth
     * since the previous sample, samples in a row that grew by more than lag.tolerance, 1 if the sample passed (0 if
     * not), engine log lines waiting. Returns the per-partition lag and the failure, null when it passed (LAG_GROWING,
     * GROUP_NOT_FOUND, UNKNOWN_TOPIC_OR_PART, ...). Throws {@link EngineException} CLOSED if the handle is closed.
     */
    static native LagReading sample(long handle, long[] out);

    /** Frees the handle; exactly once. */
    static native void close(long handle);
}
