package io.kafkanative.jmeter;

/** The Kafka Consumer element's form (see {@link KafkaBeanInfo}; texts in KafkaConsumerResources.properties). */
public class KafkaConsumerBeanInfo extends KafkaBeanInfo {

    public KafkaConsumerBeanInfo() {
        super(KafkaConsumer.class, KafkaConsumer.SETTINGS);
    }
}
