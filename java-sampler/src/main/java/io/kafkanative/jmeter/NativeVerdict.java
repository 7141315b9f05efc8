package io.kafkanative.jmeter;

/**
 * The Rust engine's verdict, as seen from Java: the native methods only (rust-core's {@code jni/verdict.rs}).
 */
final class NativeVerdict extends NativeDeclarations {

    private NativeVerdict() {
    }

    /** Bytes malloc has handed out and not freed in this process (librdkafka, the engine, the JVM's own mallocs). */
    static native long mallocInUse();

    /** Null when spec is a valid {@code kafka.verdict} (or empty), else what is wrong, listing the valid metrics. */
    static native String check(String spec);

    /**
     * Judges the run (every summary written since the last call, the lag readings, the generator's health) and
     * forgets it. Writes the JUnit report to junitPath and adds generator, lag and verdict blocks to the summary
     * files. Fills out ({@link ResultLayout.Judgement}): criteria, failed ones, the exit code jmeter -n should end
     * with.
     * Returns the report lines, or null when there was nothing to judge nor report. Null arguments: not set.
     */
    static native String judge(String spec, String baselinePath, String junitPath, String generatorJson, long[] out);
}
