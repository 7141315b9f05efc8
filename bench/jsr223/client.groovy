// The kafka-clients producer settings both JSR223 contenders share (bench/jsr223/producer.groovy and
// producer-avro.groovy evaluate this file once per thread, with their JMeter binding): the bench's JMeter
// properties and the engine's policy=capacity (acks=1, no retries, no idempotence), byte[] keys. Returns a closure
// that takes the contender's value serializer settings and gives the Properties, extra.properties applied last.
return { Map<String, String> valueSettings ->
    Properties p = new Properties()
    p.put('bootstrap.servers', props.getProperty('kafka.bootstrap', '127.0.0.1:9092'))
    p.put('acks', props.getProperty('acks', '1'))
    p.put('linger.ms', props.getProperty('linger.ms', '0'))
    p.put('compression.type', props.getProperty('compression.type', 'none'))
    String batchSize = props.getProperty('batch.size', '')
    if (batchSize) p.put('batch.size', batchSize)
    p.put('retries', '0')
    p.put('enable.idempotence', 'false')
    p.put('key.serializer', 'org.apache.kafka.common.serialization.ByteArraySerializer')
    p.putAll(valueSettings)
    props.getProperty('extra.properties', '').split('[;\n]').each { String item ->
        int eq = item.indexOf('=')
        if (eq > 0) p.put(item.substring(0, eq).trim(), item.substring(eq + 1).trim())
    }
    p
}
