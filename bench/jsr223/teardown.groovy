// tearDown of the JSR223 contender (scripts/bench): closes every thread's KafkaProducer (after the load, so closing
// costs no sample), merges the per-thread counters and latencies, prints a kafka-producer-perf-test style line and
// writes the same JSON summary the engine writes (property bench.summary.file): sent, acked, failed, records_per_sec,
// mb_per_sec, duration_sec, latency_us{mean,p50,p95,p99,p999,p9999,max}. Rates count acknowledged records only, from
// the first send to the last ack, as the engine's summary does.
import groovy.json.JsonOutput
import java.time.Duration

Queue registry = (Queue) props.get('bench.registry')
long acked = 0, failed = 0, bytes = 0, first = Long.MAX_VALUE, last = 0
List<long[]> parts = []
registry?.each { Map st ->
    st.producer.close(Duration.ofSeconds(30))
    long[] s = (long[]) st.state
    acked += s[0]; failed += s[1]; bytes += s[4]
    if (s[2] > 0) first = Math.min(first, s[2])
    last = Math.max(last, s[3])
    parts << Arrays.copyOf((long[]) st.latencies, (int) Math.min(s[0], ((long[]) st.latencies).length))
}
long[] all = new long[(int) parts.sum(0) { it.length }]
int at = 0
parts.each { long[] p -> System.arraycopy(p, 0, all, at, p.length); at += p.length }
Arrays.sort(all)
def q = { double quantile -> all.length == 0 ? 0L : all[Math.max(0, (int) Math.ceil(quantile * all.length) - 1)] }
double secs = (acked > 0 && last > first) ? (last - first) / 1e9d : 0d
double rps = secs > 0 ? acked / secs : 0d
double mbps = secs > 0 ? bytes / (1024d * 1024d) / secs : 0d
double mean = all.length == 0 ? 0d : (all.sum() as double) / all.length
String line = String.format(Locale.ROOT,
        '%d records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.',
        acked, rps, mbps, mean / 1000d, (all.length ? all[-1] : 0) / 1000d,
        Math.round(q(0.50) / 1000d), Math.round(q(0.95) / 1000d), Math.round(q(0.99) / 1000d), Math.round(q(0.999) / 1000d))
def summary = [sent: acked + failed, acked: acked, failed: failed, records_per_sec: rps, mb_per_sec: mbps,
               duration_sec: secs,
               latency_us: [mean: mean, p50: q(0.50), p95: q(0.95), p99: q(0.99), p999: q(0.999), p9999: q(0.9999),
                            max: all.length ? all[-1] : 0],
               perf_line: line]
String path = props.getProperty('bench.summary.file', 'jsr223-summary.json')
new File(path).text = JsonOutput.prettyPrint(JsonOutput.toJson(summary))
println line
log.info(line)
