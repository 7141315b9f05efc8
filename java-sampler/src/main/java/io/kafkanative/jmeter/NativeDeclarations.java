package io.kafkanative.jmeter;

/**
 * The base of the classes that declare the engine's {@code native} methods ({@link NativeEngine},
 * {@link NativeProducer}, {@link NativeConsumer}, {@link NativeLag}, {@link NativeVerdict}): the first call of any of
 * them initializes this class first (JLS 12.4.1), which loads the engine once, so no declaration class repeats it.
 */
abstract class NativeDeclarations {

    static {
        NativeLibrary.load();
    }

    /** Declaration classes hold static natives only. */
    protected NativeDeclarations() {
    }
}
