package io.kafkanative.jmeter;

/**
 * The Rust engine's consumer, as seen from Java: the native methods only (rust-core's JNI bridge,
 * {@code jni/consumer.rs}).
 *
 * <p>A handle is a raw pointer to engine memory: never use it after {@link #close}. {@link KafkaConsumerSampler}
 * owns one handle per JMeter thread and guards it with locks (see {@link AbstractNativeSampler}).
 */
final class NativeConsumer extends NativeDeclarations {

    private NativeConsumer() {
    }

    /**
     * Opens a consumer for the calling thread: validates the configuration (check.regex included), checks that
     * the topic exists (waiting up to timeout.ms for a topic being created), then assigns its share of the
     * partitions (assignment=all or a list, split by thread.number / thread.count) or subscribes
     * (assignment=subscribe). config = flattened [k0, v0, k1, v1, ...]. Throws {@link EngineException}
     * (CONFIG_ERROR, UNKNOWN_TOPIC_OR_PART, ...).
     */
    static native long open(String[] config);

    /**
     * One sample: waits up to poll.timeout.ms for the first record, then takes what is already fetched, up to
     * max.records; with commit=sync commits before returning. Fills out ({@link ResultLayout.Consumer}): records,
     * bytes (key+value+headers), elapsed micros, mean and largest produce-to-consume latency micros (-1 if no record had
     * a send time), partition and offset of the last record (-1 if none), records failing check.sequence,
     * rebalances so far, partitions held now, engine log lines waiting (call {@link NativeEngine#drainLogs} only
     * when > 0), and stop_thread (1 = stop.on.empty and this thread's partitions are drained).
     *
     * <p>The whole verdict is the engine's: returns null when the sample succeeded (records, or none without
     * fail.on.empty), else EMPTY (fail.on.empty), SEQUENCE_ERROR (check.sequence), CONTENT_MISMATCH (check.regex),
     * INTERRUPTED or a Kafka error name. Throws {@link EngineException} CLOSED if the handle is closed.
     */
    static native EngineError poll(long handle, long[] out);

    /** Ends a poll waiting on this handle within 100 ms (code INTERRUPTED when it got nothing). Thread-safe. */
    static native void interrupt(long handle);

    /**
     * Commits what is left (commit=sync), leaves the group, merges this handle's statistics into the test's totals
     * and frees the handle. Returns a one-line report. Must be called exactly once per handle.
     */
    static native String close(long handle);
}
