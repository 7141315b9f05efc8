package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.jmeter.util.JMeterUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The load generator's health: the summary block and the warning, against the limits set as JMeter properties. */
class GeneratorHealthTest {

    @BeforeEach
    void jmeter() {
        TestJMeter.init();
        NativeLibrary.load(); // the native memory figure comes from the engine
    }

    @AfterEach
    void defaults() {
        for (GeneratorHealth.Limit limit : GeneratorHealth.Limit.values()) {
            JMeterUtils.setProperty(limit.property, "");
        }
    }

    private static JsonNode parse(String json) throws java.io.IOException {
        return new ObjectMapper().readTree(json);
    }

    /** Keeps one core busy for a while: the process's CPU is then well above 0. */
    private static long spin(long millis) {
        long end = System.nanoTime() + millis * 1_000_000;
        long x = 0;
        while (System.nanoTime() < end) {
            x += Long.numberOfTrailingZeros(x + System.nanoTime());
        }
        return x;
    }

    @Test
    void aBusyProcessPassesALowLimitAndIsReported() throws java.io.IOException {
        JMeterUtils.setProperty(GeneratorHealth.Limit.PROCESS_CPU.property, "1");
        JMeterUtils.setProperty(GeneratorHealth.Limit.MACHINE_CPU.property, "100");
        GeneratorHealth health = GeneratorHealth.start();
        spin(2500);
        GeneratorHealth.Report report = health.stop();
        assertTrue(report.warning().startsWith("the load generator was the bottleneck: JMeter's process (engine "
                + "included) used "), report.warning());
        assertTrue(report.warning().contains("(limit 1%, kafka.generator.cpu.limit)"), report.warning());
        JsonNode json = parse(report.json());
        assertTrue(json.get("bottleneck").asBoolean(), report.json());
        assertTrue(json.get("samples").asInt() >= 2 && json.get("process_cpu_pct").get("mean").isNumber(),
                report.json());
        for (String[] path : new String[][] {{"gc", "pause_ms"}, {"native_malloc_mb", "mean"}, {"rss_mb", "mean"},
            {"heap", "used_after_gc_pct_of_max"}}) {
            assertTrue(json.get(path[0]).has(path[1]), String.join(".", path) + " in " + json);
        }
    }

    @Test
    void limitsAtTheTopGiveNoWarning() throws java.io.IOException {
        JMeterUtils.setProperty(GeneratorHealth.Limit.PROCESS_CPU.property, "100");
        JMeterUtils.setProperty(GeneratorHealth.Limit.MACHINE_CPU.property, "100%");
        GeneratorHealth.Report report = GeneratorHealth.start().stop();
        assertNull(report.warning());
        JsonNode json = parse(report.json());
        assertTrue(!json.get("bottleneck").asBoolean() && json.get("warning").isNull(), report.json());
    }

    /** A limit reads as a number or a percentage, above 0 and at most 100; anything else is refused, never guessed. */
    @Test
    void limitsAreReadAsPercentagesAndOthersAreRefused() throws java.io.IOException {
        JMeterUtils.setProperty(GeneratorHealth.Limit.MACHINE_CPU.property, "95%");
        assertEquals(95, GeneratorHealth.Limit.MACHINE_CPU.value());
        assertNull(GeneratorHealth.limitsError());
        JsonNode limits = parse(GeneratorHealth.start().stop().json()).get("limits_pct");
        assertEquals("{\"process_cpu\":80.0,\"machine_cpu\":95.0,\"gc\":5.0,\"heap_after_gc\":80.0}",
                limits.toString());
        for (String bad : new String[] {"-5", "0", "1000", "NaN", "eighty", "Infinity", "101%"}) {
            JMeterUtils.setProperty(GeneratorHealth.Limit.PROCESS_CPU.property, bad);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    GeneratorHealth.Limit.PROCESS_CPU::value, bad);
            assertEquals("kafka.generator.cpu.limit=" + bad + ": a limit is a percentage above 0 and at most 100 (the "
                    + "default is 80%); leave it unset for the default", e.getMessage());
            assertEquals(e.getMessage(), GeneratorHealth.limitsError());
        }
    }

    @Test
    void unmeasuredFiguresAreNull() throws java.io.IOException {
        com.fasterxml.jackson.databind.node.ObjectNode node = new ObjectMapper().createObjectNode();
        GeneratorHealth.put(node, "nan", Double.NaN);
        GeneratorHealth.put(node, "x", 1.23456);
        assertEquals("{\"nan\":null,\"x\":1.235}", node.toString());
    }
}
