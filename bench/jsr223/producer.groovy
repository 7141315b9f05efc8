// JSR223 (Groovy) Kafka producer sample, written the way teams usually test Kafka with JMeter: one kafka-clients
// KafkaProducer per JMeter thread, one record per sample, and the sample waits on send(...).get() for the broker's ack.
// Contender 2 of scripts/bench (issue 6). Settings come from JMeter properties, the same ones the sampler plan reads:
//   kafka.bootstrap kafka.topic acks linger.ms batch.size compression.type record.size loops extra.properties
// Per-thread state (producer, payload, latencies) lives in the thread's variables; bench/jsr223/teardown.groovy closes
// the producers and writes the run's summary (same JSON form as the engine's kafka.summary.file). The client's
// settings are bench/jsr223/client.groovy's.
import org.apache.kafka.clients.producer.KafkaProducer
import org.apache.kafka.clients.producer.ProducerRecord

KafkaProducer<byte[], byte[]> producer = (KafkaProducer<byte[], byte[]>) vars.getObject('bench.producer')
if (producer == null) {
    Closure<Properties> client = evaluate(new File(props.getProperty('bench.dir', 'bench') + '/jsr223/client.groovy'))
    Properties p = client(['value.serializer': 'org.apache.kafka.common.serialization.ByteArraySerializer'])
    producer = new KafkaProducer<byte[], byte[]>(p)
    // Same payload as kafka-producer-perf-test and the engine's value.mode=fixed: random letters, made once.
    int size = Integer.parseInt(props.getProperty('record.size', '1024'))
    byte[] payload = new byte[size]
    Random random = new Random()
    for (int i = 0; i < size; i++) payload[i] = (byte) (65 + random.nextInt(26))
    int loops = Integer.parseInt(props.getProperty('loops', '1000'))
    // state: [0]=acked [1]=failed [2]=first send (ns) [3]=last ack (ns) [4]=bytes acked
    long[] state = new long[5]
    long[] latencies = new long[loops]          // µs, one per acknowledged record
    vars.putObject('bench.producer', producer)
    vars.putObject('bench.topic', props.getProperty('kafka.topic', 'jmeter-bench'))
    vars.putObject('bench.payload', payload)
    vars.putObject('bench.state', state)
    vars.putObject('bench.latencies', latencies)
    // props is a java.util.Properties (synchronized): one registry for the whole test
    ((Queue) props.computeIfAbsent('bench.registry', { new java.util.concurrent.ConcurrentLinkedQueue() }))
            .add([producer: producer, state: state, latencies: latencies])
}

String topic = (String) vars.getObject('bench.topic')
byte[] payload = (byte[]) vars.getObject('bench.payload')
long[] state = (long[]) vars.getObject('bench.state')
long[] latencies = (long[]) vars.getObject('bench.latencies')

long start = System.nanoTime()
if (state[2] == 0) state[2] = start
try {
    producer.send(new ProducerRecord<byte[], byte[]>(topic, payload)).get()
    long end = System.nanoTime()
    int n = (int) state[0]
    if (n < latencies.length) latencies[n] = (long) ((end - start) / 1000)
    state[0] = n + 1
    state[3] = end
    state[4] += payload.length
} catch (Exception e) {
    state[1]++
    SampleResult.setSuccessful(false)
    SampleResult.setResponseCode('500')
    SampleResult.setResponseMessage(e.toString())
}
