//! What the consumers of a run did, as kafka-consumer-perf-test reports it, plus produce→consume latency.
//!
//! Each consumer handle keeps its own [`ConsumerTotals`] (touched only by its JMeter thread); handles merge into
//! the run's totals ([`crate::run::report::Run`]) when they close, and the last one out prints the report: the perf-test columns with one row,
//! then the end-to-end latency line.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::producer::stats::{add_counters, add_counts, count_code, earliest, latest, new_histogram};

/// kafka-consumer-perf-test's header line.
pub const PERF_HEADER: &str = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, \
                               rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec";

/// Where a record's end-to-end latency came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencySource {
    /// The producer's `kn.sent.us` header (microseconds).
    Header,
    /// The Kafka record timestamp (milliseconds; CreateTime or LogAppendTime).
    Timestamp,
}

/// What consumer handles read, merged into the run's totals when they close; the consumer's report and summary.
#[derive(Debug, Clone)]
pub struct ConsumerTotals {
    /// Produce→consume latency in microseconds, 1 µs to 1 hour, 3 significant digits.
    pub e2e_us: Histogram<u64>,
    /// Records whose latency came from the `kn.sent.us` header.
    pub e2e_from_header: u64,
    /// Records whose latency came from the Kafka timestamp.
    pub e2e_from_timestamp: u64,
    /// Records whose send time lies in the future of the consumer's clock (clock skew between hosts), counted as 1 µs.
    pub e2e_negative: u64,
    /// Records read.
    pub records: u64,
    /// Key + value + header bytes read.
    pub bytes: u64,
    /// Samples (polls) taken.
    pub samples: u64,
    /// Samples that read no record.
    pub empty_samples: u64,
    /// Samples that failed.
    pub failed_samples: u64,
    /// Records that failed `check.sequence` or their schema decoding.
    pub check_failures: u64,
    /// Failed samples by response code.
    pub errors: BTreeMap<String, u64>,
    /// Records read per partition.
    pub per_partition: BTreeMap<i32, u64>,
    /// Statically assigned partitions: (first offset to read, end offset) when the consumer started.
    pub at_start: BTreeMap<i32, (i64, i64)>,
    /// The offset after the last record read, per partition of this handle's topic (one handle reads one topic).
    pub next_offset: BTreeMap<i32, i64>,
    /// Where each partition held at the end was read to, against its end offset queried then (merged by topic and
    /// partition: the furthest any consumer got).
    pub at_end: BTreeMap<(String, i32), ReadTo>,
    /// librdkafka's transient errors that did not fail a sample (it reconnects, a leader or coordinator moves).
    pub transient_errors: BTreeMap<String, u64>,
    /// Rebalances the handles went through.
    pub rebalances: u64,
    /// This handle's rebalance pauses in all (0 with static assignment); merged, the longest thread's.
    pub rebalance_time: Duration,
    /// Each group member's rebalances (threads with `assignment=subscribe`), in the order they closed.
    pub threads: Vec<ThreadRebalances>,
    /// Start of the first poll and time of the last record, as monotonic and wall-clock times.
    pub first_poll: Option<(Instant, SystemTime)>,
    /// Time of the last record read.
    pub last_record: Option<(Instant, SystemTime)>,
    /// Handles merged into these totals (consumer threads of the run).
    pub consumers: u64,
}

impl Default for ConsumerTotals {
    fn default() -> Self {
        ConsumerTotals {
            e2e_us: new_histogram(),
            e2e_from_header: 0,
            e2e_from_timestamp: 0,
            e2e_negative: 0,
            records: 0,
            bytes: 0,
            samples: 0,
            empty_samples: 0,
            failed_samples: 0,
            check_failures: 0,
            errors: BTreeMap::new(),
            per_partition: BTreeMap::new(),
            at_start: BTreeMap::new(),
            next_offset: BTreeMap::new(),
            at_end: BTreeMap::new(),
            transient_errors: BTreeMap::new(),
            rebalances: 0,
            rebalance_time: Duration::ZERO,
            threads: Vec::new(),
            first_poll: None,
            last_record: None,
            consumers: 0,
        }
    }
}

impl ConsumerTotals {
    /// Notes the start of a poll (the first one starts the consumer's clock).
    pub fn record_poll_start(&mut self, at: Instant) {
        self.first_poll.get_or_insert((at, SystemTime::now()));
    }

    /// One consumed record at `offset` of `bytes` (key + value + headers) with its end-to-end latency, if known.
    pub fn record(
        &mut self,
        partition: i32,
        offset: i64,
        bytes: usize,
        e2e: Option<(i64, LatencySource)>,
        at: Instant,
    ) {
        self.records += 1;
        self.bytes += bytes as u64;
        *self.per_partition.entry(partition).or_default() += 1;
        let next = self.next_offset.entry(partition).or_default();
        *next = (*next).max(offset + 1);
        if let Some((micros, source)) = e2e {
            if micros < 0 {
                self.e2e_negative += 1;
            }
            self.e2e_us.saturating_record(micros.max(1) as u64);
            match source {
                LatencySource::Header => self.e2e_from_header += 1,
                LatencySource::Timestamp => self.e2e_from_timestamp += 1,
            }
        }
        self.last_record = Some((at, SystemTime::now()));
    }

    /// A group member's rebalances, at its close.
    pub fn record_rebalances(&mut self, thread: ThreadRebalances) {
        self.rebalances = thread.count;
        self.rebalance_time = thread.total;
        self.threads.push(thread);
    }

    /// A statically assigned partition: where reading starts and where the partition ended at that moment.
    pub fn record_start(&mut self, partition: i32, first: i64, end: i64) {
        self.at_start.insert(partition, (first, end));
    }

    /// Where a partition held at the end was read to, and its end offset then.
    pub fn record_end(&mut self, topic: &str, partition: i32, read_to: ReadTo) {
        let e = self.at_end.entry((topic.to_string(), partition)).or_insert(read_to);
        e.read_offset = e.read_offset.max(read_to.read_offset);
        e.end_offset = e.end_offset.max(read_to.end_offset);
    }

    /// A transient error that librdkafka recovers from by itself (not a failed sample).
    pub fn record_transient(&mut self, code: &str) {
        count_code(&mut self.transient_errors, code);
    }

    /// Partitions not read to their end: those held at the end whose read offset is short of the end offset, and
    /// statically assigned partitions with records at the start of which nothing was read and whose end is unknown.
    pub fn unread(&self) -> Vec<(&str, i32, ReadTo)> {
        self.at_end.iter().filter(|(_, r)| r.left() > 0).map(|((t, p), r)| (t.as_str(), *p, *r)).collect()
    }

    /// The partition numbers of [`Self::unread`], plus statically assigned partitions with records at the start
    /// of which nothing was read (assigned, never fetched, or a consumer stopped before it got to them).
    pub fn unread_partitions(&self) -> Vec<i32> {
        let never_read = self
            .at_start
            .iter()
            .filter(|(p, (first, end))| end > first && self.per_partition.get(p).copied().unwrap_or(0) == 0)
            .map(|(p, _)| *p);
        let mut all: Vec<i32> = self.unread().iter().map(|(_, p, _)| *p).chain(never_read).collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// Records (offsets) left unread at the end, over all partitions held then.
    pub fn unread_records(&self) -> u64 {
        self.at_end.values().map(ReadTo::left).sum()
    }

    /// `3 partition(s) not read to their end: t[0] read to 420 of 500 (80 left), ...`, or None when all were.
    pub fn unread_line(&self) -> Option<String> {
        let unread = self.unread();
        if unread.is_empty() {
            return None;
        }
        let items: Vec<String> = unread
            .iter()
            .map(|(t, p, r)| format!("{t}[{p}] read to {} of {} ({} left)", r.read_offset, r.end_offset, r.left()))
            .collect();
        Some(format!("{} partition(s) not read to their end: {}", unread.len(), items.join(", ")))
    }

    /// `partitions read/available at start: 0: 167/167, 1: 0/166 (none read), ...`, or None without static assignment.
    pub fn partitions_line(&self) -> Option<String> {
        if self.at_start.is_empty() {
            return None;
        }
        let items: Vec<String> = self
            .at_start
            .iter()
            .map(|(p, (first, end))| {
                let read = self.per_partition.get(p).copied().unwrap_or(0);
                let available = (end - first).max(0);
                let flag = if read == 0 && available > 0 { " (none read)" } else { "" };
                format!("{p}: {read}/{available}{flag}")
            })
            .collect();
        let never: Vec<i32> = self
            .at_start
            .iter()
            .filter(|(p, (first, end))| end > first && self.per_partition.get(p).copied().unwrap_or(0) == 0)
            .map(|(p, _)| *p)
            .collect();
        let mut verdict = if never.is_empty() {
            String::new()
        } else {
            format!("; {} partition(s) with records at the start were never read: {never:?}", never.len())
        };
        if let Some(line) = self.unread_line() {
            verdict = format!("{verdict}; {line}");
        }
        Some(format!("partitions read/available at start: {}{verdict}", items.join(", ")))
    }

    /// Counts a failed sample under its response code.
    pub fn record_error(&mut self, code: &str) {
        count_code(&mut self.errors, code);
    }

    /// Adds another handle's totals (on close).
    pub fn merge(&mut self, other: &ConsumerTotals) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.e2e_us.add(&other.e2e_us);
        add_counters!(self, other: e2e_from_header, e2e_from_timestamp, e2e_negative, records, bytes, samples);
        add_counters!(self, other: empty_samples, failed_samples, check_failures, rebalances);
        add_counts(&mut self.errors, &other.errors);
        add_counts(&mut self.per_partition, &other.per_partition);
        add_counts(&mut self.transient_errors, &other.transient_errors);
        self.at_start.extend(other.at_start.iter().map(|(p, s)| (*p, *s)));
        for ((topic, p), r) in &other.at_end {
            self.record_end(topic, *p, *r);
        }
        // Threads join and rebalance at the same time: the run's rebalance time is the longest of theirs.
        self.rebalance_time = self.rebalance_time.max(other.rebalance_time);
        self.threads.extend(other.threads.iter().cloned());
        self.first_poll = earliest(self.first_poll, other.first_poll);
        self.last_record = latest(self.last_record, other.last_record);
        self.consumers += other.consumers.max(1);
    }

    /// First poll to last record, in milliseconds.
    fn elapsed_ms(&self) -> u64 {
        match (self.first_poll, self.last_record) {
            (Some(f), Some(l)) if l.0 > f.0 => (l.0 - f.0).as_millis() as u64,
            _ => 0,
        }
    }

    fn perf_figures(&self) -> PerfFigures {
        let elapsed_ms = self.elapsed_ms();
        let rebalance_ms = (self.rebalance_time.as_millis() as u64).min(elapsed_ms);
        let fetch_ms = elapsed_ms - rebalance_ms;
        let mb = self.bytes as f64 / (1024.0 * 1024.0);
        let per_sec = |n: f64, ms: u64| if ms == 0 { 0.0 } else { n * 1000.0 / ms as f64 };
        PerfFigures {
            mb,
            mb_sec: per_sec(mb, elapsed_ms),
            msg_sec: per_sec(self.records as f64, elapsed_ms),
            rebalance_ms,
            fetch_ms,
            fetch_mb_sec: per_sec(mb, fetch_ms),
            fetch_msg_sec: per_sec(self.records as f64, fetch_ms),
        }
    }

    /// kafka-consumer-perf-test's row (its header is [`PERF_HEADER`]).
    pub fn perf_row(&self) -> String {
        let f = self.perf_figures();
        let start = self.first_poll.map_or_else(String::new, |(_, t)| format_time(t));
        let end = self.last_record.or(self.first_poll).map_or_else(String::new, |(_, t)| format_time(t));
        format!(
            "{start}, {end}, {:.4}, {:.4}, {}, {:.4}, {}, {}, {:.4}, {:.4}",
            f.mb, f.mb_sec, self.records, f.msg_sec, f.rebalance_ms, f.fetch_ms, f.fetch_mb_sec, f.fetch_msg_sec
        )
    }

    /// `end-to-end latency: N records, avg A ms, p50 P ms, p99 P ms, p99.9 P ms, max M ms (...)`.
    pub fn e2e_line(&self) -> String {
        let h = &self.e2e_us;
        if h.is_empty() {
            return "end-to-end latency: no record carried a send time (kn.sent.us header) or a Kafka timestamp"
                .to_string();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        let mut sources = format!("{} from kn.sent.us headers", self.e2e_from_header);
        if self.e2e_from_timestamp > 0 {
            sources += &format!(", {} from Kafka timestamps (ms resolution)", self.e2e_from_timestamp);
        }
        if self.e2e_negative > 0 {
            sources += &format!(", {} sent 'after' they were consumed: clocks differ between hosts", self.e2e_negative);
        }
        format!(
            "end-to-end latency: {} records, avg {:.2} ms, p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms ({sources})",
            h.len(),
            h.mean() / 1000.0,
            ms(h.value_at_quantile(0.50)),
            ms(h.value_at_quantile(0.99)),
            ms(h.value_at_quantile(0.999)),
            ms(h.max()),
        )
    }

    /// The JSON summary's figures (the report adds `perf_header`, `perf_row` and `e2e_line`).
    pub fn summary(&self) -> Summary<'_> {
        let f = self.perf_figures();
        let h = &self.e2e_us;
        let q = |x: f64| (!h.is_empty()).then(|| h.value_at_quantile(x));
        Summary {
            consumers: self.consumers,
            records: self.records,
            bytes: self.bytes,
            samples: self.samples,
            empty_samples: self.empty_samples,
            failed_samples: self.failed_samples,
            check_failures: self.check_failures,
            rebalances: self.rebalances,
            rebalance_pauses: RebalancePauses {
                count: self.threads.iter().map(|t| t.count).sum(),
                total_ms: self.threads.iter().map(|t| millis(t.total)).sum(),
                max_ms: self.threads.iter().map(|t| millis(t.max)).max().unwrap_or(0),
                partitions_gained: self.threads.iter().map(|t| t.partitions_gained).sum(),
                partitions_lost: self.threads.iter().map(|t| t.partitions_lost).sum(),
                threads: self.threads.iter().map(ThreadPauses::of).collect(),
            },
            errors: &self.errors,
            per_partition: &self.per_partition,
            partitions_at_start: self
                .at_start
                .iter()
                .map(|(p, (first, end))| {
                    let read = self.per_partition.get(p).copied().unwrap_or(0);
                    (*p, AtStart { first: *first, end: *end, read })
                })
                .collect(),
            unread_partitions: self.unread_partitions(),
            unread: self
                .unread()
                .into_iter()
                .map(|(topic, partition, r)| PartitionEnd::new(topic, partition, r))
                .collect(),
            unread_records: self.unread_records(),
            partitions_at_end: self.at_end.iter().map(|((t, p), r)| PartitionEnd::new(t, *p, *r)).collect(),
            transient_errors: &self.transient_errors,
            perf: Perf {
                start_time: self.first_poll.map(|(_, t)| format_time(t)),
                end_time: self.last_record.map(|(_, t)| format_time(t)),
                mb: f.mb,
                mb_sec: f.mb_sec,
                n_msg: self.records,
                msg_sec: f.msg_sec,
                rebalance_ms: f.rebalance_ms,
                fetch_ms: f.fetch_ms,
                fetch_mb_sec: f.fetch_mb_sec,
                fetch_msg_sec: f.fetch_msg_sec,
            },
            e2e_latency_us: E2e {
                count: h.len(),
                from_header: self.e2e_from_header,
                from_timestamp: self.e2e_from_timestamp,
                negative: self.e2e_negative,
                mean: (!h.is_empty()).then(|| h.mean()),
                p50: q(0.50),
                p99: q(0.99),
                p999: q(0.999),
                max: (!h.is_empty()).then(|| h.max()),
            },
        }
    }
}

/// The consumer figures of the JSON summary (field names are part of the file format).
#[derive(Serialize)]
pub struct Summary<'a> {
    consumers: u64,
    records: u64,
    bytes: u64,
    samples: u64,
    empty_samples: u64,
    failed_samples: u64,
    check_failures: u64,
    rebalances: u64,
    /// The group members' rebalance pauses: all threads, then each.
    rebalance_pauses: RebalancePauses,
    errors: &'a BTreeMap<String, u64>,
    per_partition: &'a BTreeMap<i32, u64>,
    /// Statically assigned partitions: first offset and end offset at the start, records read.
    partitions_at_start: BTreeMap<i32, AtStart>,
    /// Partitions not read to their end (see [`ConsumerTotals::unread_partitions`]).
    unread_partitions: Vec<i32>,
    /// Each partition held at the end whose read offset is short of its end offset, with both offsets.
    unread: Vec<PartitionEnd<'a>>,
    /// Records (offsets) left unread at the end, summed over those partitions.
    unread_records: u64,
    /// Every partition held at the end: read offset against end offset.
    partitions_at_end: Vec<PartitionEnd<'a>>,
    /// librdkafka's transient errors that were counted, not failed samples.
    transient_errors: &'a BTreeMap<String, u64>,
    perf: Perf,
    e2e_latency_us: E2e,
}

/// One group member's rebalances: counted at each assignment that changed what it holds (its join included), each
/// pause from the revocation (or the subscription) to the first record after the new assignment.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadRebalances {
    /// The thread's number in its thread group, as in the log lines: `2/3`.
    pub thread: String,
    /// Rebalances counted.
    pub count: u64,
    /// Their pauses in all, and the longest.
    pub total: Duration,
    /// The longest pause.
    pub max: Duration,
    /// Partitions this thread gained and lost over its rebalances (a partition revoked and assigned back is neither).
    pub partitions_gained: u64,
    /// Partitions lost.
    pub partitions_lost: u64,
}

fn millis(d: Duration) -> u64 {
    d.as_millis() as u64
}

/// The summary's `rebalance_pauses`: the group's figures (count and total summed, max the longest of any thread).
#[derive(Serialize)]
struct RebalancePauses {
    count: u64,
    total_ms: u64,
    max_ms: u64,
    partitions_gained: u64,
    partitions_lost: u64,
    threads: Vec<ThreadPauses>,
}

/// One thread in `rebalance_pauses.threads`.
#[derive(Serialize)]
struct ThreadPauses {
    thread: String,
    count: u64,
    total_ms: u64,
    max_ms: u64,
    partitions_gained: u64,
    partitions_lost: u64,
}

impl ThreadPauses {
    fn of(t: &ThreadRebalances) -> ThreadPauses {
        ThreadPauses {
            thread: t.thread.clone(),
            count: t.count,
            total_ms: millis(t.total),
            max_ms: millis(t.max),
            partitions_gained: t.partitions_gained,
            partitions_lost: t.partitions_lost,
        }
    }
}

/// How far a partition was read: the offset after the last record read (its position) and the end offset (high
/// watermark) queried when the consumer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadTo {
    /// The offset after the last record read.
    pub read_offset: i64,
    /// The partition's end offset (high watermark).
    pub end_offset: i64,
}

impl ReadTo {
    /// Offsets between the read offset and the end (records, on a topic without compaction or transactions).
    pub fn left(&self) -> u64 {
        (self.end_offset - self.read_offset).max(0) as u64
    }
}

/// One partition's read offset against its end offset in the summary.
#[derive(Serialize)]
struct PartitionEnd<'a> {
    topic: &'a str,
    partition: i32,
    read_offset: i64,
    end_offset: i64,
    left: u64,
}

impl<'a> PartitionEnd<'a> {
    fn new(topic: &'a str, partition: i32, r: ReadTo) -> Self {
        PartitionEnd { topic, partition, read_offset: r.read_offset, end_offset: r.end_offset, left: r.left() }
    }
}

/// One statically assigned partition in the summary.
#[derive(Serialize)]
struct AtStart {
    first: i64,
    end: i64,
    read: u64,
}

/// kafka-consumer-perf-test's columns, under its own names.
#[derive(Serialize)]
struct Perf {
    #[serde(rename = "start.time")]
    start_time: Option<String>,
    #[serde(rename = "end.time")]
    end_time: Option<String>,
    #[serde(rename = "data.consumed.in.MB")]
    mb: f64,
    #[serde(rename = "MB.sec")]
    mb_sec: f64,
    #[serde(rename = "data.consumed.in.nMsg")]
    n_msg: u64,
    #[serde(rename = "nMsg.sec")]
    msg_sec: f64,
    #[serde(rename = "rebalance.time.ms")]
    rebalance_ms: u64,
    #[serde(rename = "fetch.time.ms")]
    fetch_ms: u64,
    #[serde(rename = "fetch.MB.sec")]
    fetch_mb_sec: f64,
    #[serde(rename = "fetch.nMsg.sec")]
    fetch_msg_sec: f64,
}

#[derive(Serialize)]
struct E2e {
    count: u64,
    from_header: u64,
    from_timestamp: u64,
    negative: u64,
    mean: Option<f64>,
    p50: Option<u64>,
    p99: Option<u64>,
    p999: Option<u64>,
    max: Option<u64>,
}

struct PerfFigures {
    mb: f64,
    mb_sec: f64,
    msg_sec: f64,
    rebalance_ms: u64,
    fetch_ms: u64,
    fetch_mb_sec: f64,
    fetch_msg_sec: f64,
}

/// Local time as kafka-consumer-perf-test prints it: `yyyy-MM-dd HH:mm:ss:SSS`.
pub fn format_time(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs() as libc::time_t;
    // SAFETY: localtime_r writes only into the struct we pass; an all-zero tm is a valid initial value.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&secs, &mut tm);
        tm
    };
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}:{:03}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        since.subsec_millis()
    )
}

/// Microseconds since the epoch, the unit of the `kn.sent.us` header.
pub fn epoch_micros() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_row_has_the_tool_columns() {
        let mut t = ConsumerTotals::default();
        let start = Instant::now();
        t.record_poll_start(start);
        t.samples = 1;
        for i in 0..4 {
            t.record(
                i,
                0,
                1024 * 256,
                Some((1500 + i as i64 * 1000, LatencySource::Header)),
                start + Duration::from_secs(1),
            );
        }
        t.rebalance_time = Duration::from_millis(200);
        let row = t.perf_row();
        let cols: Vec<&str> = row.split(", ").collect();
        assert_eq!(cols.len(), PERF_HEADER.split(", ").count(), "{row}");
        assert_eq!(&cols[2..], ["1.0000", "1.0000", "4", "4.0000", "200", "800", "1.2500", "5.0000"], "{row}");
        assert_eq!(cols[0].len(), "2024-01-01 10:00:00:123".len(), "{row}");
        let line = t.e2e_line();
        assert!(line.starts_with("end-to-end latency: 4 records, avg 3.00 ms, p50 2.50 ms, p99 4.50 ms"), "{line}");
        assert_eq!(serde_json::to_value(t.summary()).unwrap()["e2e_latency_us"]["from_header"], 4);
    }

    #[test]
    fn a_partition_assigned_but_never_read_is_named() {
        let now = Instant::now();
        let mut t = ConsumerTotals::default();
        t.record_start(0, 0, 2);
        t.record_start(1, 5, 9);
        t.record_start(2, 3, 3);
        t.record(0, 0, 10, None, now);
        t.record(0, 1, 10, None, now);
        assert_eq!(t.unread_partitions(), vec![1]);
        let line = t.partitions_line().unwrap();
        assert_eq!(
            line,
            "partitions read/available at start: 0: 2/2, 1: 0/4 (none read), 2: 0/0; 1 partition(s) with records at \
             the start were never read: [1]"
        );
        assert!(ConsumerTotals::default().partitions_line().is_none());
        assert_eq!(t.next_offset[&0], 2);
    }

    #[test]
    fn a_partition_read_part_of_the_way_is_unread_with_its_offsets() {
        let now = Instant::now();
        let mut t = ConsumerTotals::default();
        t.record_start(0, 0, 500);
        t.record_start(1, 0, 500);
        for offset in 0..420 {
            t.record(0, offset, 10, None, now);
        }
        t.record(1, 499, 10, None, now);
        t.record_end("t", 0, ReadTo { read_offset: 420, end_offset: 500 });
        t.record_end("t", 1, ReadTo { read_offset: 500, end_offset: 500 });
        // Another consumer of the group read partition 0 further: the furthest counts.
        let mut other = ConsumerTotals::default();
        other.record_end("t", 0, ReadTo { read_offset: 450, end_offset: 500 });
        other.record_transient("BROKER_TRANSPORT_FAILURE");
        t.merge(&other);
        assert_eq!(t.unread_partitions(), vec![0]);
        assert_eq!(t.unread_records(), 50);
        let line = t.partitions_line().unwrap();
        assert!(line.ends_with("; 1 partition(s) not read to their end: t[0] read to 450 of 500 (50 left)"), "{line}");
        let json = serde_json::to_value(t.summary()).unwrap();
        assert_eq!(
            json["unread"],
            serde_json::json!([{"topic": "t", "partition": 0, "read_offset": 450, "end_offset": 500, "left": 50}])
        );
        assert_eq!(json["unread_records"], 50);
        assert_eq!(json["partitions_at_end"][1]["read_offset"], 500);
        assert_eq!(json["transient_errors"]["BROKER_TRANSPORT_FAILURE"], 1);
    }

    #[test]
    fn the_summary_has_each_members_pauses_and_the_groups() {
        let thread = |n: &str, count, total, max, gained, lost| ThreadRebalances {
            thread: n.to_string(),
            count,
            total: Duration::from_millis(total),
            max: Duration::from_millis(max),
            partitions_gained: gained,
            partitions_lost: lost,
        };
        let mut run = ConsumerTotals::default();
        for t in [thread("1/2", 3, 1200, 845, 6, 2), thread("2/2", 2, 300, 250, 4, 0)] {
            let mut handle = ConsumerTotals::default();
            handle.record_rebalances(t);
            run.merge(&handle);
        }
        let json = serde_json::to_value(run.summary()).unwrap();
        assert_eq!(json["rebalances"], 5);
        assert_eq!(
            json["rebalance_pauses"],
            serde_json::json!({"count": 5, "total_ms": 1500, "max_ms": 845, "partitions_gained": 10,
                "partitions_lost": 2, "threads": [
                {"thread": "1/2", "count": 3, "total_ms": 1200, "max_ms": 845, "partitions_gained": 6,
                    "partitions_lost": 2},
                {"thread": "2/2", "count": 2, "total_ms": 300, "max_ms": 250, "partitions_gained": 4,
                    "partitions_lost": 0}]})
        );
        // kafka-consumer-perf-test's rebalance.time.ms: threads pause together, the longest thread's total.
        assert_eq!(json["perf"]["rebalance.time.ms"], 0, "no record read: no elapsed time to cover");
        assert_eq!(run.rebalance_time, Duration::from_millis(1200));
        let none = serde_json::to_value(ConsumerTotals::default().summary()).unwrap();
        assert_eq!(none["rebalance_pauses"]["threads"], serde_json::json!([]));
    }

    #[test]
    fn merge_keeps_the_span_and_the_longest_rebalance() {
        let now = Instant::now();
        let mut a = ConsumerTotals { rebalance_time: Duration::from_millis(300), ..Default::default() };
        a.record_poll_start(now);
        a.record(0, 0, 10, None, now + Duration::from_millis(10));
        let mut b = ConsumerTotals { rebalance_time: Duration::from_millis(100), rebalances: 2, ..Default::default() };
        b.record_poll_start(now + Duration::from_millis(5));
        b.record(1, 0, 10, Some((-5, LatencySource::Timestamp)), now + Duration::from_millis(50));
        a.merge(&b);
        assert_eq!((a.records, a.rebalances, a.rebalance_time), (2, 2, Duration::from_millis(300)));
        assert_eq!(a.elapsed_ms(), 50);
        assert_eq!(a.e2e_negative, 1);
        assert!(a.e2e_line().contains("clocks differ"), "{}", a.e2e_line());
    }
}
