package io.kafkanative.jmeter;

import java.util.List;

/**
 * The values the engine allows for each enum setting: the one table the elements' dropdowns are built from.
 * ChoicesTest holds it against the engine itself (each value is accepted, any other is refused with a message
 * naming them), so a value added to the engine and not here, or the reverse, fails the build.
 */
final class Choices {

    static final List<String> BOOLEAN = List.of("true", "false");
    static final List<String> POLICY = List.of("capacity", "reliability");
    static final List<String> ACKS = List.of("0", "1", "all");
    static final List<String> COMPRESSION = List.of("none", "gzip", "snappy", "lz4", "zstd");
    static final List<String> PRODUCER_SCOPE = List.of("thread", "test");
    static final List<String> VALUE_MODE =
            List.of("fixed", "template", "file", "jmeter", "avro", "json-schema", "protobuf");
    static final List<String> KEY_MODE =
            List.of("none", "sequence", "random", "fixed", "template", "avro", "json-schema", "protobuf");
    static final List<String> PREFLIGHT = List.of("fail", "warn", "off");
    /** The named assignments; a partition list (0,1,2 or 0-5) is typed into the same field. */
    static final List<String> ASSIGNMENT = List.of("all", "subscribe");
    static final List<String> GROUP_PROTOCOL = List.of("classic", "consumer");
    static final List<String> COMMIT = List.of("auto", "sync", "none");
    static final List<String> OFFSET_RESET = List.of("earliest", "latest", "error");
    static final List<String> SECURITY_PROTOCOL = List.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL");
    /** Where a schema mode's records come from: generated from the schema, or the sample's JSON value encoded. */
    static final List<String> SCHEMA_INPUT = List.of("generate", "jmeter");
    /** Subject naming of file schemas; the engine also takes Confluent's class names (TopicNameStrategy, ...). */
    static final List<String> SUBJECT_NAME_STRATEGY = List.of("topic", "record", "topic-record");
    static final List<String> SCHEMA_FRAMING = List.of("registry", "none");
    /** How the registry is authenticated to: basic (username/password) or a token of the connection's OIDC client. */
    static final List<String> REGISTRY_AUTH = List.of("basic", "oauthbearer");
    /** The consumer's decoding of what it reads. */
    static final List<String> DECODE = List.of("none", "avro", "json-schema", "protobuf");
    static final List<String> SASL_MECHANISM = List.of("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER");

    private Choices() {
    }
}
