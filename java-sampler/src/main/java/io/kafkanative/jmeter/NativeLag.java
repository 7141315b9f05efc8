package io.kafkanative.jmeter;

/**
 * The Rust engine's consumer-lag monitor, as seen from Java: the native methods only (rust-core's
 * {@code jni/lag.rs}). One handle per {@link KafkaLagSampler} thread; never use it after {@link #close}.
 */
final class NativeLag {

    static {
        NativeLibrary.load();
    }

    /** Indexes into the {@code long[]} that {@link #sample} fills. */
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

    /** Opens a monitor (it never joins the group nor commits). Throws IllegalArgumentException "CODE\tmessage". */
    static native long open(String[] config);

    /**
     * Reads the group's lag now. Fills out (length 7): [0]=total lag, [1]=partitions, [2]=elapsed micros,
     * [3]=growth since the previous sample, [4]=samples in a row that grew by more than lag.tolerance,
     * [5]=1 if the sample passed, 0 if not, [6]=engine log lines waiting. Returns the per-partition lag
     * ("p0=12 p1=0(no commit)") when it passed, else "CODE\tmessage\n" followed by it (LAG_GROWING,
     * GROUP_NOT_FOUND, UNKNOWN_TOPIC_OR_PART, ...).
     */
    static native String sample(long handle, long[] out);

    /** Frees the handle; exactly once. */
    static native void close(long handle);
}
