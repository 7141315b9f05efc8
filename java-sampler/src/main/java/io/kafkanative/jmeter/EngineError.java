package io.kafkanative.jmeter;

/**
 * A sample's failure as the engine reports it (the bridge builds it; {@code null} means success): {@code code} is a
 * stable name (a Kafka error name such as MSG_TIMED_OUT, or one of the engine's own such as CONFIG_ERROR, EMPTY,
 * SEQUENCE_ERROR), {@code message} says what happened and what to do.
 */
record EngineError(String code, String message) {
}
