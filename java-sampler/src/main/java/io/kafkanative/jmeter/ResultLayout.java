package io.kafkanative.jmeter;

/**
 * The slots of the {@code long[]} result arrays the engine's natives fill, one nested class per layout, all in one
 * place. The engine defines each layout once ({@code layout!} in rust-core's {@code jni/}); these constants are its
 * names upper-cased, and {@code NativeEngineTest} fails when the two disagree. {@code OUT_LENGTH} is the array's
 * length. (Compile-time constants: using one neither loads the engine nor costs a field read per sample.)
 */
final class ResultLayout {

    private ResultLayout() {
    }

    /** What {@link NativeProducer#send} fills: the engine's layout "producer". */
    static final class Producer {
        static final int SENT = 0, ACKED = 1, FAILED = 2, ELAPSED_MICROS = 3, BYTES_SENT = 4, PARTITION = 5,
                OFFSET = 6, LOG_LINES_WAITING = 7, TRANSACTION = 8, OUT_LENGTH = 9;

        /** Values of {@link #TRANSACTION}: how the sample's transaction ended (the engine's TxnEnd). */
        static final long TXN_COMMITTED = 1, TXN_ABORTED = 2, TXN_OPEN = 3;

        private Producer() {
        }
    }

    /** What {@link NativeConsumer#poll} fills: the engine's layout "consumer". */
    static final class Consumer {
        static final int RECORDS = 0, BYTES = 1, ELAPSED_MICROS = 2, E2E_MEAN_MICROS = 3, E2E_MAX_MICROS = 4,
                PARTITION = 5, OFFSET = 6, CHECK_FAILURES = 7, REBALANCES = 8, ASSIGNED_PARTITIONS = 9,
                LOG_LINES_WAITING = 10, STOP_THREAD = 11, REBALANCE_ENDED = 12, REBALANCE_PAUSE_MICROS = 13,
                OUT_LENGTH = 14;

        private Consumer() {
        }
    }

    /** What {@link NativeLag#sample} fills: the engine's layout "lag". */
    static final class Lag {
        static final int TOTAL_LAG = 0, PARTITIONS = 1, ELAPSED_MICROS = 2, GROWTH = 3, GROWING_WINDOWS = 4, OK = 5,
                LOG_LINES_WAITING = 6, OUT_LENGTH = 7;

        private Lag() {
        }
    }

    /** What {@link NativeVerdict#judge} fills: the engine's layout "judgement". */
    static final class Judgement {
        static final int CRITERIA = 0, FAILED = 1, EXIT_CODE = 2, OUT_LENGTH = 3;

        private Judgement() {
        }
    }
}
