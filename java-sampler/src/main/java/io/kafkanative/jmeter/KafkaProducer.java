package io.kafkanative.jmeter;

import java.util.List;

import org.apache.jmeter.samplers.Interruptible;
import org.apache.jmeter.testbeans.gui.FileEditor;
import org.apache.jmeter.testbeans.gui.PasswordEditor;
import org.apache.jmeter.testbeans.gui.TextAreaEditor;

/**
 * Kafka Producer: sends {@code messages.per.sample} messages per sample through the engine and waits for their
 * acks, as {@link KafkaProducerSampler} does for the Java Request (same engine, same settings and results).
 *
 * <p>Settings are read once per thread, at its first sample; only {@code value} (value.mode=jmeter, or the JSON of
 * a schema mode with schema input jmeter, typically {@code ${payload}} from a CSV Data Set) is passed with every
 * sample. The Schema group holds the schema modes' settings (schema file or registry subject, field rules, the
 * registry and its credentials); blank fields are left to the engine's defaults.
 */
public class KafkaProducer extends KafkaElement<KafkaProducerSampler> implements Interruptible {

    private static final long serialVersionUID = 1L;

    /** The form's settings, in order (KafkaProducerBeanInfo builds the form from it). */
    static final List<ElementSetting> SETTINGS = List.of(
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
            ElementSetting.perSample("value", "message"),
            ElementSetting.choice("keyMode", "key.mode", "message", "none", Choices.KEY_MODE),
            ElementSetting.text("key", "key", "message", ""),
            ElementSetting.text("headers", "headers", "message", ""),
            ElementSetting.choice("stampTime", "stamp.time", "message", "false", Choices.BOOLEAN),
            ElementSetting.edited("valueSchemaFile", "value.schema.file", "schema", "", FileEditor.class),
            ElementSetting.text("valueSchemaMessage", "value.schema.message", "schema", ""),
            ElementSetting.text("valueSchemaSubject", "value.schema.subject", "schema", ""),
            ElementSetting.text("valueSchemaVersion", "value.schema.version", "schema", ""),
            ElementSetting.text("valueSchemaRules", "value.schema.rules", "schema", ""),
            ElementSetting.edited("valueSchemaRulesFile", "value.schema.rules.file", "schema", "", FileEditor.class),
            ElementSetting.choice("valueSchemaInput", "value.schema.input", "schema", "", Choices.SCHEMA_INPUT),
            ElementSetting.choice("valueSubjectNameStrategy", "value.subject.name.strategy", "schema",
                    "", Choices.SUBJECT_NAME_STRATEGY),
            ElementSetting.choice("valueSchemaFraming", "value.schema.framing", "schema", "", Choices.SCHEMA_FRAMING),
            ElementSetting.edited("keySchemaFile", "key.schema.file", "schema", "", FileEditor.class),
            ElementSetting.text("keySchemaMessage", "key.schema.message", "schema", ""),
            ElementSetting.text("keySchemaSubject", "key.schema.subject", "schema", ""),
            ElementSetting.text("keySchemaVersion", "key.schema.version", "schema", ""),
            ElementSetting.text("keySchemaRules", "key.schema.rules", "schema", ""),
            ElementSetting.edited("keySchemaRulesFile", "key.schema.rules.file", "schema", "", FileEditor.class),
            ElementSetting.choice("keySubjectNameStrategy", "key.subject.name.strategy", "schema",
                    "", Choices.SUBJECT_NAME_STRATEGY),
            ElementSetting.choice("keySchemaFraming", "key.schema.framing", "schema", "", Choices.SCHEMA_FRAMING),
            ElementSetting.text("schemaRegistryUrl", "schema.registry.url", "schema", ""),
            ElementSetting.text("schemaRegistryUsername", "schema.registry.username", "schema", ""),
            ElementSetting.edited("schemaRegistryPassword", "schema.registry.password", "schema",
                    "", PasswordEditor.class),
            ElementSetting.edited("schemaRegistrySslCaLocation", "schema.registry.ssl.ca.location", "schema",
                    "", FileEditor.class),
            ElementSetting.text("schemaRegistryTimeoutMs", "schema.registry.timeout.ms", "schema", ""),
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
            ElementSetting.text("timeoutMs", "timeout.ms", "timing", ""),
            ElementSetting.text("targetRate", "target.rate", "timing", ""),
            ElementSetting.choice("preflight", "preflight", "checks", "warn", Choices.PREFLIGHT),
            ElementSetting.choice("audit", "audit", "checks", "false", Choices.BOOLEAN),
            ElementSetting.text("auditTimeoutMs", "audit.timeout.ms", "checks", "60000"),
            ElementSetting.edited("extraProperties", "extra.properties", "client", "", TextAreaEditor.class));

    private String topic = "jmeter-kafka-native";
    private String partition = "";
    private String topicCreate = "false";
    private String topicPartitions = "";
    private String topicReplication = "";
    private String valueMode = "fixed";
    private String recordSize = "1024";
    private String valueTemplate = "";
    private String payloadFile = "";
    private String value = "";
    private String keyMode = "none";
    private String key = "";
    private String headers = "";
    private String stampTime = "false";
    private String valueSchemaFile = "";
    private String valueSchemaMessage = "";
    private String valueSchemaSubject = "";
    private String valueSchemaVersion = "";
    private String valueSchemaRules = "";
    private String valueSchemaRulesFile = "";
    private String valueSchemaInput = "";
    private String valueSubjectNameStrategy = "";
    private String valueSchemaFraming = "";
    private String keySchemaFile = "";
    private String keySchemaMessage = "";
    private String keySchemaSubject = "";
    private String keySchemaVersion = "";
    private String keySchemaRules = "";
    private String keySchemaRulesFile = "";
    private String keySubjectNameStrategy = "";
    private String keySchemaFraming = "";
    private String schemaRegistryUrl = "";
    private String schemaRegistryUsername = "";
    private String schemaRegistryPassword = "";
    private String schemaRegistrySslCaLocation = "";
    private String schemaRegistryTimeoutMs = "";
    private String autoRegisterSchemas = "";
    private String policy = "capacity";
    private String acks = "";
    private String retries = "";
    private String enableIdempotence = "";
    private String lingerMs = "0";
    private String batchSize = "";
    private String compressionType = "none";
    private String producerScope = "test";
    private String producerPoolSize = "";
    private String messagesPerSample = "1";
    private String timeoutMs = "";
    private String targetRate = "";
    private String preflight = "warn";
    private String audit = "false";
    private String auditTimeoutMs = "60000";
    private String extraProperties = "";

    /** Whether this thread's samples pass {@link #value} (decided at its first sample). */
    private transient Boolean valueFromJMeter;

    @Override
    protected KafkaProducerSampler newEngine() {
        return new KafkaProducerSampler();
    }

    @Override
    protected List<ElementSetting> settings() {
        return SETTINGS;
    }

    /**
     * The value for value.mode=jmeter, or for a schema mode with schema input jmeter (JSON encoded against the
     * schema), evaluated for this sample (JMeter set the field just before it). Whether the value comes from JMeter
     * is decided once per thread, from the element's properties like the rest of its settings.
     */
    @Override
    protected String perSampleValue() {
        if (valueFromJMeter == null) {
            valueFromJMeter = ProducerParameters.VALUE_MODE_JMETER.equals(getPropertyAsString("valueMode").trim())
                    || ProducerParameters.VALUE_MODE_JMETER.equals(getPropertyAsString("valueSchemaInput").trim());
        }
        return valueFromJMeter ? value : null;
    }

    @Override
    public boolean interrupt() {
        KafkaProducerSampler engine = engine();
        return engine == null || engine.interrupt();
    }

    public String getTopic() {
        return topic;
    }

    public void setTopic(String topic) {
        this.topic = topic;
    }

    public String getPartition() {
        return partition;
    }

    public void setPartition(String partition) {
        this.partition = partition;
    }

    public String getTopicCreate() {
        return topicCreate;
    }

    public void setTopicCreate(String topicCreate) {
        this.topicCreate = topicCreate;
    }

    public String getTopicPartitions() {
        return topicPartitions;
    }

    public void setTopicPartitions(String topicPartitions) {
        this.topicPartitions = topicPartitions;
    }

    public String getTopicReplication() {
        return topicReplication;
    }

    public void setTopicReplication(String topicReplication) {
        this.topicReplication = topicReplication;
    }

    public String getValueMode() {
        return valueMode;
    }

    public void setValueMode(String valueMode) {
        this.valueMode = valueMode;
    }

    public String getRecordSize() {
        return recordSize;
    }

    public void setRecordSize(String recordSize) {
        this.recordSize = recordSize;
    }

    public String getValueTemplate() {
        return valueTemplate;
    }

    public void setValueTemplate(String valueTemplate) {
        this.valueTemplate = valueTemplate;
    }

    public String getPayloadFile() {
        return payloadFile;
    }

    public void setPayloadFile(String payloadFile) {
        this.payloadFile = payloadFile;
    }

    public String getValue() {
        return value;
    }

    public void setValue(String value) {
        this.value = value;
    }

    public String getKeyMode() {
        return keyMode;
    }

    public void setKeyMode(String keyMode) {
        this.keyMode = keyMode;
    }

    public String getKey() {
        return key;
    }

    public void setKey(String key) {
        this.key = key;
    }

    public String getHeaders() {
        return headers;
    }

    public void setHeaders(String headers) {
        this.headers = headers;
    }

    public String getStampTime() {
        return stampTime;
    }

    public void setStampTime(String stampTime) {
        this.stampTime = stampTime;
    }

    public String getPolicy() {
        return policy;
    }

    public void setPolicy(String policy) {
        this.policy = policy;
    }

    public String getAcks() {
        return acks;
    }

    public void setAcks(String acks) {
        this.acks = acks;
    }

    public String getRetries() {
        return retries;
    }

    public void setRetries(String retries) {
        this.retries = retries;
    }

    public String getEnableIdempotence() {
        return enableIdempotence;
    }

    public void setEnableIdempotence(String enableIdempotence) {
        this.enableIdempotence = enableIdempotence;
    }

    public String getLingerMs() {
        return lingerMs;
    }

    public void setLingerMs(String lingerMs) {
        this.lingerMs = lingerMs;
    }

    public String getBatchSize() {
        return batchSize;
    }

    public void setBatchSize(String batchSize) {
        this.batchSize = batchSize;
    }

    public String getCompressionType() {
        return compressionType;
    }

    public void setCompressionType(String compressionType) {
        this.compressionType = compressionType;
    }

    public String getProducerScope() {
        return producerScope;
    }

    public void setProducerScope(String producerScope) {
        this.producerScope = producerScope;
    }

    public String getProducerPoolSize() {
        return producerPoolSize;
    }

    public void setProducerPoolSize(String producerPoolSize) {
        this.producerPoolSize = producerPoolSize;
    }

    public String getMessagesPerSample() {
        return messagesPerSample;
    }

    public void setMessagesPerSample(String messagesPerSample) {
        this.messagesPerSample = messagesPerSample;
    }

    public String getTimeoutMs() {
        return timeoutMs;
    }

    public void setTimeoutMs(String timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    public String getTargetRate() {
        return targetRate;
    }

    public void setTargetRate(String targetRate) {
        this.targetRate = targetRate;
    }

    public String getPreflight() {
        return preflight;
    }

    public void setPreflight(String preflight) {
        this.preflight = preflight;
    }

    public String getAudit() {
        return audit;
    }

    public void setAudit(String audit) {
        this.audit = audit;
    }

    public String getAuditTimeoutMs() {
        return auditTimeoutMs;
    }

    public void setAuditTimeoutMs(String auditTimeoutMs) {
        this.auditTimeoutMs = auditTimeoutMs;
    }

    public String getExtraProperties() {
        return extraProperties;
    }

    public void setExtraProperties(String extraProperties) {
        this.extraProperties = extraProperties;
    }

    public String getValueSchemaFile() {
        return valueSchemaFile;
    }

    public void setValueSchemaFile(String valueSchemaFile) {
        this.valueSchemaFile = valueSchemaFile;
    }

    public String getValueSchemaMessage() {
        return valueSchemaMessage;
    }

    public void setValueSchemaMessage(String valueSchemaMessage) {
        this.valueSchemaMessage = valueSchemaMessage;
    }

    public String getValueSchemaSubject() {
        return valueSchemaSubject;
    }

    public void setValueSchemaSubject(String valueSchemaSubject) {
        this.valueSchemaSubject = valueSchemaSubject;
    }

    public String getValueSchemaVersion() {
        return valueSchemaVersion;
    }

    public void setValueSchemaVersion(String valueSchemaVersion) {
        this.valueSchemaVersion = valueSchemaVersion;
    }

    public String getValueSchemaRules() {
        return valueSchemaRules;
    }

    public void setValueSchemaRules(String valueSchemaRules) {
        this.valueSchemaRules = valueSchemaRules;
    }

    public String getValueSchemaRulesFile() {
        return valueSchemaRulesFile;
    }

    public void setValueSchemaRulesFile(String valueSchemaRulesFile) {
        this.valueSchemaRulesFile = valueSchemaRulesFile;
    }

    public String getValueSchemaInput() {
        return valueSchemaInput;
    }

    public void setValueSchemaInput(String valueSchemaInput) {
        this.valueSchemaInput = valueSchemaInput;
    }

    public String getValueSubjectNameStrategy() {
        return valueSubjectNameStrategy;
    }

    public void setValueSubjectNameStrategy(String valueSubjectNameStrategy) {
        this.valueSubjectNameStrategy = valueSubjectNameStrategy;
    }

    public String getValueSchemaFraming() {
        return valueSchemaFraming;
    }

    public void setValueSchemaFraming(String valueSchemaFraming) {
        this.valueSchemaFraming = valueSchemaFraming;
    }

    public String getKeySchemaFile() {
        return keySchemaFile;
    }

    public void setKeySchemaFile(String keySchemaFile) {
        this.keySchemaFile = keySchemaFile;
    }

    public String getKeySchemaMessage() {
        return keySchemaMessage;
    }

    public void setKeySchemaMessage(String keySchemaMessage) {
        this.keySchemaMessage = keySchemaMessage;
    }

    public String getKeySchemaSubject() {
        return keySchemaSubject;
    }

    public void setKeySchemaSubject(String keySchemaSubject) {
        this.keySchemaSubject = keySchemaSubject;
    }

    public String getKeySchemaVersion() {
        return keySchemaVersion;
    }

    public void setKeySchemaVersion(String keySchemaVersion) {
        this.keySchemaVersion = keySchemaVersion;
    }

    public String getKeySchemaRules() {
        return keySchemaRules;
    }

    public void setKeySchemaRules(String keySchemaRules) {
        this.keySchemaRules = keySchemaRules;
    }

    public String getKeySchemaRulesFile() {
        return keySchemaRulesFile;
    }

    public void setKeySchemaRulesFile(String keySchemaRulesFile) {
        this.keySchemaRulesFile = keySchemaRulesFile;
    }

    public String getKeySubjectNameStrategy() {
        return keySubjectNameStrategy;
    }

    public void setKeySubjectNameStrategy(String keySubjectNameStrategy) {
        this.keySubjectNameStrategy = keySubjectNameStrategy;
    }

    public String getKeySchemaFraming() {
        return keySchemaFraming;
    }

    public void setKeySchemaFraming(String keySchemaFraming) {
        this.keySchemaFraming = keySchemaFraming;
    }

    public String getSchemaRegistryUrl() {
        return schemaRegistryUrl;
    }

    public void setSchemaRegistryUrl(String schemaRegistryUrl) {
        this.schemaRegistryUrl = schemaRegistryUrl;
    }

    public String getSchemaRegistryUsername() {
        return schemaRegistryUsername;
    }

    public void setSchemaRegistryUsername(String schemaRegistryUsername) {
        this.schemaRegistryUsername = schemaRegistryUsername;
    }

    public String getSchemaRegistryPassword() {
        return schemaRegistryPassword;
    }

    public void setSchemaRegistryPassword(String schemaRegistryPassword) {
        this.schemaRegistryPassword = schemaRegistryPassword;
    }

    public String getSchemaRegistrySslCaLocation() {
        return schemaRegistrySslCaLocation;
    }

    public void setSchemaRegistrySslCaLocation(String schemaRegistrySslCaLocation) {
        this.schemaRegistrySslCaLocation = schemaRegistrySslCaLocation;
    }

    public String getSchemaRegistryTimeoutMs() {
        return schemaRegistryTimeoutMs;
    }

    public void setSchemaRegistryTimeoutMs(String schemaRegistryTimeoutMs) {
        this.schemaRegistryTimeoutMs = schemaRegistryTimeoutMs;
    }

    public String getAutoRegisterSchemas() {
        return autoRegisterSchemas;
    }

    public void setAutoRegisterSchemas(String autoRegisterSchemas) {
        this.autoRegisterSchemas = autoRegisterSchemas;
    }
}
