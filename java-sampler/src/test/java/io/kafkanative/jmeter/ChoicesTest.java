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

    /** A schema file (the surefire run's directory is java-sampler/). */
    private static final String AVSC = "../tests/schema/schemas/order.avsc";
    private static final String JSON_SCHEMA = "../tests/schema/schemas/customer.schema.json";
    /** A registry nobody listens on: the framing=registry values are accepted, the registry is then unreachable. */
    private static final String NO_REGISTRY = "http://127.0.0.1:1";

    /**
     * What some values need besides themselves to be a whole configuration: "key=value", "key=*" (whatever the
     * value), each optionally after the client's kind ("consumer key=*") when the kinds need different things.
     */
    private static final Map<String, List<String>> NEEDS = Map.ofEntries(
            Map.entry("value.mode=template", List.of("value.template", "x")),
            Map.entry("value.mode=file", List.of("payload.file", "pom.xml")),
            Map.entry("value.mode=avro", List.of("value.schema.file", AVSC)),
            Map.entry("value.mode=json-schema", List.of("value.schema.file", JSON_SCHEMA)),
            Map.entry("value.mode=protobuf", List.of("value.schema.file", "../tests/schema/schemas/order.proto")),
            Map.entry("key.mode=fixed", List.of("key", "k")),
            Map.entry("key.mode=template", List.of("key", "k{seq}")),
            Map.entry("key.mode=avro", List.of("key.schema.file", AVSC)),
            Map.entry("key.mode=json-schema", List.of("key.schema.file", JSON_SCHEMA)),
            Map.entry("key.mode=protobuf", List.of("key.schema.file", "../tests/schema/schemas/order.proto")),
            Map.entry("security.protocol=SASL_PLAINTEXT", List.of("sasl.mechanism", "PLAIN", "sasl.username", "u",
                    "sasl.password", "p")),
            Map.entry("security.protocol=SASL_SSL", List.of("sasl.mechanism", "PLAIN", "sasl.username", "u",
                    "sasl.password", "p")),
            Map.entry("sasl.mechanism=OAUTHBEARER", List.of("security.protocol", "SASL_PLAINTEXT",
                    "sasl.oauthbearer.method", "oidc", "sasl.oauthbearer.token.endpoint.url", NO_REGISTRY + "/token",
                    "sasl.oauthbearer.client.id", "c", "sasl.oauthbearer.client.secret", "s")),
            Map.entry("sasl.mechanism=*", List.of("security.protocol", "SASL_PLAINTEXT", "sasl.username", "u",
                    "sasl.password", "p")),
            // the schema settings are read with a schema mode only
            Map.entry("value.schema.input=*", List.of("value.mode", "avro", "value.schema.file", AVSC)),
            Map.entry("value.subject.name.strategy=*", List.of("value.mode", "avro", "value.schema.file", AVSC)),
            Map.entry("key.subject.name.strategy=*", List.of("key.mode", "avro", "key.schema.file", AVSC)),
            Map.entry("producer value.schema.framing=registry", List.of("value.mode", "avro", "value.schema.file",
                    AVSC, "schema.registry.url", NO_REGISTRY)),
            Map.entry("producer value.schema.framing=*", List.of("value.mode", "avro", "value.schema.file", AVSC)),
            Map.entry("producer key.schema.framing=registry", List.of("key.mode", "avro", "key.schema.file", AVSC,
                    "schema.registry.url", NO_REGISTRY)),
            Map.entry("producer key.schema.framing=*", List.of("key.mode", "avro", "key.schema.file", AVSC)),
            Map.entry("consumer value.schema.framing=registry", List.of("value.decode", "avro",
                    "schema.registry.url", NO_REGISTRY)),
            Map.entry("consumer value.schema.framing=*", List.of("value.decode", "avro", "value.schema.file", AVSC)),
            Map.entry("consumer key.schema.framing=registry", List.of("key.decode", "avro",
                    "schema.registry.url", NO_REGISTRY)),
            Map.entry("consumer key.schema.framing=*", List.of("key.decode", "avro", "key.schema.file", AVSC)),
            Map.entry("auto.register.schemas=*", List.of("value.mode", "avro", "value.schema.file", AVSC)),
            Map.entry("value.decode=*", List.of("value.schema.file", AVSC, "value.schema.framing", "none")),
            Map.entry("key.decode=*", List.of("key.schema.file", AVSC, "key.schema.framing", "none")));

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
        List<String> needs = null;
        for (String need : List.of(kind + " " + key + "=" + value, key + "=" + value, kind + " " + key + "=*",
                key + "=*")) {
            needs = needs != null ? needs : NEEDS.get(need);
        }
        config.addAll(needs == null ? List.of() : needs);
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
            "consumer, fail.on.empty, BOOLEAN", "consumer, check.sequence, BOOLEAN",
            "producer, value.schema.input, SCHEMA_INPUT",
            "producer, value.subject.name.strategy, SUBJECT_NAME_STRATEGY",
            "producer, key.subject.name.strategy, SUBJECT_NAME_STRATEGY",
            "producer, value.schema.framing, SCHEMA_FRAMING", "producer, key.schema.framing, SCHEMA_FRAMING",
            "producer, auto.register.schemas, BOOLEAN", "consumer, value.decode, DECODE",
            "consumer, key.decode, DECODE",
            "consumer, value.schema.framing, SCHEMA_FRAMING", "consumer, key.schema.framing, SCHEMA_FRAMING"})
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
