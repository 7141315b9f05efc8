package io.kafkanative.jmeter;

/**
 * An engine error thrown across JNI: opening a handle with a bad configuration or a failed pre-flight check, a call
 * on a closed handle ({@code CLOSED}), or a fault inside the engine ({@code INTERNAL_ERROR}).
 *
 * <p>{@link #code()} is a stable name (a Kafka error name such as {@code UNKNOWN_TOPIC_OR_PART}, or one of the
 * engine's own such as {@code CONFIG_ERROR}); {@link #getMessage()} says what happened and how to fix it, without
 * the code. Thrown by rust-core's JNI bridge through the {@code (String, String)} constructor.
 */
public final class EngineException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String code;

    public EngineException(String code, String message) {
        super(message);
        this.code = code;
    }

    /** The stable error name, e.g. {@code CONFIG_ERROR}; JMeter shows it as the response code. */
    public String code() {
        return code;
    }

    /** The same error as a sample's failure value. */
    EngineError toError() {
        return new EngineError(code, getMessage());
    }
}
