package io.kafkanative.jmeter;

import java.util.List;
import java.util.Map;

import lombok.Getter;
import lombok.Setter;

import org.apache.jmeter.testbeans.gui.FileEditor;
import org.apache.jmeter.testbeans.gui.TextAreaEditor;

/**
 * Kafka Producer: sends {@code messages.per.sample} messages per sample through the engine and waits for their
 * acks, as {@link KafkaProducerSampler} does for the Java Request (same engine, same settings and results).
 *
 * <p>Settings are read once per thread, at its first sample; only {@code value} (value.mode=jmeter, or the JSON of
 * a schema mode with schema input jmeter, typically {@code ${payload}} from a CSV Data Set), {@code key} and
 * {@code headers} are passed with every sample, as JMeter evaluated them. The Schema group holds the schema modes' settings (schema file or registry subject, field rules, the
 * registry and its credentials); blank fields are left to the engine's defaults.
 */
// Lombok writes each field's public getter and setter: JMeter's TestBean introspection needs one per property.
@Getter
@Setter
public class KafkaProducer extends KafkaRecordsElement<KafkaProducerSampler> {

    private static final long serialVersionUID = 1L;

    /** The Schema group's dropdowns, by setting name without its side. */
    private static final Map<String, List<String>> SCHEMA_CHOICES = Map.of("SchemaInput", Choices.SCHEMA_INPUT,
            "SubjectNameStrategy", Choices.SUBJECT_NAME_STRATEGY, "SchemaFraming", Choices.SCHEMA_FRAMING);

    /** The form's settings, in order (KafkaProducerBeanInfo builds the form from it). */
    static final List<ElementSetting> SETTINGS = ElementSetting.concat(List.of(
            ElementSetting.text("connection", null, "topic", KafkaConnection.DEFAULT_NAME),
            ElementSetting.text("topic", "topic", "topic", "jmeter-kafka-native"),
            ElementSetting.text("partition", "partition", "topic", ""),
            ElementSetting.choice("topicCreate", "topic.create", "topic", "false", Choices.BOOLEAN),
            ElementSetting.text("topicPartitions", "topic.partitions", "topic", ""),
            ElementSetting.text("topicReplication", "topic.replication", "topic", ""),
            ElementSetting.choice("valueMode", "value.mode", "message", "fixed", Choices.VALUE_MODE),
            ElementSetting.text("recordSize", "record.size", "message", "1024"),
            ElementSetting.text("valueTemplate", "value.template", "message", ""),
            ElementSetting.edited("payloadFile", "payload.file", "message", "", FileEditor.class),
            ElementSetting.text("payloadFileMaxBytes", "payload.file.max.bytes", "message", ""),
            ElementSetting.perSample("value", "message"),
            ElementSetting.choice("keyMode", "key.mode", "message", "none", Choices.KEY_MODE),
            ElementSetting.variable("key", "key", "message"),
            ElementSetting.variable("headers", "headers", "message"),
            ElementSetting.choice("stampTime", "stamp.time", "message", "false", Choices.BOOLEAN)),
            side("value", List.of("SchemaFile", "SchemaMessage", "SchemaSubject", "SchemaVersion", "SchemaRules",
                    "SchemaRulesFile", "SchemaInput", "SubjectNameStrategy", "SchemaFraming"), SCHEMA_CHOICES),
            side("key", List.of("SchemaFile", "SchemaMessage", "SchemaSubject", "SchemaVersion", "SchemaRules",
                    "SchemaRulesFile", "SchemaInput", "SubjectNameStrategy", "SchemaFraming"), SCHEMA_CHOICES),
            REGISTRY,
            List.of(
            ElementSetting.choice("autoRegisterSchemas", "auto.register.schemas", "schema", "", Choices.BOOLEAN),
            ElementSetting.choice("policy", "policy", "delivery", "capacity", Choices.POLICY),
            ElementSetting.choice("acks", "acks", "delivery", "", Choices.ACKS),
            ElementSetting.text("retries", "retries", "delivery", ""),
            ElementSetting.choice("enableIdempotence", "enable.idempotence", "delivery", "", Choices.BOOLEAN),
            ElementSetting.text("lingerMs", "linger.ms", "delivery", "0"),
            ElementSetting.text("batchSize", "batch.size", "delivery", ""),
            ElementSetting.choice("compressionType", "compression.type", "delivery", "none", Choices.COMPRESSION),
            ElementSetting.choice("producerScope", "producer.scope", "delivery", "test", Choices.PRODUCER_SCOPE),
            ElementSetting.text("producerPoolSize", "producer.pool.size", "delivery", ""),
            ElementSetting.text("messagesPerSample", "messages.per.sample", "delivery", "1"),
            ElementSetting.text("transactionalIdPrefix", "transactional.id.prefix", "delivery", ""),
            ElementSetting.text("transactionSamples", "transaction.samples", "delivery", ""),
            ElementSetting.text("transactionAbortPercent", "transaction.abort.percent", "delivery", ""),
            ElementSetting.text("timeoutMs", "timeout.ms", "timing", ""),
            ElementSetting.text("targetRate", "target.rate", "timing", ""),
            ElementSetting.choice("preflight", "preflight", "checks", "warn", Choices.PREFLIGHT),
            ElementSetting.choice("audit", "audit", "checks", "false", Choices.BOOLEAN),
            ElementSetting.text("auditTimeoutMs", "audit.timeout.ms", "checks", "60000"),
            ElementSetting.edited("extraProperties", "extra.properties", "client", "", TextAreaEditor.class)));

    public KafkaProducer() {
        super(SETTINGS, KafkaProducerSampler::new);
    }

    // What JMeter sets before a sample (TestBeanHelper); the defaults are the table's.
    private String topic, timeoutMs, extraProperties, partition, topicCreate, topicPartitions, topicReplication,
            valueMode, recordSize, valueTemplate, payloadFile, payloadFileMaxBytes, value, keyMode, key, headers, stampTime,
            valueSchemaSubject, valueSchemaVersion, valueSchemaRules, valueSchemaRulesFile, valueSchemaInput,
            valueSubjectNameStrategy, keySchemaSubject, keySchemaVersion, keySchemaRules, keySchemaRulesFile, keySchemaInput,
            keySubjectNameStrategy, autoRegisterSchemas, policy, acks, retries, enableIdempotence, lingerMs, batchSize,
            compressionType, producerScope, producerPoolSize, messagesPerSample, transactionalIdPrefix,
            transactionSamples, transactionAbortPercent, targetRate, preflight, audit, auditTimeoutMs,
            valueSchemaFile, valueSchemaMessage, valueSchemaFraming, keySchemaFile, keySchemaMessage, keySchemaFraming,
            schemaRegistryUrl, schemaRegistryAuth, schemaRegistryUsername, schemaRegistryPassword,
            schemaRegistrySslCaLocation, schemaRegistrySslCertificateLocation, schemaRegistrySslKeyLocation,
            schemaRegistrySslKeyPassword, schemaRegistryTimeoutMs;

    /** Whether this thread's samples pass {@link #value} (decided at its first sample). */
    @Getter(lombok.AccessLevel.NONE)
    @Setter(lombok.AccessLevel.NONE)
    private transient Boolean valueFromJMeter;

    /**
     * The key and headers fields, and the value for value.mode=jmeter or for a schema mode with schema input jmeter
     * (JSON encoded against the schema), as JMeter evaluated them for this sample (it set the fields just before).
     * Whether the value comes from JMeter is decided once per thread, from the element's properties like the rest of
     * its settings.
     */
    @Override
    protected String readSample() {
        engine().perSample(key, headers);
        if (valueFromJMeter == null) {
            valueFromJMeter = ProducerParameters.VALUE_MODE_JMETER.equals(getPropertyAsString("valueMode").trim())
                    || ProducerParameters.VALUE_MODE_JMETER.equals(getPropertyAsString("valueSchemaInput").trim());
        }
        return valueFromJMeter ? value : null;
    }
}
