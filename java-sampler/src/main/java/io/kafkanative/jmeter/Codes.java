package io.kafkanative.jmeter;

/**
 * The response codes the Java side gives or tests itself. Each is a code of the engine's catalogue (rust-core's
 * {@code error::Code}); {@code CodesTest} checks them against {@link NativeEngine#codes()}, so a renamed code fails a
 * test instead of a comparison that silently stops matching.
 */
final class Codes {

    private Codes() {
    }

    /** An invalid or contradictory configuration. */
    static final String CONFIG_ERROR = "CONFIG_ERROR";
    /** A handle used after close (the test is ending). */
    static final String CLOSED = "CLOSED";
    /** A consumer poll that found no record. */
    static final String EMPTY = "EMPTY";
    /** A record that does not match {@code check.regex}. */
    static final String CONTENT_MISMATCH = "CONTENT_MISMATCH";
    /** The consumer group's lag grew over the monitor's window. */
    static final String LAG_GROWING = "LAG_GROWING";
    /** A wait cut short by JMeter stopping the test. */
    static final String INTERRUPTED = "INTERRUPTED";
    /** A transaction aborted on purpose ({@code transaction.abort.percent}): a successful sample. */
    static final String ABORTED = "ABORTED";
    /** The engine did not load in this JVM (another platform): given by the Java elements themselves. */
    static final String ENGINE_UNAVAILABLE = "ENGINE_UNAVAILABLE";
}
