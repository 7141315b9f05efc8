//! Delivery audit: sent = acked = in the topic, with duplicates and strays counted.
//!
//! With `audit=true` every message carries three headers: `kn.run` (the test's run id), `kn.pid` (the
//! producer handle's id) and `kn.seq` (a per-handle sequence number, 8 bytes big-endian). Each handle
//! remembers which sequence numbers the broker acknowledged. At the end of the test the topic is read
//! back from the run's start time to its end offsets and every message is classified:
//! - `found`: ours and acknowledged, seen once;
//! - `duplicates`: ours, seen again (a retry that wrote twice);
//! - `found_unacked`: ours but reported failed (e.g. acknowledged after its sample timed out);
//! - `unexpected`: not from this run (another writer, another test);
//! - `missing`: acknowledged but never seen;
//! - `aborted` (a run with transactions): ours, in an aborted transaction, seen only with read_uncommitted.

pub mod seqset;

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Headers, Message};
use rdkafka::{Offset, TopicPartitionList};
use serde::Serialize;

use crate::client::config::{create, Created};
use crate::client::context::ClientCtx;
use crate::client::settings::connection_properties;
use crate::error::EngineError;
pub use seqset::SeqSet;

/// Header with the run id.
pub const RUN_HEADER: &str = "kn.run";
/// Header with the producer handle's id.
pub const PRODUCER_HEADER: &str = "kn.pid";
/// Header with the message's sequence number within its handle (8 bytes big-endian).
pub const SEQ_HEADER: &str = "kn.seq";
/// Header with the send time, microseconds since the epoch (8 bytes big-endian), for end-to-end latency.
pub const SENT_US_HEADER: &str = "kn.sent.us";

/// Milliseconds since the epoch (the run start, message timestamps).
pub fn epoch_millis() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Where and how to read the topic back: the producer's connection properties (security included).
#[derive(Debug, Clone, PartialEq)]
pub struct AuditTarget {
    /// The consumer's connection properties (brokers, security), taken from the producer's.
    pub client: BTreeMap<String, String>,
    /// The topic read back.
    pub topic: String,
    /// How long the read-back may take (`audit.timeout.ms`).
    pub timeout: Duration,
    /// The run wrote with transactions: its aborted records are counted too (a read with read_uncommitted).
    pub transactional: bool,
}

impl AuditTarget {
    /// Keeps the properties a consumer needs: where the brokers are and how to authenticate.
    pub fn new(producer_client: &BTreeMap<String, String>, topic: &str, timeout: Duration) -> AuditTarget {
        AuditTarget {
            client: connection_properties(producer_client),
            topic: topic.to_string(),
            timeout,
            transactional: false,
        }
    }
}

/// The audit's verdict on one run (its JSON form is part of the summary file).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AuditReport {
    /// The id of the run whose records are counted.
    pub run_id: String,
    /// Records the producers had acknowledged.
    pub acked: u64,
    /// Acknowledged records found in the topic.
    pub found: u64,
    /// Records found more than once.
    pub duplicates: u64,
    /// Acknowledged records not found.
    pub missing: u64,
    /// Records not from this run (another writer, another test).
    pub unexpected: u64,
    /// Records found whose send had failed or timed out (written although the sample failed).
    pub found_unacked: u64,
    /// False when the read-back hit `audit.timeout.ms` before reaching the end offsets.
    pub complete: bool,
    /// Transient errors met and ridden out while reading (broker down, leader moving).
    pub retried_errors: u64,
    /// The last error met, shown when the read-back could not complete.
    pub last_error: Option<String>,
    /// Without the test's record of acknowledgements (an audit on demand from the topic alone): gaps in the
    /// producers' sequences, which are failed samples or lost messages; `missing` is then 0, not guessed.
    pub gaps: Option<u64>,
    /// A transactional run: this run's records that only a read_uncommitted consumer sees (those of aborted
    /// transactions, on purpose or after a failure); None for a run without transactions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aborted: Option<u64>,
}

impl AuditReport {
    /// The audit's end-of-test line, for stdout and jmeter.log.
    pub fn line(&self) -> String {
        let gaps = match self.gaps {
            Some(g) => format!(
                ", {g} gap(s) in the sequences (failed samples or lost messages: pass the test's summary with \
                 --summary to tell them apart)"
            ),
            None => String::new(),
        };
        let aborted = match self.aborted {
            Some(n) => format!(", {n} aborted (in aborted transactions: seen with read_uncommitted only)"),
            None => String::new(),
        };
        let incomplete = if self.complete {
            String::new()
        } else {
            format!(
                " (INCOMPLETE: audit.timeout.ms reached before the end of the topic; figures are what was proven so \
                 far; last error: {})",
                self.last_error.as_deref().unwrap_or("none")
            )
        };
        format!(
            "audit of run {}: {} acked, {} found, {} missing, {} duplicates, {} unexpected (not from this run), {} written although reported failed{aborted}{gaps}{incomplete}",
            self.run_id,
            self.acked,
            self.found,
            self.missing,
            self.duplicates,
            self.unexpected,
            self.found_unacked,
        )
    }
}

/// Reads the topic from `since_ms` to its current end and classifies every message against `acked`.
/// Without `acked` (an audit on demand, after the test), every sequence number seen counts as acknowledged and
/// the gaps in each producer's sequence are counted apart (`gaps`): a gap may be a failed, never-written message.
/// A transactional run's topic is read a second time with read_uncommitted, which also delivers the records of
/// aborted transactions: those of this run not seen the first time are counted (`aborted`).
/// Transient errors (a broker just killed, a leader moving) are retried within `audit.timeout.ms`.
pub fn read_back(
    target: &AuditTarget,
    run_id: &str,
    since_ms: u64,
    acked: Option<&BTreeMap<String, SeqSet>>,
) -> Result<AuditReport, EngineError> {
    // Everything below, retries and both reads included, fits in audit.timeout.ms: right after a failover the first
    // requests meet transport errors and moving leaders, which go away within seconds.
    let deadline = Instant::now() + target.timeout;
    let mut report = AuditReport {
        run_id: run_id.to_string(),
        acked: acked.map_or(0, |a| a.values().map(SeqSet::len).sum()),
        ..AuditReport::default()
    };
    let mut seen: BTreeMap<String, SeqSet> = BTreeMap::new();
    // Only committed transactions' records count (librdkafka's default, stated so that it stays): an aborted one's
    // are never acknowledged as written.
    let pass = Pass { target, run_id, since_ms, deadline, isolation: "read_committed" };
    let (complete, last_error) = pass.read(&mut report.retried_errors, |message| match message {
        None => report.unexpected += 1,
        Some((pid, seq)) => {
            if !seen.entry(pid.to_string()).or_default().insert(seq) {
                report.duplicates += 1;
            } else if acked.is_none_or(|a| a.get(pid).is_some_and(|s| s.contains(seq))) {
                report.found += 1;
            } else {
                report.found_unacked += 1;
            }
        }
    })?;
    report.complete = complete;
    report.last_error = last_error;
    if target.transactional {
        let mut aborted: BTreeMap<String, SeqSet> = BTreeMap::new();
        let pass = Pass { isolation: "read_uncommitted", ..pass };
        let (complete, last_error) = pass.read(&mut report.retried_errors, |message| {
            if let Some((pid, seq)) = message {
                if !seen.get(pid).is_some_and(|s| s.contains(seq)) {
                    aborted.entry(pid.to_string()).or_default().insert(seq);
                }
            }
        })?;
        report.aborted = Some(aborted.values().map(SeqSet::len).sum());
        report.complete &= complete;
        report.last_error = last_error.or(report.last_error);
    }
    match acked {
        Some(_) => report.missing = report.acked - report.found,
        None => {
            // Without the test's acknowledgements a gap may be a sample that failed and was never written:
            // counted apart, never as missing.
            report.acked = report.found;
            report.gaps = Some(seen.values().map(SeqSet::gaps).sum());
        }
    }
    Ok(report)
}

/// One read of the run's part of the topic, with one isolation level.
#[derive(Clone, Copy)]
struct Pass<'a> {
    target: &'a AuditTarget,
    run_id: &'a str,
    since_ms: u64,
    deadline: Instant,
    isolation: &'static str,
}

impl Pass<'_> {
    /// Reads from the run's first offsets to the end offsets this isolation level sees, handing every message to
    /// `visit` as this run's (producer id, sequence) or None; returns whether the end was reached before the
    /// deadline, and the last error met.
    fn read(
        self,
        retried: &mut u64,
        mut visit: impl FnMut(Option<(&str, u64)>),
    ) -> Result<(bool, Option<String>), EngineError> {
        let target = self.target;
        let mut props = target.client.clone();
        // librdkafka wants a group id even for manual assignment; nothing is committed to it.
        props.insert("group.id".into(), format!("kafka-native-audit-{}", self.run_id));
        props.insert("enable.auto.commit".into(), "false".into());
        // Commit markers take offsets no message is delivered at, so the end of a partition is known from
        // librdkafka's end-of-partition event, not from reaching its last offset.
        props.insert("isolation.level".into(), self.isolation.into());
        props.insert("enable.partition.eof".into(), "true".into());
        let consumer: Created<BaseConsumer<ClientCtx>> = create(&props, ClientCtx::default(), "audit consumer")?;
        let kafka = |e: rdkafka::error::KafkaError| EngineError::from_kafka(&e);
        let deadline = self.deadline;
        let failed = |what: &str, e: EngineError| {
            EngineError::named(
                e.code.clone(),
                format!(
                    "{what} ({}) did not succeed within audit.timeout.ms ({} ms): {}",
                    self.isolation,
                    target.timeout.as_millis(),
                    e.message
                ),
            )
        };

        let metadata = retry(deadline, retried, |t| consumer.fetch_metadata(Some(&target.topic), t).map_err(kafka))
            .map_err(|e| failed("reading the topic's metadata", e))?;
        let partitions: Vec<i32> = metadata
            .topics()
            .iter()
            .filter(|t| t.name() == target.topic)
            .flat_map(|t| t.partitions().iter().map(|p| p.id()))
            .collect();
        let mut by_time = TopicPartitionList::new();
        for p in &partitions {
            by_time.add_partition_offset(&target.topic, *p, Offset::Offset(self.since_ms as i64)).map_err(kafka)?;
        }
        let starts = retry(deadline, retried, |t| consumer.offsets_for_times(by_time.clone(), t).map_err(kafka))
            .map_err(|e| failed("finding the run's first offsets", e))?;

        let mut assignment = TopicPartitionList::new();
        let mut remaining: BTreeMap<i32, i64> = BTreeMap::new(); // partition -> end offset still to reach
        for elem in starts.elements() {
            let Offset::Offset(start) = elem.offset() else { continue }; // nothing written since the run started
                                                                         // The end this isolation level reads to: the last-stable offset for read_committed, the high watermark
                                                                         // for read_uncommitted (librdkafka asks with the consumer's isolation level).
            let (_, high) = retry(deadline, retried, |t| {
                consumer.fetch_watermarks(&target.topic, elem.partition(), t).map_err(kafka)
            })
            .map_err(|e| failed("reading the end offsets", e))?;
            if start < high {
                assignment
                    .add_partition_offset(&target.topic, elem.partition(), Offset::Offset(start))
                    .map_err(kafka)?;
                remaining.insert(elem.partition(), high);
            }
        }
        consumer.assign(&assignment).map_err(kafka)?;

        let mut last_error = None;
        while !remaining.is_empty() && Instant::now() < deadline {
            let Some(result) = consumer.poll(Duration::from_millis(200)) else { continue };
            let message = match result {
                Ok(m) => m,
                Err(rdkafka::error::KafkaError::PartitionEOF(p)) => {
                    remaining.remove(&p);
                    continue;
                }
                // librdkafka reconnects and finds the new leader by itself: note the error and keep reading until
                // the deadline; only then does the report say it is incomplete (with this error).
                Err(e) => {
                    *retried += 1;
                    last_error = Some(kafka(e).to_string());
                    continue;
                }
            };
            if let Some(&end) = remaining.get(&message.partition()) {
                if message.offset() + 1 >= end {
                    remaining.remove(&message.partition());
                }
            }
            visit(ours(&message, self.run_id));
        }
        Ok((remaining.is_empty(), last_error))
    }
}

/// Runs `op` with the time left (at most 10 s a try) until it succeeds or `deadline` passes; the last error wins.
fn retry<T>(
    deadline: Instant,
    retried: &mut u64,
    mut op: impl FnMut(Duration) -> Result<T, EngineError>,
) -> Result<T, EngineError> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match op(left.clamp(Duration::from_millis(100), Duration::from_secs(10))) {
            Ok(v) => return Ok(v),
            Err(e) if Instant::now() + Duration::from_millis(200) < deadline => {
                *retried += 1;
                log::info!("audit: {e}; retrying");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => return Err(e),
        }
    }
}

/// (producer id, sequence) of a message of run `run_id`, or None for anything else.
fn ours<'a>(message: &'a impl Message, run_id: &str) -> Option<(&'a str, u64)> {
    let headers = message.headers()?;
    let (mut run, mut pid, mut seq) = (None, None, None);
    for h in headers.iter() {
        match h.key {
            RUN_HEADER => run = h.value,
            PRODUCER_HEADER => pid = h.value.and_then(|v| std::str::from_utf8(v).ok()),
            SEQ_HEADER => seq = h.value.and_then(|v| <[u8; 8]>::try_from(v).ok()).map(u64::from_be_bytes),
            _ => {}
        }
    }
    (run? == run_id.as_bytes()).then_some((pid?, seq?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_target_keeps_only_connection_properties() {
        let mut client = BTreeMap::new();
        for (k, v) in [("bootstrap.servers", "b:1"), ("sasl.username", "u"), ("acks", "all"), ("linger.ms", "5")] {
            client.insert(k.to_string(), v.to_string());
        }
        let t = AuditTarget::new(&client, "t", Duration::from_secs(1));
        assert_eq!(t.client.keys().collect::<Vec<_>>(), ["bootstrap.servers", "sasl.username"]);
    }
}
