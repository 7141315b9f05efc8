package io.kafkanative.jmeter;

import java.util.List;

import org.apache.jmeter.samplers.Interruptible;
import org.apache.jmeter.testbeans.gui.FileEditor;
import org.apache.jmeter.testbeans.gui.PasswordEditor;
import org.apache.jmeter.testbeans.gui.TextAreaEditor;

/**
 * Kafka Consumer: one native poll of up to {@code max.records} records per sample, with the engine's verdict
 * (fail.on.empty, check.sequence, check.regex), as {@link KafkaConsumerSampler} does for the Java Request.
 * Settings are read once per thread, at its first sample. The Schema group decodes what is read (each record's
 * schema id resolved through the registry, or a schema file) and asserts on a field; blank fields: no decoding.
 */
public class KafkaConsumer extends KafkaElement<KafkaConsumerSampler> implements Interruptible {

    private static final long serialVersionUID = 1L;

    /** The form's settings, in order (KafkaConsumerBeanInfo builds the form from it). */
    static final List<ElementSetting> SETTINGS = List.of(
            ElementSetting.text("connection", null, "topic", KafkaConnection.DEFAULT_NAME),
            ElementSetting.text("topic", "topic", "topic", "jmeter-kafka-native"),
            ElementSetting.text("groupId", "group.id", "topic", "jmeter-kafka-native"),
            ElementSetting.choice("assignment", "assignment", "topic", "all", Choices.ASSIGNMENT),
            ElementSetting.choice("autoOffsetReset", "auto.offset.reset", "topic", "earliest", Choices.OFFSET_RESET),
            ElementSetting.choice("commit", "commit", "delivery", "auto", Choices.COMMIT),
            ElementSetting.text("maxRecords", "max.records", "delivery", "500"),
            ElementSetting.text("pollTimeoutMs", "poll.timeout.ms", "timing", "1000"),
            ElementSetting.text("sessionTimeoutMs", "session.timeout.ms", "timing", "45000"),
            ElementSetting.text("timeoutMs", "timeout.ms", "timing", "5000"),
            ElementSetting.choice("failOnEmpty", "fail.on.empty", "checks", "false", Choices.BOOLEAN),
            ElementSetting.choice("stopOnEmpty", "stop.on.empty", "checks", "false", Choices.BOOLEAN),
            ElementSetting.choice("checkSequence", "check.sequence", "checks", "false", Choices.BOOLEAN),
            ElementSetting.text("checkRegex", "check.regex", "checks", ""),
            ElementSetting.choice("valueDecode", "value.decode", "schema", "", Choices.DECODE),
            ElementSetting.edited("valueSchemaFile", "value.schema.file", "schema", "", FileEditor.class),
            ElementSetting.text("valueSchemaMessage", "value.schema.message", "schema", ""),
            ElementSetting.choice("valueSchemaFraming", "value.schema.framing", "schema", "", Choices.SCHEMA_FRAMING),
            ElementSetting.text("valueAssert", "value.assert", "schema", ""),
            ElementSetting.choice("keyDecode", "key.decode", "schema", "", Choices.DECODE),
            ElementSetting.edited("keySchemaFile", "key.schema.file", "schema", "", FileEditor.class),
            ElementSetting.text("keySchemaMessage", "key.schema.message", "schema", ""),
            ElementSetting.choice("keySchemaFraming", "key.schema.framing", "schema", "", Choices.SCHEMA_FRAMING),
            ElementSetting.text("keyAssert", "key.assert", "schema", ""),
            ElementSetting.text("schemaRegistryUrl", "schema.registry.url", "schema", ""),
            ElementSetting.text("schemaRegistryUsername", "schema.registry.username", "schema", ""),
            ElementSetting.edited("schemaRegistryPassword", "schema.registry.password", "schema",
                    "", PasswordEditor.class),
            ElementSetting.edited("schemaRegistrySslCaLocation", "schema.registry.ssl.ca.location", "schema",
                    "", FileEditor.class),
            ElementSetting.text("schemaRegistryTimeoutMs", "schema.registry.timeout.ms", "schema", ""),
            ElementSetting.edited("extraProperties", "extra.properties", "client", "", TextAreaEditor.class));

    private String topic = "jmeter-kafka-native";
    private String groupId = "jmeter-kafka-native";
    private String assignment = "all";
    private String autoOffsetReset = "earliest";
    private String commit = "auto";
    private String maxRecords = "500";
    private String pollTimeoutMs = "1000";
    private String sessionTimeoutMs = "45000";
    private String timeoutMs = "5000";
    private String failOnEmpty = "false";
    private String stopOnEmpty = "false";
    private String checkSequence = "false";
    private String checkRegex = "";
    private String valueDecode = "";
    private String valueSchemaFile = "";
    private String valueSchemaMessage = "";
    private String valueSchemaFraming = "";
    private String valueAssert = "";
    private String keyDecode = "";
    private String keySchemaFile = "";
    private String keySchemaMessage = "";
    private String keySchemaFraming = "";
    private String keyAssert = "";
    private String schemaRegistryUrl = "";
    private String schemaRegistryUsername = "";
    private String schemaRegistryPassword = "";
    private String schemaRegistrySslCaLocation = "";
    private String schemaRegistryTimeoutMs = "";
    private String extraProperties = "";

    @Override
    protected KafkaConsumerSampler newEngine() {
        return new KafkaConsumerSampler();
    }

    @Override
    protected List<ElementSetting> settings() {
        return SETTINGS;
    }

    @Override
    public boolean interrupt() {
        KafkaConsumerSampler engine = engine();
        return engine == null || engine.interrupt();
    }

    public String getTopic() {
        return topic;
    }

    public void setTopic(String topic) {
        this.topic = topic;
    }

    public String getGroupId() {
        return groupId;
    }

    public void setGroupId(String groupId) {
        this.groupId = groupId;
    }

    public String getAssignment() {
        return assignment;
    }

    public void setAssignment(String assignment) {
        this.assignment = assignment;
    }

    public String getAutoOffsetReset() {
        return autoOffsetReset;
    }

    public void setAutoOffsetReset(String autoOffsetReset) {
        this.autoOffsetReset = autoOffsetReset;
    }

    public String getCommit() {
        return commit;
    }

    public void setCommit(String commit) {
        this.commit = commit;
    }

    public String getMaxRecords() {
        return maxRecords;
    }

    public void setMaxRecords(String maxRecords) {
        this.maxRecords = maxRecords;
    }

    public String getPollTimeoutMs() {
        return pollTimeoutMs;
    }

    public void setPollTimeoutMs(String pollTimeoutMs) {
        this.pollTimeoutMs = pollTimeoutMs;
    }

    public String getSessionTimeoutMs() {
        return sessionTimeoutMs;
    }

    public void setSessionTimeoutMs(String sessionTimeoutMs) {
        this.sessionTimeoutMs = sessionTimeoutMs;
    }

    public String getTimeoutMs() {
        return timeoutMs;
    }

    public void setTimeoutMs(String timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    public String getFailOnEmpty() {
        return failOnEmpty;
    }

    public void setFailOnEmpty(String failOnEmpty) {
        this.failOnEmpty = failOnEmpty;
    }

    public String getStopOnEmpty() {
        return stopOnEmpty;
    }

    public void setStopOnEmpty(String stopOnEmpty) {
        this.stopOnEmpty = stopOnEmpty;
    }

    public String getCheckSequence() {
        return checkSequence;
    }

    public void setCheckSequence(String checkSequence) {
        this.checkSequence = checkSequence;
    }

    public String getCheckRegex() {
        return checkRegex;
    }

    public void setCheckRegex(String checkRegex) {
        this.checkRegex = checkRegex;
    }

    public String getExtraProperties() {
        return extraProperties;
    }

    public void setExtraProperties(String extraProperties) {
        this.extraProperties = extraProperties;
    }

    public String getValueDecode() {
        return valueDecode;
    }

    public void setValueDecode(String valueDecode) {
        this.valueDecode = valueDecode;
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

    public String getValueSchemaFraming() {
        return valueSchemaFraming;
    }

    public void setValueSchemaFraming(String valueSchemaFraming) {
        this.valueSchemaFraming = valueSchemaFraming;
    }

    public String getValueAssert() {
        return valueAssert;
    }

    public void setValueAssert(String valueAssert) {
        this.valueAssert = valueAssert;
    }

    public String getKeyDecode() {
        return keyDecode;
    }

    public void setKeyDecode(String keyDecode) {
        this.keyDecode = keyDecode;
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

    public String getKeySchemaFraming() {
        return keySchemaFraming;
    }

    public void setKeySchemaFraming(String keySchemaFraming) {
        this.keySchemaFraming = keySchemaFraming;
    }

    public String getKeyAssert() {
        return keyAssert;
    }

    public void setKeyAssert(String keyAssert) {
        this.keyAssert = keyAssert;
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
}
