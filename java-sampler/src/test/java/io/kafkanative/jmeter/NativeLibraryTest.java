package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;

import org.junit.jupiter.api.Test;

/** The library inside target/classes (as inside the jar) is extracted and loaded. */
class NativeLibraryTest {

    @Test
    void extractingTwiceGivesTheSameContentHashedFile() throws Exception {
        byte[] packaged;
        try (InputStream in = NativeLibrary.class.getResourceAsStream(NativeLibrary.RESOURCE)) {
            packaged = in.readAllBytes();
        }

        Path first = NativeLibrary.extract();
        Path second = NativeLibrary.extract();

        assertEquals(first, second);
        assertEquals(Path.of(System.getProperty("java.io.tmpdir"),
                "jmeter-kafka-native-" + sha256Prefix(packaged), "libkafka_native.so"), first);
        assertArrayEquals(packaged, Files.readAllBytes(first));
    }

    /** The first 16 hex digits of the SHA-256: the folder name that tells library versions apart. */
    private static String sha256Prefix(byte[] content) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content)).substring(0, 16);
    }

    @Test
    void loadsAndAnswersANativeCall() {
        assertDoesNotThrow(NativeLibrary::load);
        assertDoesNotThrow(NativeLibrary::load, "a second load is a no-op");
        assertDoesNotThrow(NativeEngine::drainLogs);
    }
}
