package io.kafkanative.jmeter;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
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

    /** Runs {@code action} and returns what it printed on stdout (printed there as well, for the test's log). */
    static String captureStandardOutput(Runnable action) {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setOut(original);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        original.print(text);
        return text;
    }
}
