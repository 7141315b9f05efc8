package io.kafkanative.jmeter;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.jmeter.config.Arguments;
import org.apache.jmeter.protocol.java.sampler.AbstractJavaSamplerClient;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerContext;
import org.apache.jmeter.samplers.SampleResult;
import org.apache.jmeter.testelement.TestElement;
import org.apache.jmeter.threads.JMeterContextService;
import org.apache.jmeter.threads.JMeterVariables;

/**
 * Any of our Java Request samplers on one JMeter thread, driven as JMeter's JavaSampler drives it: the GUI's
 * default parameters with the test's changes, setupTest once, runTest per sample, teardownTest at the end.
 */
final class JavaRequestThread<S extends AbstractJavaSamplerClient> implements AutoCloseable {

    static {
        TestJMeter.init();
    }

    final S sampler;
    final JavaSamplerContext context;

    JavaRequestThread(S sampler, List<ProducerParameters.Parameter> defaults, String label,
            Map<String, String> changes) {
        this.sampler = sampler;
        if (JMeterContextService.getContext().getVariables() == null) {
            JMeterContextService.getContext().setVariables(new JMeterVariables());
        }
        Map<String, String> parameters = new LinkedHashMap<>();
        parameters.put("bootstrap.servers", TestKafka.BOOTSTRAP); // outside JMeter ${__P(...)} is not evaluated
        parameters.putAll(changes);
        Arguments arguments = new Arguments();
        for (ProducerParameters.Parameter parameter : defaults) {
            String name = parameter.name();
            String value = parameters.getOrDefault(name, parameter.defaultValue());
            // The defaults' ${__P(...)} are not evaluated outside JMeter: leave them out unless the test sets them.
            arguments.addArgument(name, value.startsWith("${") ? "" : value);
            parameters.remove(name);
        }
        parameters.forEach(arguments::addArgument);
        arguments.addArgument(TestElement.NAME, label);
        context = new JavaSamplerContext(arguments);
        sampler.setupTest(context);
    }

    static JavaRequestThread<KafkaConsumerSampler> consumer(Map<String, String> changes) {
        return new JavaRequestThread<>(new KafkaConsumerSampler(), ConsumerParameters.CONSUMER_DEFAULTS,
                "Kafka poll", changes);
    }

    static JavaRequestThread<KafkaLagSampler> lag(Map<String, String> changes) {
        return new JavaRequestThread<>(new KafkaLagSampler(), ConsumerParameters.LAG_DEFAULTS, "Kafka lag", changes);
    }

    ConsumerSampleResult sample() {
        SampleResult result = sampler.runTest(context);
        return (ConsumerSampleResult) result;
    }

    @Override
    public void close() {
        sampler.teardownTest(context);
    }
}
