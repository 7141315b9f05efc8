package io.kafkanative.jmeter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link Choices} against the engine itself (no broker needed): for each enum setting, the engine accepts every
 * value of the dropdown and refuses any other with a CONFIG_ERROR; where the engine itself validates the setting
 * (its message says "use a, b or c"), that message lists exactly the dropdown's values. The settings librdkafka
 * validates (acks, compression.type, security.protocol, sasl.mechanism, auto.offset.reset) are refused with
 * librdkafka's message, which lists nothing; librdkafka also takes synonyms there (acks=-1,
 * auto.offset.reset=smallest), and the dropdowns offer one name per meaning.
 */
class ChoicesTest {

    /** What some values need besides themselves to be a whole configuration. */
    private static final Map<String, List<String>> NEEDS = Map.of(
            "value.mode=template", List.of("value.template", "x"),
            "value.mode=file", List.of("payload.file", "pom.xml"),
            "key.mode=fixed", List.of("key", "k"),
            "key.mode=template", List.of("key", "k{seq}"),
            "security.protocol=SASL_PLAINTEXT", List.of("sasl.mechanism", "PLAIN", "sasl.username", "u",
                    "sasl.password", "p"),
            "security.protocol=SASL_SSL", List.of("sasl.mechanism", "PLAIN", "sasl.username", "u",
                    "sasl.password", "p"),
            "sasl.mechanism=*", List.of("security.protocol", "SASL_PLAINTEXT", "sasl.username", "u",
                    "sasl.password", "p"));

    private static List<String> choices(String name) {
        try {
            @SuppressWarnings("unchecked")
            List<String> list = (List<String>) Choices.class.getDeclaredField(name).get(null);
            return list;
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static String[] config(String kind, String key, String value) {
        List<String> config = new ArrayList<>(List.of("bootstrap.servers", TestKafka.UNREACHABLE, "topic",
                "choices-test", "timeout.ms", "300"));
        if (kind.equals("producer")) {
            config.addAll(List.of("preflight", "off"));
        } else {
            config.addAll(List.of("group.id", "choices-test", "poll.timeout.ms", "0"));
        }
        config.addAll(NEEDS.getOrDefault(key + "=" + value,
                NEEDS.getOrDefault(key + "=*", List.of())));
        config.add(key);
        config.add(value);
        return config.toArray(new String[0]);
    }

    /** Opens and closes; returns the refusal's message, or null when the engine accepted the configuration. */
    private static String open(String kind, String key, String value) {
        try {
            if (kind.equals("producer")) {
                NativeProducer.close(NativeProducer.open(config(kind, key, value)), 0);
            } else {
                NativeConsumer.close(NativeConsumer.open(config(kind, key, value)));
            }
            return null;
        } catch (EngineException e) {
            return e.code() + ": " + e.getMessage();
        }
    }

    @ParameterizedTest
    @CsvSource({"producer, policy, POLICY", "producer, acks, ACKS", "producer, compression.type, COMPRESSION",
            "producer, producer.scope, PRODUCER_SCOPE", "producer, value.mode, VALUE_MODE",
            "producer, key.mode, KEY_MODE", "producer, preflight, PREFLIGHT",
            "producer, enable.idempotence, BOOLEAN", "producer, topic.create, BOOLEAN", "producer, audit, BOOLEAN",
            "producer, stamp.time, BOOLEAN", "producer, security.protocol, SECURITY_PROTOCOL",
            "producer, sasl.mechanism, SASL_MECHANISM",
            "consumer, commit, COMMIT", "consumer, auto.offset.reset, OFFSET_RESET",
            "consumer, fail.on.empty, BOOLEAN", "consumer, check.sequence, BOOLEAN"})
    void theEngineAcceptsEveryChoiceAndRefusesOthersNamingThem(String kind, String key, String table) {
        for (String value : choices(table)) {
            String refusal = open(kind, key, value);
            assertFalse(refusal != null && refusal.contains(key + ":") && refusal.contains("not valid"),
                    key + "=" + value + " is offered by the dropdown but the engine refuses it: " + refusal);
        }
        String refusal = open(kind, key, "bogus-value");
        assertTrue(refusal != null && refusal.startsWith("CONFIG_ERROR: ")
                && (refusal.contains(key) || refusal.contains("bogus-value")),
                key + "=bogus-value must be refused naming it: " + refusal);
        int listed = refusal.indexOf("; use ");
        if (listed >= 0) {
            // "use auto (librdkafka commits ...), sync (after every sample) or none" -> [auto, sync, none]
            String advice = refusal.substring(listed + "; use ".length()).replaceAll("\\([^)]*\\)", "");
            List<String> named = List.of(advice.trim().split("\\s*,\\s*|\\s+or\\s+"));
            assertEquals(Set.copyOf(choices(table)), Set.copyOf(named), key + ": the engine's values (" + refusal
                    + ") vs the dropdown's");
        }
    }

    /** The assignment dropdown's named values; a partition list is typed in the same field. */
    @ParameterizedTest
    @CsvSource({"all", "subscribe", "0-2"})
    void theAssignmentAcceptsItsNamesAndPartitionLists(String value) {
        String refusal = open("consumer", "assignment", value);
        assertFalse(refusal != null && refusal.contains("assignment:"), refusal);
        assertEquals(List.of("all", "subscribe"), Choices.ASSIGNMENT);
    }
}
