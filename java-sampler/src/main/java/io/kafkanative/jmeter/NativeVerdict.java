package io.kafkanative.jmeter;

/**
 * The Rust engine's verdict, as seen from Java: the native methods only (rust-core's {@code jni/verdict.rs}).
 */
final class NativeVerdict extends NativeDeclarations {

    private NativeVerdict() {
    }

    /** Bytes malloc has handed out and not freed in this process (librdkafka, the engine, the JVM's own mallocs). */
    static native long mallocInUse();

    /**
     * At a test's start, before any load and before any file is removed: null when spec is a valid
     * {@code kafka.verdict} (or null), no report path would replace a file it should not and the baseline a
     * regression criterion needs can be read (it is read now); else what is wrong.
     *
     * @param reports [setting, path, ...] of the reports the run writes (a setting naming "junit" is the JUnit report)
     * @param inputs  [what it is, path, ...] of files no report may name (the plan, the baseline)
     */
    static native String prepare(String spec, String baselinePath, String[] reports, String[] inputs);

    /** What the test is (JSON: plan, samplers by kind and name with their main settings), for the summaries. */
    static native void identify(String identityJson);

    /**
     * Judges the run (every summary written since the last call, the lag readings, the generator's health) and
     * forgets it. Writes the JUnit report to junitPath and adds generator, lag and verdict blocks to the summary
     * files. Fills out ({@link ResultLayout.Judgement}): criteria, failed ones, the exit code jmeter -n should end
     * with.
     * Returns the report lines, or null when there was nothing to judge nor report. Null arguments: not set.
     */
    static native String judge(String spec, String baselinePath, String junitPath, String generatorJson, long[] out);
}
