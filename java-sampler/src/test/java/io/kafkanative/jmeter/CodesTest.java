package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** Java's codes and defaults are the engine's: read from it, not copied by hand. */
class CodesTest {

    @Test
    void everyJavaCodeIsInTheEnginesCatalogue() throws IllegalAccessException {
        List<String> engine = Arrays.asList(NativeEngine.codes());
        assertTrue(engine.size() >= 20, "the engine lists only " + engine);
        int checked = 0;
        for (Field field : Codes.class.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == String.class) {
                String code = (String) field.get(null);
                assertEquals(field.getName(), code, "a code's constant is named as the code");
                assertTrue(engine.contains(code), code + " is not in the engine's catalogue " + engine);
                checked++;
            }
        }
        assertEquals(8, checked, "Codes' constants");
    }

    @Test
    void theJavaRequestsDefaultTimeoutsAreTheEnginesOwn() {
        Map<String, Long> defaults = new HashMap<>();
        for (String pair : NativeEngine.defaults("producer")) {
            int eq = pair.indexOf('=');
            defaults.put(pair.substring(0, eq), Long.parseLong(pair.substring(eq + 1)));
        }
        assertEquals(defaults.get("timeout.ms.capacity"), ProducerParameters.DEFAULT_TIMEOUT_MS);
        assertEquals(defaults.get("timeout.ms.reliability"), ProducerParameters.RELIABILITY_TIMEOUT_MS);
    }
}
