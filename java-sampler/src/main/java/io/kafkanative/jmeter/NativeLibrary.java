package io.kafkanative.jmeter;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * Loads the Rust engine (libkafka_native.so) once per JVM.
 *
 * <p>The library travels inside our jar. {@code System.load} needs a real file, so it is extracted to
 * {@code ${java.io.tmpdir}/jmeter-kafka-native-<content hash>/libkafka_native.so}: the hash in the folder name lets
 * several JMeter processes (and several plugin versions) share the temp folder without overwriting each other's
 * library. {@code -Dkafka.native.library=/path/to/libkafka_native.so} skips the extraction (e.g. for a freshly built
 * engine).
 */
final class NativeLibrary {

    static final String OVERRIDE_PROPERTY = "kafka.native.library";
    static final String FILE_NAME = "libkafka_native.so";
    static final String PLATFORM = "linux-x86_64";
    static final String RESOURCE = "/META-INF/native/" + PLATFORM + "/" + FILE_NAME;

    // Both guarded by NativeLibrary.class. A failure is remembered so that every JMeter thread reports the same
    // clear message instead of retrying (and, after a failed static initializer, a bare NoClassDefFoundError).
    private static boolean loaded;
    private static UnsatisfiedLinkError failure;

    private NativeLibrary() {
    }

    /** Whether the engine is loaded in this JVM (native calls are safe). */
    static synchronized boolean isLoaded() {
        return loaded;
    }

    /** Loads the library unless already done; throws UnsatisfiedLinkError with a message saying what to fix. */
    static synchronized void load() {
        if (loaded) {
            return;
        }
        if (failure != null) {
            throw new UnsatisfiedLinkError(failure.getMessage());
        }
        try {
            systemLoad(locate());
            loaded = true;
        } catch (UnsatisfiedLinkError e) {
            failure = e;
            throw e;
        }
    }

    private static Path locate() {
        String override = System.getProperty(OVERRIDE_PROPERTY);
        if (override != null && !override.isBlank()) {
            Path path = Paths.get(override.trim()).toAbsolutePath();
            if (!Files.isRegularFile(path)) {
                throw new UnsatisfiedLinkError("-D" + OVERRIDE_PROPERTY + "=" + override + ": no such file;"
                        + " point it at a built libkafka_native.so or remove it to use the library inside the jar");
            }
            return path;
        }
        try {
            return extract();
        } catch (IOException e) {
            throw new UnsatisfiedLinkError("cannot extract " + FILE_NAME + " to " + System.getProperty("java.io.tmpdir")
                    + " (" + e + "); make that folder writable, start JMeter with -Djava.io.tmpdir=<writable folder>,"
                    + " or set -D" + OVERRIDE_PROPERTY + "=<path to " + FILE_NAME + ">");
        }
    }

    /** Copies the library out of the jar, once per content: returns the same path for the same library. */
    static Path extract() throws IOException {
        checkPlatform();
        Path tmp = Paths.get(System.getProperty("java.io.tmpdir"));
        // Written under a unique name, then renamed: another JVM never sees (or loads) a half-written library.
        Path partial = Files.createTempFile(tmp, "jmeter-kafka-native-", ".part");
        try {
            String hash = copyResource(partial);
            Path target = tmp.resolve("jmeter-kafka-native-" + hash).resolve(FILE_NAME);
            if (Files.isRegularFile(target) && Files.mismatch(partial, target) == -1) {
                return target; // extracted before, by this or another JVM
            }
            Files.createDirectories(target.getParent());
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    /** Streams the library out of the jar into {@code file}; returns the first 16 hex digits of its SHA-256. */
    private static String copyResource(Path file) throws IOException {
        MessageDigest sha256;
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
        try (InputStream resource = NativeLibrary.class.getResourceAsStream(RESOURCE)) {
            if (resource == null) {
                throw new UnsatisfiedLinkError(RESOURCE + " is missing from the jar: this build has no engine for "
                        + PLATFORM + "; rebuild the jar after `cargo build --release`");
            }
            try (InputStream in = new DigestInputStream(resource, sha256)) {
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            }
        }
        return HexFormat.of().formatHex(sha256.digest(), 0, 8);
    }

    private static void checkPlatform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (!os.startsWith("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            throw new UnsatisfiedLinkError("the Kafka native sampler contains an engine for " + PLATFORM + " only;"
                    + " this JVM runs on " + os + "/" + arch);
        }
    }

    private static void systemLoad(Path path) {
        try {
            System.load(path.toString());
        } catch (UnsatisfiedLinkError e) {
            String message = String.valueOf(e.getMessage());
            if (message.contains("already loaded in another classloader")) {
                throw new UnsatisfiedLinkError(message + ": the jmeter-kafka-native jar is probably present twice"
                        + " (e.g. two versions in JMeter's lib/ext, or in both lib/ and lib/ext/); keep only one");
            }
            throw new UnsatisfiedLinkError("cannot load the Kafka engine: " + message
                    + " (the engine needs Linux x86_64 with glibc 2.34 or newer)");
        }
    }
}
