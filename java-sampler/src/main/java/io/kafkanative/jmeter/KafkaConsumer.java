package io.kafkanative.jmeter;

import java.util.List;
import java.util.Map;

import lombok.Getter;
import lombok.Setter;

import org.apache.jmeter.testbeans.gui.TextAreaEditor;
import org.apache.jmeter.testelement.ThreadListener;

/**
 * Kafka Consumer: one native poll of up to {@code max.records} records per sample, with the engine's verdict
 * (fail.on.empty, check.sequence, check.regex), as {@link KafkaConsumerSampler} does for the Java Request.
 * Settings are read once per thread, at its first sample. The Schema group decodes what is read (each record's
 * schema id resolved through the registry, or a schema file) and asserts on a field; blank fields: no decoding.
 * The thread's consumer closes, and so leaves its group, when the JMeter thread ends (a loop count reached, a thread
 * group's duration over, a stop), not only at the end of the test.
 */
// Lombok writes each field's public getter and setter: JMeter's TestBean introspection needs one per property.
@Getter
@Setter
public class KafkaConsumer extends KafkaRecordsElement<KafkaConsumerSampler> implements ThreadListener {

    private static final long serialVersionUID = 1L;

    /** The Schema group's dropdowns, by setting name without its side. */
    private static final Map<String, List<String>> SCHEMA_CHOICES =
            Map.of("Decode", Choices.DECODE, "SchemaFraming", Choices.SCHEMA_FRAMING);

    /** The form's settings, in order (KafkaConsumerBeanInfo builds the form from it). */
    static final List<ElementSetting> SETTINGS = ElementSetting.concat(List.of(
            ElementSetting.text("connection", null, "topic", KafkaConnection.DEFAULT_NAME),
            ElementSetting.text("topic", "topic", "topic", "jmeter-kafka-native"),
            ElementSetting.text("groupId", "group.id", "topic", "jmeter-kafka-native"),
            ElementSetting.choice("assignment", "assignment", "topic", "all", Choices.ASSIGNMENT),
            ElementSetting.choice("groupProtocol", "group.protocol", "topic", "classic", Choices.GROUP_PROTOCOL),
            ElementSetting.choice("autoOffsetReset", "auto.offset.reset", "topic", "earliest", Choices.OFFSET_RESET),
            ElementSetting.choice("commit", "commit", "delivery", "auto", Choices.COMMIT),
            ElementSetting.text("maxRecords", "max.records", "delivery", "500"),
            ElementSetting.text("pollTimeoutMs", "poll.timeout.ms", "timing", "1000"),
            ElementSetting.text("sessionTimeoutMs", "session.timeout.ms", "timing", ""),
            ElementSetting.text("timeoutMs", "timeout.ms", "timing", "5000"),
            ElementSetting.choice("failOnEmpty", "fail.on.empty", "checks", "false", Choices.BOOLEAN),
            ElementSetting.choice("stopOnEmpty", "stop.on.empty", "checks", "false", Choices.BOOLEAN),
            ElementSetting.choice("checkSequence", "check.sequence", "checks", "false", Choices.BOOLEAN),
            ElementSetting.text("checkRegex", "check.regex", "checks", "")),
            side("value", List.of("Decode", "SchemaFile", "SchemaMessage", "SchemaFraming", "Assert"), SCHEMA_CHOICES),
            side("key", List.of("Decode", "SchemaFile", "SchemaMessage", "SchemaFraming", "Assert"), SCHEMA_CHOICES),
            REGISTRY,
            List.of(ElementSetting.edited("extraProperties", "extra.properties", "client", "", TextAreaEditor.class)));

    public KafkaConsumer() {
        super(SETTINGS, KafkaConsumerSampler::new);
    }

    @Override
    public void threadStarted() {
        // the consumer opens at the thread's first sample
    }

    /** JMeter calls this on the ending thread, after its last sample: the consumer leaves its group now. */
    @Override
    public void threadFinished() {
        closeAtThreadEnd();
    }

    // What JMeter sets before a sample (TestBeanHelper); the defaults are the table's.
    private String topic, timeoutMs, extraProperties, groupId, assignment, groupProtocol, autoOffsetReset, commit,
            maxRecords, pollTimeoutMs, sessionTimeoutMs, failOnEmpty, stopOnEmpty, checkSequence, checkRegex, valueDecode,
            valueAssert, keyDecode, keyAssert, valueSchemaFile, valueSchemaMessage, valueSchemaFraming, keySchemaFile,
            keySchemaMessage, keySchemaFraming, schemaRegistryUrl, schemaRegistryAuth, schemaRegistryUsername,
            schemaRegistryPassword, schemaRegistrySslCaLocation, schemaRegistrySslCertificateLocation,
            schemaRegistrySslKeyLocation, schemaRegistrySslKeyPassword, schemaRegistryTimeoutMs;
}
