package io.kafkanative.jmeter;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.jmeter.util.JMeterUtils;

/** JMeter's properties outside a running JMeter: JMeterUtils reads them from a file, an empty one will do. */
final class TestJMeter {

    /** Where the engine writes its JSON summary when the last sampler of a test closes. */
    static final Path SUMMARY_FILE = Path.of("target", "test-kafka-native-summary.json").toAbsolutePath();

    private static boolean initialized;

    private TestJMeter() {
    }

    static synchronized void init() {
        if (initialized) {
            return;
        }
        try {
            Path properties = Files.createTempFile("jmeter", ".properties");
            properties.toFile().deleteOnExit();
            JMeterUtils.loadJMeterProperties(properties.toString());
            JMeterUtils.setProperty(KafkaProducerSampler.SUMMARY_FILE_PROPERTY, SUMMARY_FILE.toString());
            initialized = true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
