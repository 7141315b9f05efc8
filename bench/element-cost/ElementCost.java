// Per-sample Java cost of the three ways JMeter could drive the engine, without the engine (no broker, no JNI):
//   java-request  what JavaSampler does before each runTest: a JavaSamplerContext copied from the 29 arguments,
//                 then our runTest's reads (label, value)
//   testbean      what JMeterThread does before each sample of a TestBean: TestBeanHelper.prepare, which sets every
//                 property of the Kafka Producer element by reflection (30 properties)
//   plain         an AbstractSampler with its own GUI class: its fields are read once, nothing per sample
// Run: bench/element-cost/run (builds the classpath, runs this with java's source launcher). Prints ns/sample.
import java.nio.file.Files;
import java.nio.file.Path;

import io.kafkanative.jmeter.KafkaProducer;
import io.kafkanative.jmeter.KafkaProducerSampler;
import org.apache.jmeter.config.Arguments;
import org.apache.jmeter.protocol.java.sampler.JavaSamplerContext;
import org.apache.jmeter.testbeans.TestBeanHelper;
import org.apache.jmeter.testelement.TestElement;
import org.apache.jmeter.util.JMeterUtils;

public class ElementCost {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        Path props = Files.createTempFile("jmeter", ".properties");
        JMeterUtils.loadJMeterProperties(props.toString());
        long rounds = args.length > 0 ? Long.parseLong(args[0]) : 2_000_000;

        Arguments arguments = new KafkaProducerSampler().getDefaultParameters();
        arguments.addArgument(TestElement.NAME, "producer");
        arguments.setRunningVersion(true);

        KafkaProducer element = new KafkaProducer();
        element.setName("producer");
        // What the GUI saves: every property of the form as a string property.
        for (var setting : new String[] {"topic", "partition", "topicCreate", "topicPartitions", "topicReplication",
                "valueMode", "recordSize", "valueTemplate", "payloadFile", "value", "keyMode", "key", "headers",
                "stampTime", "policy", "acks", "retries", "enableIdempotence", "lingerMs", "batchSize",
                "compressionType", "producerScope", "messagesPerSample", "timeoutMs", "targetRate", "preflight",
                "audit", "auditTimeoutMs", "extraProperties", "connection"}) {
            element.setProperty(setting, "1");
        }
        element.setRunningVersion(true);

        for (int pass = 0; pass < 3; pass++) { // the first passes warm up the JIT
            long t0 = System.nanoTime();
            for (long i = 0; i < rounds; i++) {
                JavaSamplerContext context = new JavaSamplerContext(arguments);
                sink = context.getParameter(TestElement.NAME, "");
                sink = context.getParameter("value", "");
            }
            long t1 = System.nanoTime();
            for (long i = 0; i < rounds; i++) {
                TestBeanHelper.prepare(element);
                sink = element.getValue();
            }
            long t2 = System.nanoTime();
            for (long i = 0; i < rounds; i++) {
                sink = element.getName();
            }
            long t3 = System.nanoTime();
            System.out.printf("pass %d: java-request %.0f ns/sample, testbean %.0f ns/sample, plain %.1f ns/sample%n",
                    pass + 1, (t1 - t0) / (double) rounds, (t2 - t1) / (double) rounds, (t3 - t2) / (double) rounds);
        }
    }
}
