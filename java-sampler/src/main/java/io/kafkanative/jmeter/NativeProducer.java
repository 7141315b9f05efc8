package io.kafkanative.jmeter;

/**
 * The Rust engine's producer, as seen from Java: the native methods only (rust-core's JNI bridge,
 * {@code jni/producer.rs}).
 *
 * <p>A handle is a raw pointer to engine memory: never use it after {@link #close}. {@link KafkaProducerSampler}
 * owns one handle per JMeter thread and guards it with locks (see {@link AbstractNativeSampler}).
 */
final class NativeProducer extends NativeDeclarations {

    private NativeProducer() {
    }

    /**
     * Opens a producer handle for the calling thread. config = flattened [k0, v0, k1, v1, ...] of the sampler's
     * parameters (only non-blank values, trimmed; Java does not interpret them except value.mode and timeout.ms).
     * Throws {@link EngineException} (CONFIG_ERROR naming the key, why and how to fix; or a failed pre-flight
     * check such as TRANSPORT, AUTHENTICATION, UNKNOWN_TOPIC_OR_PART, TOO_FEW_PARTITIONS).
     */
    static native long open(String[] config);

    /**
     * Sends messages.per.sample messages and blocks until every one is acknowledged by the broker, failed, or the
     * timeout passed. value: null = the engine generates the payload; non-null = this string (UTF-8) is the value
     * (value.mode=jmeter). key and headers: the fields as JMeter evaluated them for this sample (null: the thread's
     * settings stay); the engine parses them again only when their text changed. Fills out ({@link ResultLayout.Producer}): messages sent, acked, failed, elapsed micros
     * (first send to last ack), bytes sent (key+value+headers), partition and offset of the last acked message (-1 if none), engine
     * log lines waiting (call {@link NativeEngine#drainLogs} only when > 0). Returns null when all were acked, else
     * the first failure (e.g. MSG_SIZE_TOO_LARGE). Throws {@link EngineException} CLOSED if the handle is closed.
     */
    static native EngineError send(long handle, String value, String key, String headers, long[] out);

    /**
     * Wakes a thread blocked in send on this handle; that send returns with code INTERRUPTED for unfinished
     * messages. Cheap, thread-safe.
     */
    static native void interrupt(long handle);

    /**
     * Flushes in-flight messages (bounded by timeoutMs), merges this handle's latency statistics into the test's
     * totals and frees the handle. Returns a one-line human report, e.g. "closed: 1000 acked, 0 failed,
     * 0 undelivered at close". Must be called exactly once per handle.
     */
    static native String close(long handle, long timeoutMs);
}
