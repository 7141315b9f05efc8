package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Batch samples under mode=Statistical undercount failed messages: said once per JVM, and only then. */
class StatisticalModeWarningTest {

    @Test
    void warnsOnceWhenBatchSamplesMeetStatisticalMode() {
        assertFalse(KafkaProducerSampler.warnIfUndercounted(1, "Statistical"), "one message per sample counts right");
        assertFalse(KafkaProducerSampler.warnIfUndercounted(100, "Standard"), "Standard sends each sample's count");
        assertFalse(KafkaProducerSampler.warnIfUndercounted(100, ""), "no mode: not a remote run");
        assertTrue(KafkaProducerSampler.warnIfUndercounted(100, "Statistical"), "batch + Statistical");
        assertFalse(KafkaProducerSampler.warnIfUndercounted(100, "statistical"), "once per JVM");
    }
}
