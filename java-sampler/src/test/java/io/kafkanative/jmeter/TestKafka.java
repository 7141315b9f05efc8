package io.kafkanative.jmeter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The real broker the tests talk to: {@code -Dkafka.bootstrap} (default 127.0.0.1:9092), started beforehand with
 * {@code scripts/kafka start}. Topics are created with the repository's {@code scripts/kafka topics}.
 */
final class TestKafka {

    static final String BOOTSTRAP = System.getProperty("kafka.bootstrap", "127.0.0.1:9092");

    /** Nothing listens there: connections are refused at once. */
    static final String UNREACHABLE = "127.0.0.1:1";

    private static final Path REPOSITORY = Paths.get(System.getProperty("user.dir")).toAbsolutePath().getParent();
    private static final AtomicLong TOPIC_COUNTER = new AtomicLong();

    private TestKafka() {
    }

    /** Creates a topic with a name no other test (or earlier run) uses, and returns the name. */
    static String createTopic(String purpose, int partitions) throws IOException, InterruptedException {
        String topic = "java-sampler-" + purpose + "-" + System.currentTimeMillis() + "-" + TOPIC_COUNTER.incrementAndGet();
        List<String> command = List.of(REPOSITORY.resolve("scripts/kafka").toString(), "topics",
                "--bootstrap-server", BOOTSTRAP, "--create", "--topic", topic,
                "--partitions", String.valueOf(partitions), "--replication-factor", "1");
        // Output to a file, not a pipe: a hung tool must not hang the test beyond the timeout.
        Path log = Files.createTempFile("create-topic", ".log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        boolean exited = process.waitFor(120, TimeUnit.SECONDS);
        if (!exited) {
            process.destroyForcibly();
        }
        String output = Files.readString(log);
        Files.delete(log);
        if (!exited || process.exitValue() != 0) {
            throw new IllegalStateException("cannot create topic " + topic + " on " + BOOTSTRAP
                    + " (is the broker running? scripts/kafka start): " + String.join(" ", command) + "\n" + output);
        }
        return topic;
    }
}
