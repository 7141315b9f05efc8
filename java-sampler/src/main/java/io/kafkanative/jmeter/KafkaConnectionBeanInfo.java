package io.kafkanative.jmeter;

/** The Kafka Connection element's form (see {@link KafkaBeanInfo}; texts in KafkaConnectionResources.properties). */
public class KafkaConnectionBeanInfo extends KafkaBeanInfo {

    public KafkaConnectionBeanInfo() {
        super(KafkaConnection.class, KafkaConnection.SETTINGS);
    }
}
