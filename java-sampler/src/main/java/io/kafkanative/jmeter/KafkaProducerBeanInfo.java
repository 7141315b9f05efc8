package io.kafkanative.jmeter;

/** The Kafka Producer element's form (see {@link KafkaBeanInfo}; texts in KafkaProducerResources.properties). */
public class KafkaProducerBeanInfo extends KafkaBeanInfo {

    public KafkaProducerBeanInfo() {
        super(KafkaProducer.class, KafkaProducer.SETTINGS);
    }
}
