package io.kafkanative.jmeter;

import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.jmeter.config.Arguments;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerContext;
import org.apache.jmeter.testelement.TestElement;

/**
 * One Java Request element on one JMeter thread, driven as JMeter's JavaSampler drives it: the GUI's default
 * parameters with the test's changes, setupTest once, runTest per sample, teardownTest at the end.
 */
final class SamplerThread implements AutoCloseable {

    static final String LABEL = "Kafka send";

    static {
        TestJMeter.init();
    }

    final KafkaProducerSampler sampler = new KafkaProducerSampler();
    final JavaSamplerContext context;

    /** Opens a sampler on the test broker; {@code changes} replace defaults or add parameters. */
    SamplerThread(Map<String, String> changes) {
        Map<String, String> parameters = new LinkedHashMap<>();
        parameters.put("bootstrap.servers", TestKafka.BOOTSTRAP); // outside JMeter ${__P(...)} is not evaluated
        parameters.putAll(changes);
        Arguments arguments = new Arguments();
        for (ProducerParameters.Parameter parameter : ProducerParameters.DEFAULTS) {
            String name = parameter.name();
            arguments.addArgument(name, parameters.getOrDefault(name, parameter.defaultValue()));
            parameters.remove(name);
        }
        parameters.forEach(arguments::addArgument);
        arguments.addArgument(TestElement.NAME, LABEL); // as JavaSampler does before every sample
        context = new JavaSamplerContext(arguments);
        sampler.setupTest(context);
    }

    KafkaSampleResult sample() {
        return (KafkaSampleResult) sampler.runTest(context);
    }

    @Override
    public void close() {
        sampler.teardownTest(context);
    }
}
