//! Counts and send→ack latencies of a run, as kafka-producer-perf-test reports them, with better resolution.
//!
//! Each producer handle keeps its own [`Totals`] (no lock shared across JMeter threads on the hot path);
//! handles merge into the run's totals ([`crate::run::report::Run`]) when they close, and the last one out prints the
//! report.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use serde::Serialize;

use super::transaction::{TxnSummary, TxnTotals};
use crate::audit::{AuditTarget, SeqSet};

/// Latencies are recorded in microseconds, from 1 µs to 1 hour, with 3 significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("static histogram bounds are valid")
}

/// What the messages of one handle (or of the whole run, once merged) did.
#[derive(Debug, Clone)]
pub struct Totals {
    /// Send→ack latency of every acknowledged message, in microseconds.
    pub latency_us: Histogram<u64>,
    /// Messages handed to librdkafka.
    pub sent: u64,
    /// Messages the broker acknowledged while their sample waited: the JTL's successful messages.
    pub acked: u64,
    /// Messages that failed (by code in `errors`).
    pub failed: u64,
    /// Key + value + header bytes of the acknowledged messages.
    pub bytes_acked: u64,
    /// Acknowledged after their sample had ended (timed out, or the test was stopped): failed in the JTL, yet in
    /// the topic; not in `acked`, nor in the latencies.
    pub acked_after_timeout: u64,
    /// Failures by code.
    pub errors: BTreeMap<String, u64>,
    /// Acknowledged messages by partition.
    pub per_partition: BTreeMap<i32, u64>,
    /// The run's span: first send to last acknowledgement.
    pub first_send: Option<Instant>,
    /// See `first_send`.
    pub last_ack: Option<Instant>,
    /// Retries librdkafka made (from its statistics): requests sent again (`txretries`) plus messages written again
    /// into a new request after a failed one (`txmsgs` beyond the messages sent); retries can hide errors and write
    /// duplicates.
    pub retries: u64,
    /// With `target.rate`: how late each sample started after its intended time (coordinated omission).
    pub schedule_delay_us: Option<Histogram<u64>>,
    /// From one sample's last verdict to the same thread's next sample starting: what the wake-up, the JNI
    /// return and call, the Java side and JMeter's own loop cost per sample (plus any wait for a core). The
    /// engine alone gives the floor; a JMeter run's figure minus that floor is the bridge's cost. Not recorded
    /// with `target.rate` (the wait for the intended start would be in it).
    pub between_samples_us: Histogram<u64>,
    /// With `audit=true`: acknowledged sequence numbers by producer id, and where to read them back.
    pub acked_seqs: BTreeMap<String, SeqSet>,
    /// See `acked_seqs`.
    pub audit: Option<AuditTarget>,
    /// With `transactional.id.prefix`: transactions and their records, commit times.
    pub transactions: Option<TxnTotals>,
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            latency_us: new_histogram(),
            sent: 0,
            acked: 0,
            failed: 0,
            bytes_acked: 0,
            acked_after_timeout: 0,
            errors: BTreeMap::new(),
            per_partition: BTreeMap::new(),
            first_send: None,
            last_ack: None,
            retries: 0,
            schedule_delay_us: None,
            between_samples_us: new_histogram(),
            acked_seqs: BTreeMap::new(),
            audit: None,
            transactions: None,
        }
    }
}

/// One more `code` in a count by error code; the code's name is allocated only the first time it is met (a failing
/// run records the same few codes many times).
pub fn count_code(counts: &mut BTreeMap<String, u64>, code: &str) {
    match counts.get_mut(code) {
        Some(n) => *n += 1,
        None => {
            counts.insert(code.to_string(), 1);
        }
    }
}

/// Adds another handle's counts (by error code, by partition) into `into`.
pub fn add_counts<K: Ord + Clone>(into: &mut BTreeMap<K, u64>, other: &BTreeMap<K, u64>) {
    for (k, v) in other {
        *into.entry(k.clone()).or_default() += v;
    }
}

impl Totals {
    /// One acknowledged message.
    pub fn record_ack(&mut self, latency: Duration, bytes: usize, partition: i32, at: Instant) {
        // saturating_record clamps an out-of-range value instead of failing.
        self.latency_us.saturating_record(latency.as_micros().max(1) as u64);
        self.acked += 1;
        self.bytes_acked += bytes as u64;
        *self.per_partition.entry(partition).or_default() += 1;
        self.last_ack = Some(self.last_ack.map_or(at, |l| l.max(at)));
    }

    /// One failed message, by code.
    pub fn record_failure(&mut self, code: &str) {
        self.failed += 1;
        count_code(&mut self.errors, code);
    }

    /// One message handed to librdkafka.
    pub fn record_send(&mut self, at: Instant) {
        self.sent += 1;
        self.first_send.get_or_insert(at);
    }

    /// Adds another handle's totals.
    pub fn merge(&mut self, other: &Totals) {
        // Both histograms have the same bounds, so adding cannot fail.
        let _ = self.latency_us.add(&other.latency_us);
        add_counters!(self, other: sent, acked, failed, bytes_acked, acked_after_timeout, retries);
        add_counts(&mut self.errors, &other.errors);
        add_counts(&mut self.per_partition, &other.per_partition);
        let _ = self.between_samples_us.add(&other.between_samples_us);
        if let Some(other_delay) = &other.schedule_delay_us {
            let mine = self.schedule_delay_us.get_or_insert_with(new_histogram);
            let _ = mine.add(other_delay);
        }
        for (pid, seqs) in &other.acked_seqs {
            self.acked_seqs.entry(pid.clone()).or_default().union(seqs);
        }
        // Only a handle that had something acknowledged names where to read back: a handle that never reached a
        // broker (one that only validated its settings, in the GUI or a unit test) would make the report wait out
        // audit.timeout.ms against a cluster that may not exist.
        if self.audit.is_none() && other.acked > 0 {
            self.audit = other.audit.clone();
        }
        self.first_send = earliest(self.first_send, other.first_send);
        self.last_ack = latest(self.last_ack, other.last_ack);
        if let Some(t) = &other.transactions {
            self.transactions.get_or_insert_with(TxnTotals::default).merge(t);
        }
    }

    /// Seconds from the first send to the last acknowledgement.
    pub fn duration_secs(&self) -> f64 {
        match (self.first_send, self.last_ack) {
            (Some(f), Some(l)) if l > f => (l - f).as_secs_f64(),
            _ => 0.0,
        }
    }

    fn rates(&self) -> (f64, f64) {
        let secs = self.duration_secs();
        if secs == 0.0 {
            return (0.0, 0.0);
        }
        (self.acked as f64 / secs, self.bytes_acked as f64 / (1024.0 * 1024.0) / secs)
    }

    fn ms(&self, quantile: f64) -> u64 {
        (self.latency_us.value_at_quantile(quantile) as f64 / 1000.0).round() as u64
    }

    /// kafka-producer-perf-test's final line, counting the records acknowledged within their sample (the JTL's
    /// successful messages) only.
    pub fn perf_line(&self) -> String {
        let (rps, mbps) = self.rates();
        format!(
            "{} records sent, {:.1} records/sec ({:.2} MB/sec), {:.2} ms avg latency, {:.2} ms max latency, {} ms 50th, {} ms 95th, {} ms 99th, {} ms 99.9th.",
            self.acked,
            rps,
            mbps,
            self.latency_us.mean() / 1000.0,
            self.latency_us.max() as f64 / 1000.0,
            self.ms(0.50),
            self.ms(0.95),
            self.ms(0.99),
            self.ms(0.999),
        )
    }

    /// The line after the perf line when some messages were acknowledged only after their sample had ended: the
    /// JTL counts them failed and the perf line does not count them, yet they are in the topic.
    pub fn late_line(&self) -> Option<String> {
        (self.acked_after_timeout > 0).then(|| {
            format!(
                "{} more record(s) acknowledged after their sample had ended (timed out, or the test was stopped): failed \
                 in the JTL and not counted above, yet written to the topic",
                self.acked_after_timeout
            )
        })
    }

    /// The JSON summary's figures (the report adds `perf_line`, `run_id` and `audit`).
    pub fn summary(&self) -> Summary<'_> {
        let (rps, mbps) = self.rates();
        let h = &self.latency_us;
        Summary {
            sent: self.sent,
            acked: self.acked,
            failed: self.failed,
            acked_after_timeout: self.acked_after_timeout,
            records_per_sec: rps,
            mb_per_sec: mbps,
            duration_sec: self.duration_secs(),
            latency_us: Latency {
                mean: h.mean(),
                p50: h.value_at_quantile(0.50),
                p95: h.value_at_quantile(0.95),
                p99: h.value_at_quantile(0.99),
                p999: h.value_at_quantile(0.999),
                p9999: h.value_at_quantile(0.9999),
                max: h.max(),
            },
            errors: &self.errors,
            retries: self.retries,
            schedule_delay_us: self.schedule_delay_us.as_ref().map(|h| ScheduleDelay {
                mean: h.mean(),
                p50: h.value_at_quantile(0.50),
                p99: h.value_at_quantile(0.99),
                p999: h.value_at_quantile(0.999),
                max: h.max(),
            }),
            per_partition: &self.per_partition,
            between_samples_us: (!self.between_samples_us.is_empty()).then(|| {
                let h = &self.between_samples_us;
                BetweenSamples { mean: h.mean(), p50: h.value_at_quantile(0.50), p99: h.value_at_quantile(0.99) }
            }),
            transactions: self.transactions.as_ref().map(TxnTotals::summary),
        }
    }
}

/// The producer figures of the JSON summary (field names are part of the file format).
#[derive(Serialize)]
pub struct Summary<'a> {
    sent: u64,
    acked: u64,
    failed: u64,
    acked_after_timeout: u64,
    records_per_sec: f64,
    mb_per_sec: f64,
    duration_sec: f64,
    latency_us: Latency,
    errors: &'a BTreeMap<String, u64>,
    retries: u64,
    schedule_delay_us: Option<ScheduleDelay>,
    per_partition: &'a BTreeMap<i32, u64>,
    between_samples_us: Option<BetweenSamples>,
    transactions: Option<TxnSummary>,
}

/// See [`Totals::between_samples_us`].
#[derive(Serialize)]
struct BetweenSamples {
    mean: f64,
    p50: u64,
    p99: u64,
}

#[derive(Serialize)]
struct Latency {
    mean: f64,
    p50: u64,
    p95: u64,
    p99: u64,
    p999: u64,
    p9999: u64,
    max: u64,
}

#[derive(Serialize)]
struct ScheduleDelay {
    mean: f64,
    p50: u64,
    p99: u64,
    p999: u64,
    max: u64,
}

/// The earlier of two optional moments (either may be unknown), when merging two handles' totals.
pub fn earliest<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The later of two optional moments (either may be unknown), when merging two handles' totals.
pub fn latest<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// `into.field += from.field` for each counter named: how two handles' totals merge, field by field.
macro_rules! add_counters {
    ($into:ident, $from:ident: $($field:ident),+ $(,)?) => {
        $($into.$field += $from.$field;)+
    };
}
pub(crate) use add_counters;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_line_has_the_kafka_tool_form() {
        let mut t = Totals::default();
        let start = Instant::now();
        t.record_send(start);
        t.record_send(start);
        t.record_ack(Duration::from_micros(1500), 100, 0, start + Duration::from_millis(500));
        t.record_ack(Duration::from_micros(2500), 100, 1, start + Duration::from_secs(1));
        let line = t.perf_line();
        assert!(
            line.starts_with(
                "2 records sent, 2.0 records/sec (0.00 MB/sec), 2.00 ms avg latency, 2.50 ms max latency, "
            ),
            "{line}"
        );
        assert!(line.ends_with(" ms 99.9th."), "{line}");
        let j = serde_json::to_value(t.summary()).unwrap();
        assert_eq!(j["acked"], 2);
        assert_eq!(j["per_partition"]["1"], 1);
    }

    #[test]
    fn merge_adds_counts_and_latencies() {
        let now = Instant::now();
        let mut a = Totals::default();
        a.record_ack(Duration::from_micros(100), 1, 0, now);
        let mut b = Totals::default();
        b.record_failure("MSG_TIMED_OUT");
        b.record_ack(Duration::from_micros(900), 1, 0, now);
        a.merge(&b);
        assert_eq!((a.acked, a.failed), (2, 1));
        assert_eq!(a.errors["MSG_TIMED_OUT"], 1);
        assert_eq!(a.per_partition[&0], 2);
        assert_eq!(a.latency_us.len(), 2);
    }
}
