package io.kafkanative.jmeter;

/**
 * An error as the engine reports it: "CODE\tmessage", where CODE is a stable name (a Kafka error name such as
 * MSG_TIMED_OUT, or one of the engine's own such as CONFIG_ERROR) and the message says what happened and what to do.
 */
record EngineError(String code, String message) {

    /** Splits "CODE\tmessage"; text without a code (e.g. a library that does not load) gets {@code fallbackCode}. */
    static EngineError parse(String text, String fallbackCode) {
        int tab = text.indexOf('\t');
        if (tab < 0) {
            return new EngineError(fallbackCode, text);
        }
        return new EngineError(text.substring(0, tab), text.substring(tab + 1));
    }
}
