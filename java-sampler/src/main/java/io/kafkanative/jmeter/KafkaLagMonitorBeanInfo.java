package io.kafkanative.jmeter;

/** The Kafka LagMonitor element's form (see {@link KafkaBeanInfo}; texts in KafkaLagMonitorResources.properties). */
public class KafkaLagMonitorBeanInfo extends KafkaBeanInfo {

    public KafkaLagMonitorBeanInfo() {
        super(KafkaLagMonitor.class, KafkaLagMonitor.SETTINGS);
    }
}
