package io.kafkanative.jmeter;

/**
 * The Rust engine's consumer-lag monitor, as seen from Java: the native methods only (rust-core's JNI bridge,
 * {@code jni/lag.rs}). One handle per {@link KafkaLagSampler} thread; never use it after {@link #close}.
 */
final class NativeLag {

    static {
        NativeLibrary.load();
    }

    /** Indexes into the {@code long[]} that {@link #sample} fills: the engine's layout "lag". */
    static final int TOTAL_LAG = 0;
    static final int PARTITIONS = 1;
    static final int ELAPSED_MICROS = 2;
    static final int GROWTH = 3;
    static final int GROWING_WINDOWS = 4;
    static final int OK = 5;
    static final int LOG_LINES_WAITING = 6;
    static final int OUT_LENGTH = 7;

    private NativeLag() {
    }

    /** Opens a monitor (it never joins the group nor commits). Throws {@link EngineException} (CONFIG_ERROR, ...). */
    static native long open(String[] config);

    /**
     * Reads the group's lag now. Fills out (OUT_LENGTH): total lag, partitions, elapsed micros, growth since the
     * previous sample, samples in a row that grew by more than lag.tolerance, 1 if the sample passed (0 if not),
     * engine log lines waiting. Returns the per-partition lag and the failure, null when it passed (LAG_GROWING,
     * GROUP_NOT_FOUND, UNKNOWN_TOPIC_OR_PART, ...). Throws {@link EngineException} CLOSED if the handle is closed.
     */
    static native LagReading sample(long handle, long[] out);

    /** Frees the handle; exactly once. */
    static native void close(long handle);
}
