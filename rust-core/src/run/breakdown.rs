//! Where a message's send->ack time goes, from librdkafka's statistics (every `statistics.interval.ms`, 1 s by
//! default): time in the local producer queue (`int_latency`, per message), in the request queue before the socket
//! (`outbuf_latency`), the broker round trip (`rtt`) and throttling (`throttle`), per request; plus the produce request
//! rate, batch size and fill (`batchsize`, `batchcnt` of each topic), and messages in flight
//! (`waitresp_msg_cnt + outbuf_msg_cnt`).
//!
//! librdkafka's windows are rolling: each statistics emission covers the interval since the previous one, so the run's
//! figure is the sum over emissions (the last partial interval before close is not in it). Each producer keeps its own
//! [`Recorder`] (its statistics callback is its only writer) and adds it to the run's ([`RunBreakdown`]) when it
//! closes; the report turns
//! the run's into one line after the perf line, a `breakdown` block of the summary, and hints with their evidence.

use std::collections::BTreeMap;
use std::sync::Mutex;

use rdkafka::statistics::{Statistics, Window};
use serde_json::{json, Value};

/// A mean built from windows' sums and counts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Mean {
    sum: f64,
    count: f64,
}

impl Mean {
    fn add_window(&mut self, w: &Window) {
        if w.cnt > 0 {
            self.sum += w.sum as f64;
            self.count += w.cnt as f64;
        }
    }

    fn add(&mut self, value: f64, weight: f64) {
        self.sum += value * weight;
        self.count += weight;
    }

    fn merge(&mut self, other: &Mean) {
        self.sum += other.sum;
        self.count += other.count;
    }

    fn get(&self) -> Option<f64> {
        (self.count > 0.0).then(|| self.sum / self.count)
    }
}

/// What one producer's statistics said over its life.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Breakdown {
    queue_us: Mean,
    outbuf_us: Mean,
    rtt_us: Mean,
    /// Windows' p99 weighted by their counts: librdkafka's histograms cannot be merged, this approximates.
    rtt_p99_us: Mean,
    throttle_ms: Mean,
    batch_bytes: Mean,
    batch_records: Mean,
    /// Produce requests sent so far (librdkafka's counter is cumulative: the latest value).
    produce_requests: u64,
    in_flight: Mean,
    in_flight_max: i64,
    /// Messages written into produce requests so far (librdkafka's cumulative `txmsgs`, the latest value): a message
    /// that librdkafka sends again after a failed produce request (a leader that moved, a broker gone) is written
    /// again and counted again, which its request-retry counter (`txretries`) does not see.
    transmitted: u64,
    emissions: u64,
}

impl Breakdown {
    /// Adds one statistics emission.
    pub fn record(&mut self, s: &Statistics) {
        let mut produce_requests = 0;
        let mut in_flight = 0;
        for b in s.brokers.values() {
            if let Some(w) = &b.int_latency {
                self.queue_us.add_window(w);
            }
            if let Some(w) = &b.outbuf_latency {
                self.outbuf_us.add_window(w);
            }
            if let Some(w) = &b.rtt {
                self.rtt_us.add_window(w);
                if w.cnt > 0 {
                    self.rtt_p99_us.add(w.p99 as f64, w.cnt as f64);
                }
            }
            if let Some(w) = &b.throttle {
                self.throttle_ms.add_window(w);
            }
            produce_requests += b.req.get("Produce").copied().unwrap_or(0).max(0) as u64;
            in_flight += b.waitresp_msg_cnt + b.outbuf_msg_cnt;
        }
        for t in s.topics.values() {
            self.batch_bytes.add_window(&t.batchsize);
            self.batch_records.add_window(&t.batchcnt);
        }
        self.produce_requests = self.produce_requests.max(produce_requests);
        self.transmitted = self.transmitted.max(s.txmsgs.max(0) as u64);
        self.in_flight.add(in_flight as f64, 1.0);
        self.in_flight_max = self.in_flight_max.max(in_flight);
        self.emissions += 1;
    }

    /// Messages librdkafka sent again after a failed produce request: written into requests more often than they were
    /// handed to it (`sent`). At least this many: a message that expired before it was ever written makes it count
    /// one fewer, and the last statistics interval before close is not in it.
    pub fn resent(&self, sent: u64) -> u64 {
        self.transmitted.saturating_sub(sent)
    }

    fn merge(&mut self, other: &Breakdown) {
        for (a, b) in [
            (&mut self.queue_us, &other.queue_us),
            (&mut self.outbuf_us, &other.outbuf_us),
            (&mut self.rtt_us, &other.rtt_us),
            (&mut self.rtt_p99_us, &other.rtt_p99_us),
            (&mut self.throttle_ms, &other.throttle_ms),
            (&mut self.batch_bytes, &other.batch_bytes),
            (&mut self.batch_records, &other.batch_records),
        ] {
            a.merge(b);
        }
        self.produce_requests += other.produce_requests;
        self.transmitted += other.transmitted;
        // Producers run side by side: their in-flight counts add up (approximately, emissions are not aligned).
        self.in_flight.merge(&other.in_flight);
        self.in_flight_max = self.in_flight_max.max(other.in_flight_max);
        self.emissions += other.emissions;
    }
}

/// The producer settings the hints are about.
#[derive(Debug, Clone, PartialEq)]
pub struct Knobs {
    /// librdkafka's `linger.ms`.
    pub linger_ms: f64,
    /// librdkafka's `batch.size` (bytes).
    pub batch_size: f64,
    /// librdkafka's `batch.num.messages`.
    pub batch_num_messages: f64,
    /// The sampler's `messages.per.sample`.
    pub messages_per_sample: u32,
    /// One producer per JMeter thread (`producer.scope=thread`).
    pub producer_per_thread: bool,
    /// librdkafka's `acks`.
    pub acks: String,
}

impl Knobs {
    /// From librdkafka's properties as the engine sets them (librdkafka's defaults where unset).
    pub fn new(client: &BTreeMap<String, String>, messages_per_sample: u32, producer_per_thread: bool) -> Knobs {
        let num = |k: &str, default: f64| client.get(k).and_then(|v| v.parse().ok()).unwrap_or(default);
        Knobs {
            linger_ms: num("linger.ms", num("queue.buffering.max.ms", 5.0)),
            batch_size: num("batch.size", 1_000_000.0),
            batch_num_messages: num("batch.num.messages", 10_000.0),
            messages_per_sample,
            producer_per_thread,
            acks: client.get("acks").or_else(|| client.get("request.required.acks")).cloned().unwrap_or("all".into()),
        }
    }
}

/// A producer's recorder, living in its librdkafka context.
#[derive(Debug)]
pub struct Recorder {
    breakdown: Mutex<Breakdown>,
    knobs: Knobs,
}

impl Recorder {
    /// A recorder for a producer with these settings.
    pub fn new(knobs: Knobs) -> Recorder {
        Recorder { breakdown: Mutex::new(Breakdown::default()), knobs }
    }

    /// From the statistics callback.
    pub fn record(&self, s: &Statistics) {
        self.breakdown.lock().unwrap_or_else(|p| p.into_inner()).record(s);
    }
}

/// The breakdown of a run: producers add theirs when they close, the report takes it.
#[derive(Debug, Default)]
pub struct RunBreakdown(Mutex<(Breakdown, Option<Knobs>)>);

impl RunBreakdown {
    /// A producer's recorder, when the producer closes.
    pub fn merge(&self, recorder: &Recorder) {
        let mine = recorder.breakdown.lock().unwrap_or_else(|p| p.into_inner());
        let mut run = self.0.lock().unwrap_or_else(|p| p.into_inner());
        run.0.merge(&mine);
        run.1.get_or_insert_with(|| recorder.knobs.clone());
    }

    /// Takes the run's breakdown, leaving an empty one for the next test.
    pub fn take(&self) -> (Breakdown, Option<Knobs>) {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// The report: the line after the perf line, the hint lines, and the summary's `breakdown` block.
pub struct Report {
    /// `time breakdown: ...`, printed after the perf line.
    pub line: String,
    /// `hint: ...` lines, each with its evidence.
    pub hints: Vec<String>,
    /// The summary's `breakdown` block.
    pub json: Value,
}

/// `mean_ms`: the run's mean send->ack latency; `seconds`: first send to last ack; `retries`: the run's retries.
pub fn report(b: &Breakdown, knobs: Option<&Knobs>, mean_ms: f64, seconds: f64, retries: u64) -> Option<Report> {
    if b.emissions == 0 {
        return None; // the run was shorter than one statistics interval
    }
    let ms = |m: &Mean| m.get().map(|us| us / 1000.0);
    let (queue, outbuf, rtt, rtt_p99) = (ms(&b.queue_us), ms(&b.outbuf_us), ms(&b.rtt_us), ms(&b.rtt_p99_us));
    let throttle = b.throttle_ms.get();
    let (batch_records, batch_bytes) = (b.batch_records.get(), b.batch_bytes.get());
    let fill = knobs.and_then(|k| {
        let by_bytes = batch_bytes? / k.batch_size;
        let by_count = batch_records? / k.batch_num_messages;
        Some(100.0 * by_bytes.max(by_count))
    });
    let rate = (seconds > 0.0).then(|| b.produce_requests as f64 / seconds);
    // The parts are librdkafka's, sampled per statistics interval over every message (failed and timed-out ones
    // too, which can sit in a full local queue for seconds) and per request; the mean is ours, over the acknowledged
    // messages only. When the parts add up to more than the mean, there is no true remainder to show: say so, and
    // show neither a negative "other" nor a part as a share of a whole it exceeds.
    let parts = [queue, outbuf, rtt].iter().flatten().sum::<f64>();
    let unreconciled = if mean_ms <= 0.0 {
        Some("no message was acknowledged, so there is no send->ack time to break down".to_string())
    } else if parts > mean_ms {
        Some(format!(
            "the sampled parts add up to {parts:.2} ms, more than the {mean_ms:.2} ms send->ack mean: librdkafka samples \
             them per statistics interval over every message, failed and timed-out ones included (a full local queue \
             holds them long), the mean covers the acknowledged ones only"
        ))
    } else {
        None
    };
    let other = match (queue, outbuf, rtt) {
        (Some(q), Some(o), Some(r)) if unreconciled.is_none() => Some(mean_ms - q - o - r),
        _ => None,
    };
    let f = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.2}"));
    let head = match &unreconciled {
        None => format!(
            "send->ack {mean_ms:.2} ms = local queue {} ms + request queue {} ms + broker round trip {} ms (p99 {} ms) \
             + other {}",
            f(queue),
            f(outbuf),
            f(rtt),
            f(rtt_p99),
            other.map_or("n/a".to_string(), |o| format!("{o:.2} ms")),
        ),
        Some(why) => format!(
            "send->ack {mean_ms:.2} ms, not reconciled with librdkafka's sampled local queue {} ms, request queue {} \
             ms, broker round trip {} ms (p99 {} ms): {why}",
            f(queue),
            f(outbuf),
            f(rtt),
            f(rtt_p99),
        ),
    };
    let line = format!(
        "time breakdown: {head}; throttle {} ms; {} produce requests/s, {} records ({} KB) per batch ({}% of \
         batch.size/batch.num.messages); {retries} retries; in flight avg {} max {} messages",
        f(throttle),
        rate.map_or("n/a".into(), |r| format!("{r:.0}")),
        f(batch_records),
        f(batch_bytes.map(|b| b / 1024.0)),
        f(fill),
        f(b.in_flight.get()),
        b.in_flight_max,
    );
    // A part is quoted as a share of send->ack only when the parts fit in it.
    let (share_queue, share_rtt) = if unreconciled.is_none() { (queue, rtt) } else { (None, None) };
    let hints = hints(knobs, mean_ms, share_queue, share_rtt, throttle, batch_records, retries);
    let json = json!({
        "send_ack_mean_ms": mean_ms,
        "queue_ms": queue,
        "outbuf_ms": outbuf,
        "rtt_ms": rtt,
        "rtt_p99_ms": rtt_p99,
        "other_ms": other,
        "reconciled": unreconciled.is_none(),
        "not_reconciled": unreconciled,
        "throttle_ms": throttle,
        "produce_requests": b.produce_requests,
        "requests_per_sec": rate,
        "batch_records": batch_records,
        "batch_bytes": batch_bytes,
        "batch_fill_pct": fill,
        "retries": retries,
        "in_flight_mean": b.in_flight.get(),
        "in_flight_max": b.in_flight_max,
        "statistics_emissions": b.emissions,
        "hints": hints,
    });
    Some(Report { line, hints, json })
}

fn hints(
    knobs: Option<&Knobs>,
    mean_ms: f64,
    queue: Option<f64>,
    rtt: Option<f64>,
    throttle: Option<f64>,
    batch_records: Option<f64>,
    retries: u64,
) -> Vec<String> {
    let mut hints = Vec::new();
    let (q, r) = (queue.unwrap_or(0.0), rtt.unwrap_or(0.0));
    let mut linger_hint = false;
    if let Some(k) = knobs {
        let unbatched = batch_records.is_some_and(|n| n <= 1.5);
        if k.linger_ms >= 1.0 && k.messages_per_sample == 1 && k.producer_per_thread && unbatched && queue.is_some() {
            linger_hint = true;
            hints.push(format!(
                "hint: linger.ms={} with one producer per thread and 1 message per sample adds about {q:.2} ms per \
                 message in the local queue (of {mean_ms:.2} ms send->ack) and batches nothing ({:.2} records per \
                 batch): set linger.ms=0, send batches (messages.per.sample > 1) or share the producer \
                 (producer.scope=test)",
                k.linger_ms,
                batch_records.unwrap_or(0.0)
            ));
        }
    }
    if mean_ms > 0.0 && r >= 0.6 * mean_ms {
        let acks = knobs.map_or(String::new(), |k| format!(", replication with acks={}", k.acks));
        hints.push(format!(
            "hint: the time is broker round trip ({r:.2} of {mean_ms:.2} ms send->ack): look at the broker (CPU, disk{acks})"
        ));
    } else if mean_ms > 0.0 && q >= 0.5 * mean_ms && !linger_hint {
        hints.push(format!(
            "hint: the time is in the local queue ({q:.2} of {mean_ms:.2} ms send->ack): raise batch.size, partitions or \
             threads, or lower linger.ms"
        ));
    }
    if let Some(t) = throttle.filter(|t| *t > 0.0) {
        hints.push(format!(
            "hint: the broker throttled requests ({t:.2} ms per request on average): a quota is in force"
        ));
    }
    if retries > 0 {
        hints.push(format!(
            "hint: librdkafka retried {retries} time(s): errors were hidden and, without enable.idempotence, messages may \
             be duplicated (audit=true counts them)"
        ));
    }
    if let Some(k) = knobs.filter(|k| k.acks == "all" || k.acks == "-1") {
        hints.push(format!(
            "hint: acks={} waits for the in-sync replicas; `scripts/experiment acks` measures its cost per message \
             against acks=1",
            k.acks
        ));
    }
    hints
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(sum: i64, cnt: i64, p99: i64) -> Window {
        Window {
            min: 0,
            max: 0,
            avg: if cnt > 0 { sum / cnt } else { 0 },
            sum,
            cnt,
            stddev: 0,
            hdrsize: 0,
            p50: 0,
            p75: 0,
            p90: 0,
            p95: 0,
            p99,
            p99_99: 0,
            outofrange: 0,
        }
    }

    fn knobs(linger: f64) -> Knobs {
        let client = BTreeMap::from([("linger.ms".to_string(), linger.to_string()), ("acks".into(), "1".into())]);
        Knobs::new(&client, 1, true)
    }

    fn breakdown(queue_us: (i64, i64), rtt_us: (i64, i64), batch: (i64, i64)) -> Breakdown {
        let mut b = Breakdown::default();
        b.queue_us.add_window(&window(queue_us.0, queue_us.1, 0));
        b.rtt_us.add_window(&window(rtt_us.0, rtt_us.1, 0));
        b.rtt_p99_us.add(3000.0, rtt_us.1 as f64);
        b.outbuf_us.add_window(&window(0, 0, 0));
        b.batch_bytes.add_window(&window(batch.0, batch.1, 0));
        b.batch_records.add_window(&window(batch.1, batch.1, 0));
        b.produce_requests = 100;
        b.emissions = 2;
        b
    }

    #[test]
    fn means_come_from_window_sums_and_the_linger_hint_has_its_evidence() {
        // 100 messages at 1.1 ms in the queue, 100 requests at 0.4 ms round trip, one record per batch.
        let b = breakdown((110_000, 100), (40_000, 100), (1100, 100));
        let r = report(&b, Some(&knobs(1.0)), 1.6, 2.0, 0).unwrap();
        assert_eq!(r.json["queue_ms"], 1.1);
        assert_eq!(r.json["rtt_ms"], 0.4);
        assert_eq!(r.json["outbuf_ms"], Value::Null);
        assert_eq!(r.json["requests_per_sec"], 50.0);
        assert!(r.line.starts_with("time breakdown: send->ack 1.60 ms = local queue 1.10 ms + request queue n/a ms"));
        assert_eq!(r.hints.len(), 1, "{:?}", r.hints);
        assert!(r.hints[0].contains("linger.ms=1 with one producer per thread") && r.hints[0].contains("1.10 ms"));
        assert!(r.hints[0].contains("(1.00 records per batch)"), "{}", r.hints[0]);
    }

    #[test]
    fn round_trip_retries_and_acks_all_hints() {
        let b = breakdown((10_000, 100), (250_000, 100), (50_000, 1000));
        let mut k = knobs(0.0);
        k.acks = "all".into();
        let r = report(&b, Some(&k), 3.0, 1.0, 4).unwrap();
        let all = r.hints.join("\n");
        assert!(all.contains("the time is broker round trip (2.50 of 3.00 ms"), "{all}");
        assert!(all.contains("retried 4 time(s)") && all.contains("acks=all waits"), "{all}");
        assert!(!all.contains("linger"), "{all}");
        assert_eq!((r.json["batch_records"].clone(), r.json["batch_bytes"].clone()), (json!(1.0), json!(50.0)));
        assert!(report(&Breakdown::default(), None, 1.0, 1.0, 0).is_none());
    }

    #[test]
    fn parts_larger_than_the_whole_are_not_shown_as_a_breakdown() {
        // The three runs with full local queues: 3956.28 ms in the queue against a 3841.70 ms mean; a run where
        // nothing was acknowledged (mean 0) with 415.08 ms in the queue.
        for (queue_us, mean_ms) in [(3_956_280, 3841.70), (415_080, 0.0)] {
            let b = breakdown((queue_us * 10, 10), (40_000, 100), (1100, 100));
            let r = report(&b, Some(&knobs(0.0)), mean_ms, 2.0, 0).unwrap();
            assert_eq!((r.json["other_ms"].clone(), r.json["reconciled"].clone()), (Value::Null, json!(false)));
            assert!(r.line.contains("not reconciled with librdkafka's sampled local queue"), "{}", r.line);
            assert!(!r.line.contains(" = local queue") && !r.line.contains("other -"), "{}", r.line);
            let why = r.json["not_reconciled"].as_str().unwrap();
            assert!(why.contains(if mean_ms > 0.0 {
                "more than the 3841.70 ms"
            } else {
                "no message was acknowledged"
            }));
            assert!(r.hints.iter().all(|h| !h.contains(" of ")), "{:?}", r.hints);
        }
        // Parts that fit: a remainder of 0 or more, and the line says "=".
        let r = report(&breakdown((110_000, 100), (40_000, 100), (1100, 100)), None, 1.6, 2.0, 0).unwrap();
        assert_eq!(r.json["reconciled"], true);
        assert!(r.line.contains("send->ack 1.60 ms = local queue 1.10 ms"), "{}", r.line);
    }

    #[test]
    fn merged_producers_add_up() {
        let mut a = breakdown((1000, 10), (2000, 10), (100, 10));
        a.merge(&breakdown((3000, 10), (2000, 10), (100, 10)));
        assert_eq!(a.queue_us.get(), Some(200.0));
        assert_eq!((a.produce_requests, a.emissions), (200, 4));
    }
}
