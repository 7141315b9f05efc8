// JSR223 (Groovy) Avro producer sample: the JSR223 way to send schema-registry Avro records from JMeter. One
// kafka-clients KafkaProducer per JMeter thread with Apicurio Registry's Avro serializer (AvroKafkaSerializer, from
// Maven Central: bench/pom.xml), one GenericRecord built per sample from the schema file, send(...).get() per sample.
// Contender "jsr223-avro" of scripts/bench --workloads avro. Properties: those of bench/jsr223/producer.groovy (the
// client settings of bench/jsr223/client.groovy) plus
//   avro.schema.file   the .avsc (bench/schemas/order.avsc)
//   avro.rules.file    its field rules (bench/schemas/order.rules), read here for the rules that shape a record's
//                      size and content (length, size, null, choice, fixed, template, range, seq) so that the
//                      records are comparable with the ones our engine generates from the same files
//   registry.url       Apicurio's v2 REST API, e.g. http://127.0.0.1:8081/apis/registry/v2 (the serializer registers
//                      the schema under the topic's artifact on first use and frames the records as Confluent's
//                      wire format: magic byte, 4-byte id, Avro binary)
// The serializer's work (GenericDatumWriter, framing) happens inside send(), as in any kafka-clients application.
// bench/jsr223/teardown.groovy closes the producers and writes the summary (bytes = serialized value sizes).
import java.util.concurrent.ThreadLocalRandom
import org.apache.avro.Conversions
import org.apache.avro.LogicalTypes
import org.apache.avro.Schema
import org.apache.avro.generic.GenericData
import org.apache.kafka.clients.producer.KafkaProducer
import org.apache.kafka.clients.producer.ProducerRecord
import org.apache.kafka.clients.producer.RecordMetadata

KafkaProducer<byte[], Object> producer = (KafkaProducer<byte[], Object>) vars.getObject('bench.producer')
if (producer == null) {
    Closure<Properties> client = evaluate(new File(props.getProperty('bench.dir', 'bench') + '/jsr223/client.groovy'))
    Properties p = client([
            'value.serializer'                 : 'io.apicurio.registry.serde.avro.AvroKafkaSerializer',
            'apicurio.registry.url'            : props.getProperty('registry.url', 'http://127.0.0.1:8081/apis/registry/v2'),
            'apicurio.registry.auto-register'  : 'true',
            // the id in the payload (magic byte 0 + 4-byte id), as Confluent's serializer and our engine frame records
            'apicurio.registry.headers.enabled': 'false',
            'apicurio.registry.as-confluent'   : 'true'])
    producer = new KafkaProducer<byte[], Object>(p)
    Schema schema = new Schema.Parser().parse(new File(props.getProperty('avro.schema.file')))
    // rules: path -> [rule name: [arguments]]
    Map<String, Map<String, List<String>>> rules = [:]
    String rulesFile = props.getProperty('avro.rules.file', '')
    if (rulesFile) {
        new File(rulesFile).eachLine { String line ->
            line = line.trim()
            if (!line || line.startsWith('#') || !line.contains('=')) return
            String path = line.substring(0, line.indexOf('=')).trim()
            Map<String, List<String>> r = [:]
            (line.substring(line.indexOf('=') + 1) =~ /(\w+)\(([^)]*)\)/).each { m ->
                r[m[1]] = ((String) m[2]).split(',').collect { it.trim() }
            }
            rules[path] = r
        }
    }
    int loops = Integer.parseInt(props.getProperty('loops', '1000'))
    long[] state = new long[5]          // [0]=acked [1]=failed [2]=first send (ns) [3]=last ack (ns) [4]=bytes acked
    long[] seq = new long[1]
    vars.putObject('bench.producer', producer)
    vars.putObject('bench.topic', props.getProperty('kafka.topic', 'jmeter-bench'))
    vars.putObject('bench.schema', schema)
    vars.putObject('bench.rules', rules)
    vars.putObject('bench.seq', seq)
    vars.putObject('bench.decimal', new Conversions.DecimalConversion())
    vars.putObject('bench.state', state)
    vars.putObject('bench.latencies', new long[loops])
    ((Queue) props.computeIfAbsent('bench.registry', { new java.util.concurrent.ConcurrentLinkedQueue() }))
            .add([producer: producer, state: state, latencies: vars.getObject('bench.latencies')])
}

Schema schema = (Schema) vars.getObject('bench.schema')
Map rules = (Map) vars.getObject('bench.rules')
long[] seq = (long[]) vars.getObject('bench.seq')
Conversions.DecimalConversion decimal = (Conversions.DecimalConversion) vars.getObject('bench.decimal')
ThreadLocalRandom rnd = ThreadLocalRandom.current()
String letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
long n = ++seq[0]

def between = { List<String> r, double lo, double hi -> r ? [r[0] as double, (r.size() > 1 ? r[1] : r[0]) as double] : [lo, hi] }
def text = { Map r, int lo, int hi ->
    def (a, b) = between(r?.length, lo, hi)
    int len = rnd.nextInt((int) a, (int) b + 1)
    StringBuilder sb = new StringBuilder(len)
    for (int i = 0; i < len; i++) sb.append(letters.charAt(rnd.nextInt(letters.length())))
    sb.toString()
}
// fixed(...) / choice(...) values are texts: made the field's type
def convert = { Schema s, String v ->
    switch (s.type) {
        case Schema.Type.LONG: return Long.parseLong(v)
        case Schema.Type.INT: return Integer.parseInt(v)
        case Schema.Type.DOUBLE: return Double.parseDouble(v)
        case Schema.Type.BOOLEAN: return Boolean.parseBoolean(v)
        case Schema.Type.ENUM: return new GenericData.EnumSymbol(s, v)
        case Schema.Type.UNION: return v
        default: return v
    }
}
def gen
gen = { Schema s, String path ->
    Map r = (Map) rules[path]
    if (r?.fixed) return convert(s, r.fixed[0])
    if (r?.choice && s.type != Schema.Type.UNION) return convert(s, r.choice[rnd.nextInt(r.choice.size())])
    switch (s.type) {
        case Schema.Type.RECORD:
            GenericData.Record rec = new GenericData.Record(s)
            s.fields.each { f -> rec.put(f.name(), gen(f.schema(), path ? "${path}.${f.name()}" : f.name())) }
            return rec
        case Schema.Type.UNION:
            double nulls = r?.get('null') ? (r.get('null')[0] as double) : 0.1d
            Schema other = s.types.find { it.type != Schema.Type.NULL }
            return rnd.nextDouble() < nulls ? null : gen.call(other, path)
        case Schema.Type.ARRAY:
            def (a, b) = between(r?.size, 1, 3)
            int k = rnd.nextInt((int) a, (int) b + 1)
            return (0..<k).collect { gen(s.elementType, path) }
        case Schema.Type.MAP:
            def (a, b) = between(r?.size, 1, 3)
            int k = rnd.nextInt((int) a, (int) b + 1)
            Map m = [:]
            k.times { m[text(null, 8, 16)] = gen(s.valueType, path) }
            return m
        case Schema.Type.ENUM:
            return new GenericData.EnumSymbol(s, s.enumSymbols[rnd.nextInt(s.enumSymbols.size())])
        case Schema.Type.STRING:
            if (r?.template) return r.template[0].replace('{seq}', n as String).replace('{uuid}', UUID.randomUUID() as String)
            if (s.logicalType?.name == 'uuid') return UUID.randomUUID().toString()
            if (r?.seq) return n as String
            return text(r, 8, 16)
        case Schema.Type.BYTES:
            if (s.logicalType instanceof LogicalTypes.Decimal) {
                int scale = ((LogicalTypes.Decimal) s.logicalType).scale
                def (a, b) = between(r?.range, 0, 1000)
                BigDecimal v = new BigDecimal(rnd.nextDouble(a, b)).setScale(scale, java.math.RoundingMode.HALF_UP)
                return decimal.toBytes(v, s, s.logicalType)
            }
            return java.nio.ByteBuffer.wrap(text(r, 8, 16).bytes)
        case Schema.Type.LONG:
            if (r?.seq) return n
            if (s.logicalType?.name == 'timestamp-millis') return System.currentTimeMillis() - rnd.nextLong(31536000000L)
            if (s.logicalType?.name == 'timestamp-micros') return System.currentTimeMillis() * 1000L - rnd.nextLong(31536000000000L)
            def (a, b) = between(r?.range, 0, 1000)
            return (long) rnd.nextDouble(a, b + 1)
        case Schema.Type.INT:
            if (s.logicalType?.name == 'date') return (int) (System.currentTimeMillis() / 86400000L) - rnd.nextInt(365)
            def (a, b) = between(r?.range, 0, 1000)
            return (int) rnd.nextDouble(a, b + 1)
        case Schema.Type.DOUBLE:
            def (a, b) = between(r?.range, 0, 1000)
            return rnd.nextDouble(a, b)
        case Schema.Type.FLOAT:
            return rnd.nextFloat()
        case Schema.Type.BOOLEAN:
            return rnd.nextBoolean()
        default:
            return null
    }
}

String topic = (String) vars.getObject('bench.topic')
long[] state = (long[]) vars.getObject('bench.state')
long[] latencies = (long[]) vars.getObject('bench.latencies')

long start = System.nanoTime()
if (state[2] == 0) state[2] = start
try {
    GenericData.Record record = (GenericData.Record) gen(schema, '')
    RecordMetadata md = producer.send(new ProducerRecord<byte[], Object>(topic, record)).get()
    long end = System.nanoTime()
    int i = (int) state[0]
    if (i < latencies.length) latencies[i] = (long) ((end - start) / 1000)
    state[0] = i + 1
    state[3] = end
    state[4] += md.serializedValueSize()
} catch (Exception e) {
    state[1]++
    SampleResult.setSuccessful(false)
    SampleResult.setResponseCode('500')
    SampleResult.setResponseMessage(e.toString())
}
