package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The JNI contract, asked of the engine itself (no broker): the result layouts agree with the Java constants, and
 * errors cross as {@link EngineException} with a code and a message of their own.
 */
class NativeEngineTest {

    /** Every slot the engine names is the Java constant of that name (upper-cased), at the same index, and back. */
    @ParameterizedTest
    @CsvSource({"producer, io.kafkanative.jmeter.ResultLayout$Producer",
            "consumer, io.kafkanative.jmeter.ResultLayout$Consumer", "lag, io.kafkanative.jmeter.ResultLayout$Lag",
            "judgement, io.kafkanative.jmeter.ResultLayout$Judgement"})
    void resultLayoutAgreesWithTheJavaConstants(String layout, Class<?> natives) throws IllegalAccessException {
        String[] slots = NativeEngine.layout(layout);
        Map<String, Integer> engine = new TreeMap<>();
        for (int i = 0; i < slots.length; i++) {
            engine.put(slots[i].toUpperCase(Locale.ROOT), i);
        }
        Map<String, Integer> java = new TreeMap<>();
        int outLength = -1;
        for (Field field : natives.getDeclaredFields()) {
            int modifiers = field.getModifiers();
            if (Modifier.isStatic(modifiers) && Modifier.isFinal(modifiers) && field.getType() == int.class) {
                if (field.getName().equals("OUT_LENGTH")) {
                    outLength = field.getInt(null);
                } else {
                    java.put(field.getName(), field.getInt(null));
                }
            }
        }

        assertEquals(java, engine, natives.getSimpleName() + "'s constants vs the engine's layout '" + layout + "'");
        assertEquals(outLength, slots.length, natives.getSimpleName() + ".OUT_LENGTH vs the engine's layout");
    }

    @Test
    void badConfigurationIsAnEngineExceptionWithItsCodeApart() {
        EngineException e = assertThrows(EngineException.class, () -> NativeProducer.open(new String[] {
                "bootstrap.servers", TestKafka.UNREACHABLE, "topic", "t", "acks", "banana"}));

        assertEquals("CONFIG_ERROR", e.code());
        assertTrue(e.getMessage().contains("acks"), e.getMessage());
        assertFalse(e.getMessage().contains("\t"), "no \"CODE\\tmessage\" text protocol: " + e.getMessage());
        assertFalse(e.getMessage().startsWith("CONFIG_ERROR"), e.getMessage());
    }

    @Test
    void aClosedHandleIsRefusedNotDereferenced() {
        long[] out = new long[ResultLayout.Producer.OUT_LENGTH];

        assertEquals("CLOSED", assertThrows(EngineException.class, () -> NativeProducer.send(0, null, null, null, out)).code());
        assertEquals("CLOSED", assertThrows(EngineException.class,
                () -> NativeConsumer.poll(0, new long[ResultLayout.Consumer.OUT_LENGTH])).code());
        assertEquals("CLOSED", assertThrows(EngineException.class,
                () -> NativeLag.sample(0, new long[ResultLayout.Lag.OUT_LENGTH])).code());
    }
}
