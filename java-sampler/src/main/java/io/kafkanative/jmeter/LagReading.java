package io.kafkanative.jmeter;

/**
 * One lag sample as the engine returns it (built by the bridge): the per-partition lag ("p0=12 p1=0(no commit)"),
 * a note on why the lag will not go down by consuming ({@code null} when there is none: open transactions that hold
 * last-stable offsets behind the high watermarks) and the failure, {@code null} when the sample passed (LAG_GROWING
 * still comes with its partitions).
 */
record LagReading(String partitions, String note, EngineError error) {
}
