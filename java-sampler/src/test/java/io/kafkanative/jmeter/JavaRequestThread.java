package io.kafkanative.jmeter;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.jmeter.config.Arguments;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerClient;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerContext;
import org.apache.jmeter.testelement.TestElement;
import org.apache.jmeter.threads.JMeterContextService;
import org.apache.jmeter.threads.JMeterVariables;

/**
 * One of our Java Request elements on one JMeter thread, driven as JMeter's JavaSampler drives it: the GUI's
 * default parameters with the test's changes, setupTest once, runTest per sample, teardownTest at the end.
 *
 * @param <S> the sampler
 * @param <R> its sample result
 */
final class JavaRequestThread<S extends AbstractNativeSampler<R> & JavaSamplerClient, R extends KafkaSampleResult>
        implements AutoCloseable {

    static final String PRODUCER_LABEL = "Kafka send";

    static {
        TestJMeter.init();
    }

    final S sampler;
    final JavaSamplerContext context;
    private final Class<R> resultType;

    private JavaRequestThread(S sampler, Class<R> resultType, List<ProducerParameters.Parameter> defaults,
            String label, Map<String, String> changes) {
        this.sampler = sampler;
        this.resultType = resultType;
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
        arguments.addArgument(TestElement.NAME, label); // as JavaSampler does before every sample
        context = new JavaSamplerContext(arguments);
        sampler.setupTest(context);
    }

    /** A producer on the test broker; {@code changes} replace defaults or add parameters. */
    static JavaRequestThread<KafkaProducerSampler, KafkaSampleResult> producer(Map<String, String> changes) {
        return new JavaRequestThread<>(new KafkaProducerSampler(), KafkaSampleResult.class,
                ProducerParameters.DEFAULTS, PRODUCER_LABEL, changes);
    }

    static JavaRequestThread<KafkaConsumerSampler, ConsumerSampleResult> consumer(Map<String, String> changes) {
        return new JavaRequestThread<>(new KafkaConsumerSampler(), ConsumerSampleResult.class,
                ConsumerParameters.CONSUMER_DEFAULTS, "Kafka poll", changes);
    }

    static JavaRequestThread<KafkaLagSampler, LagSampleResult> lag(Map<String, String> changes) {
        return new JavaRequestThread<>(new KafkaLagSampler(), LagSampleResult.class, ConsumerParameters.LAG_DEFAULTS,
                "Kafka lag", changes);
    }

    R sample() {
        return resultType.cast(sampler.runTest(context));
    }

    @Override
    public void close() {
        sampler.teardownTest(context);
    }
}
