package io.kafkanative.jmeter;

import java.util.List;

import org.apache.jmeter.samplers.Interruptible;
import org.apache.jmeter.testbeans.gui.TextAreaEditor;

/**
 * Kafka Consumer: one native poll of up to {@code max.records} records per sample, with the engine's verdict
 * (fail.on.empty, check.sequence, check.regex), as {@link KafkaConsumerSampler} does for the Java Request.
 * Settings are read once per thread, at its first sample.
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
}
