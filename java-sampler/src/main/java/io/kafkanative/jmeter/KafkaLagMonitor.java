package io.kafkanative.jmeter;

import java.util.List;

import lombok.Getter;
import lombok.Setter;

import org.apache.jmeter.testbeans.gui.TextAreaEditor;

/**
 * Kafka Lag Monitor: each sample reads a consumer group's lag on a topic and fails when it keeps growing, as
 * {@link KafkaLagSampler} does for the Java Request. Run it under a timer in a thread group of its own.
 */
// Lombok writes each field's public getter and setter: JMeter's TestBean introspection needs one per property.
@Getter
@Setter
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

    public KafkaLagMonitor() {
        super(SETTINGS, KafkaLagSampler::new);
    }

    // What JMeter sets before a sample (TestBeanHelper); the defaults are the table's.
    private String topic, timeoutMs, extraProperties, groupId, lagWindows, lagTolerance, lagVariable;
}
