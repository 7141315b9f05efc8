package io.kafkanative.jmeter;

import java.util.List;

import org.apache.jmeter.testbeans.gui.TextAreaEditor;

/**
 * Kafka Lag Monitor: each sample reads a consumer group's lag on a topic and fails when it keeps growing, as
 * {@link KafkaLagSampler} does for the Java Request. Run it under a timer in a thread group of its own.
 */
public class KafkaLagMonitor extends KafkaElement<KafkaLagSampler> {

    private static final long serialVersionUID = 1L;

    /** The form's settings, in order (KafkaLagMonitorBeanInfo builds the form from it). */
    static final List<ElementSetting> SETTINGS = List.of(
            ElementSetting.text("connection", null, "topic", KafkaConnection.DEFAULT_NAME),
            ElementSetting.text("topic", "topic", "topic", "jmeter-kafka-native"),
            ElementSetting.text("groupId", "group.id", "topic", "jmeter-kafka-native"),
            ElementSetting.text("lagWindows", "lag.windows", "checks", "3"),
            ElementSetting.text("lagTolerance", "lag.tolerance", "checks", "0"),
            ElementSetting.text("lagVariable", "lag.variable", "checks", "kafka.lag"),
            ElementSetting.text("timeoutMs", "timeout.ms", "timing", "5000"),
            ElementSetting.edited("extraProperties", "extra.properties", "client", "", TextAreaEditor.class));

    private String topic = "jmeter-kafka-native";
    private String groupId = "jmeter-kafka-native";
    private String lagWindows = "3";
    private String lagTolerance = "0";
    private String lagVariable = "kafka.lag";
    private String timeoutMs = "5000";
    private String extraProperties = "";

    @Override
    protected KafkaLagSampler newEngine() {
        return new KafkaLagSampler();
    }

    @Override
    protected List<ElementSetting> settings() {
        return SETTINGS;
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

    public String getLagWindows() {
        return lagWindows;
    }

    public void setLagWindows(String lagWindows) {
        this.lagWindows = lagWindows;
    }

    public String getLagTolerance() {
        return lagTolerance;
    }

    public void setLagTolerance(String lagTolerance) {
        this.lagTolerance = lagTolerance;
    }

    public String getLagVariable() {
        return lagVariable;
    }

    public void setLagVariable(String lagVariable) {
        this.lagVariable = lagVariable;
    }

    public String getTimeoutMs() {
        return timeoutMs;
    }

    public void setTimeoutMs(String timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    public String getExtraProperties() {
        return extraProperties;
    }

    public void setExtraProperties(String extraProperties) {
        this.extraProperties = extraProperties;
    }
}
