package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.jmeter.util.JMeterUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Where the verdict's settings come from (no engine needed): a Kafka Connection's Verdict fields when the JMeter
 * properties are not set, the property when it is (each setting on its own), and a refusal when two Connections
 * disagree and no property decides. tests/verdict/run.sh runs the same through jmeter -n and its exit code.
 */
class VerdictSettingsTest {

    @BeforeAll
    static void jmeter() {
        TestJMeter.init();
    }

    @AfterEach
    void clear() {
        for (String name : new String[] {"a", "b"}) {
            Verdict.forgetConnection(name);
        }
        for (String property : new String[] {Verdict.SPEC_PROPERTY, Verdict.JUNIT_PROPERTY, Verdict.BASELINE_PROPERTY}) {
            JMeterUtils.getJMeterProperties().remove(property);
        }
    }

    @Test
    void theConnectionsFieldsApplyWhenNoPropertyIsSet() {
        Verdict.fromConnection("a", new Verdict.Settings(" p99<50ms ", "", "verdict.xml"));
        Verdict.resolveSettings();
        assertEquals(new Verdict.Settings("p99<50ms", null, "verdict.xml"), Verdict.settings());
        assertNull(Verdict.planError());
        assertTrue(Verdict.asked());
    }

    @Test
    void eachPropertyWinsOverItsField() {
        Verdict.fromConnection("a", new Verdict.Settings("p99<50ms", "old.json", "verdict.xml"));
        JMeterUtils.setProperty(Verdict.SPEC_PROPERTY, "error.rate<1%");
        Verdict.resolveSettings();
        assertEquals(new Verdict.Settings("error.rate<1%", "old.json", "verdict.xml"), Verdict.settings());
    }

    @Test
    void twoConnectionsThatDisagreeAreRefusedUnlessThePropertyDecides() {
        Verdict.fromConnection("a", new Verdict.Settings("p99<50ms", "", ""));
        Verdict.fromConnection("b", new Verdict.Settings("p99<10ms", "", ""));
        Verdict.resolveSettings();
        assertEquals("kafka.verdict: the Kafka Connections [a, b] have different Verdict criteria fields; fill it in"
                + " one Connection only, or set -Jkafka.verdict (the property wins)", Verdict.planError());
        JMeterUtils.setProperty(Verdict.SPEC_PROPERTY, "p99<20ms");
        Verdict.resolveSettings();
        assertNull(Verdict.planError());
        assertEquals("p99<20ms", Verdict.settings().spec());
    }

    @Test
    void noFieldAndNoPropertyAsksForNothing() {
        Verdict.fromConnection("a", new Verdict.Settings("", "", ""));
        Verdict.resolveSettings();
        assertEquals(new Verdict.Settings(null, null, null), Verdict.settings());
        assertTrue(!Verdict.asked());
    }
}
