package io.kafkanative.jmeter;

/**
 * The Rust engine's consumer, as seen from Java: the native methods only (implemented in rust-core's JNI bridge,
 * {@code jni/consumer.rs}).
 *
 * <p>A handle is a raw pointer to engine memory: never use it after {@link #close}. {@link KafkaConsumerSampler}
 * owns one handle per JMeter thread and guards it with locks.
 */
final class NativeConsumer {

    static {
        NativeLibrary.load();
    }

    /** Indexes into the {@code long[]} that {@link #poll} fills. */
    static final int RECORDS = 0;
    static final int BYTES = 1;
    static final int ELAPSED_MICROS = 2;
    static final int E2E_MEAN_MICROS = 3;
    static final int E2E_MAX_MICROS = 4;
    static final int PARTITION = 5;
    static final int OFFSET = 6;
    static final int CHECK_FAILURES = 7;
    static final int REBALANCES = 8;
    static final int ASSIGNED_PARTITIONS = 9;
    static final int LOG_LINES_WAITING = 10;
    static final int OUT_LENGTH = 11;

    private NativeConsumer() {
    }

    /**
     * Opens a consumer for the calling thread: validates the configuration, checks that the topic exists (waiting
     * up to timeout.ms for a topic being created), then assigns its share of the partitions (assignment=all or a
     * list, split by thread.number / thread.count) or subscribes (assignment=subscribe). config = flattened
     * [k0, v0, k1, v1, ...]. Throws IllegalArgumentException "CODE\tmessage" on bad configuration or a missing
     * topic.
     */
    static native long open(String[] config);

    /**
     * One sample: waits up to poll.timeout.ms for the first record, then takes what is already fetched, up to
     * max.records; with commit=sync commits before returning. Fills out (length 11): [0]=records, [1]=bytes
     * (key+value+headers), [2]=elapsed micros, [3]=mean produce-to-consume latency micros (-1 if no record had a
     * send time), [4]=largest such latency (-1), [5]=partition of the last record (-1 if none), [6]=its offset (-1),
     * [7]=records failing check.sequence, [8]=rebalances so far, [9]=partitions held now, [10]=engine log lines
     * waiting (call drainLogs only when > 0). Returns null when the sample succeeded (records, or none without
     * fail.on.empty), else "CODE\tmessage" (EMPTY, SEQUENCE_ERROR, INTERRUPTED or a Kafka error name). Throws
     * IllegalStateException if the handle is closed.
     */
    static native String poll(long handle, long[] out);

    /** The values (UTF-8) of the last poll's records; kept by the engine only when check.regex is set. */
    static native String[] values(long handle);

    /** Ends a poll waiting on this handle within 100 ms (code INTERRUPTED when it got nothing). Thread-safe. */
    static native void interrupt(long handle);

    /**
     * Commits what is left (commit=sync), leaves the group, merges this handle's statistics into the test's totals
     * and frees the handle. Returns a one-line report. Must be called exactly once per handle.
     */
    static native String close(long handle);

    /** Engine/librdkafka log lines queued since the last call: null if none, else "LEVEL\tmessage" lines. */
    static native String drainLogs();

    /**
     * Called once when the last consumer of the test has closed: returns three lines (kafka-consumer-perf-test's
     * header, its row, the end-to-end latency line), or null if nothing was sampled; writes the JSON summary to
     * summaryPath; resets the totals for the next test.
     */
    static native String report(String summaryPath);
}
