package io.kafkanative.jmeter;

/**
 * The engine's natives that belong to no single client (rust-core's JNI bridge, {@code jni/}): its log queue and
 * the layouts of the {@code long[]} result arrays.
 */
final class NativeEngine extends NativeDeclarations {

    private NativeEngine() {
    }

    /**
     * Engine/librdkafka log lines queued since the last call, by every handle: null if none, else lines
     * "LEVEL\tmessage" joined by '\n'; LEVEL is ERROR, WARN, INFO or DEBUG.
     */
    static native String drainLogs();

    /**
     * The names of a result array's slots, in order: {@code name} is "producer", "consumer", "lag" or "judgement".
     * Each name is the lower-cased name of the {@link ResultLayout} constant that indexes it (e.g. "elapsed_micros"
     * for ELAPSED_MICROS), and their count is that class's OUT_LENGTH; a test compares them.
     */
    static native String[] layout(String name);

    /**
     * The settings the engine reads itself for the client {@code name} ("producer", "consumer" or "lag"), beside the
     * librdkafka properties it passes on: a test checks that the GUI elements have a field for each.
     */
    static native String[] settingNames(String name);

    /** Every response code of the engine's catalogue: a test checks {@link Codes} against it. */
    static native String[] codes();

    /**
     * The engine's defaults of the client {@code name} ("producer") that the Java side also shows or uses, as
     * "name=value": a test checks the Java copies against them.
     */
    static native String[] defaults(String name);

    /**
     * Called once when the last handle of the test of the client {@code kind} ("producer" or "consumer") has closed:
     * returns the end-of-test report (the producer's kafka-producer-perf-test style line; the consumer's three
     * lines: kafka-consumer-perf-test's header, its row, the end-to-end latency line), or null if nothing was
     * sampled; writes the JSON summary to summaryPath; resets that kind's totals for the next test.
     */
    static native String report(String kind, String summaryPath);
}
