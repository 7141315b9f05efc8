package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
        JMeterUtils.setProperty(GeneratorHealth.Limit.PROCESS_CPU.property, "");
        JMeterUtils.setProperty(GeneratorHealth.Limit.MACHINE_CPU.property, "");
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
    void aBusyProcessPassesALowLimitAndIsReported() throws InterruptedException {
        JMeterUtils.setProperty(GeneratorHealth.Limit.PROCESS_CPU.property, "1");
        JMeterUtils.setProperty(GeneratorHealth.Limit.MACHINE_CPU.property, "101");
        GeneratorHealth health = GeneratorHealth.start();
        spin(2500);
        GeneratorHealth.Report report = health.stop();
        assertTrue(report.warning().startsWith("the load generator was the bottleneck: JMeter's process (engine "
                + "included) used "), report.warning());
        assertTrue(report.warning().contains("(limit 1%, kafka.generator.cpu.limit)"), report.warning());
        String json = report.json();
        assertTrue(json.contains("\"bottleneck\": true"), json);
        for (String key : new String[] {"\"samples\": ", "\"process_cpu_pct\": {\"mean\": ", "\"gc\": {\"pause_ms\": ",
                "\"native_malloc_mb\": {\"mean\": ", "\"rss_mb\": {\"mean\": ", "\"used_after_gc_pct_of_max\": "}) {
            assertTrue(json.contains(key), key + " in " + json);
        }
    }

    @Test
    void limitsAboveEverythingGiveNoWarning() {
        JMeterUtils.setProperty(GeneratorHealth.Limit.PROCESS_CPU.property, "101");
        JMeterUtils.setProperty(GeneratorHealth.Limit.MACHINE_CPU.property, "101");
        GeneratorHealth.Report report = GeneratorHealth.start().stop();
        assertNull(report.warning());
        assertTrue(report.json().contains("\"bottleneck\": false, \"warning\": null"), report.json());
    }

    /** A limit reads as a number or a percentage; a typo falls back to the default (logged), never to 0. */
    @Test
    void limitsAreReadAsPercentagesAndATypoKeepsTheDefault() {
        JMeterUtils.setProperty(GeneratorHealth.Limit.PROCESS_CPU.property, "eighty");
        JMeterUtils.setProperty(GeneratorHealth.Limit.MACHINE_CPU.property, "95%");
        assertEquals(80, GeneratorHealth.Limit.PROCESS_CPU.value());
        assertEquals(95, GeneratorHealth.Limit.MACHINE_CPU.value());
        String json = GeneratorHealth.start().stop().json();
        assertTrue(json.contains("\"limits_pct\": {\"process_cpu\": 80.000, \"machine_cpu\": 95.000, \"gc\": 5.000, "
                + "\"heap_after_gc\": 80.000}"), json);
    }

    @Test
    void jsonTextIsEscapedAndNumbersAreNullWhenUnmeasured() {
        assertEquals("\"a \\\"b\\\" \\\\ c\"", GeneratorHealth.string("a \"b\" \\ c"));
        assertEquals("null", GeneratorHealth.number(Double.NaN));
        assertEquals("1.500", GeneratorHealth.number(1.5));
    }
}
