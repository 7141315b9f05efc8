//! The totals of one run (one JMeter test), passed to every handle instead of process-wide statics, so that tests
//! can run several scenarios in one binary; the end-of-test reports: kafka-producer-perf-test's and
//! kafka-consumer-perf-test's lines, the audit's line, and the JSON summaries (serde).
//!
//! The JNI bridge holds the one instance of the JVM ([`crate::jni`]); a test makes its own with [`Run::new`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;

use crate::audit::{self, AuditReport};
use crate::consumer::stats::{ConsumerTotals, PERF_HEADER};
use crate::error::{Code, EngineError};
use crate::producer::stats::Totals;

/// What the handles of one run did: they merge here when they close; a report takes it and starts afresh.
#[derive(Default)]
pub struct Run {
    producer: Mutex<Totals>,
    consumer: Mutex<ConsumerTotals>,
    /// (run id, run start in epoch milliseconds): made at the first open, forgotten at the producer report.
    id: Mutex<Option<(String, u64)>>,
    /// Where the producers' send->ack time went (librdkafka's statistics), merged as they close.
    pub breakdown: crate::run::breakdown::RunBreakdown,
    /// The summaries and lag readings of the run, for the verdict judged after JMeter's end of test.
    pub judgement: crate::verdict::judgement::Record,
    /// A producer handle was closed without waiting (JMeter stopped the test, or the JVM is ending): the report
    /// then skips the audit's read-back, which could wait out audit.timeout.ms on a broker that is gone.
    stopped: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The producer report's JSON: the figures, the perf-test line, the run id and the audit.
#[derive(Serialize)]
struct ProducerJson<'a> {
    /// Marks the file as a summary of ours ([`crate::run::report_paths`]); first in the file's alphabetical key order.
    #[serde(rename = "_format")]
    format: &'static str,
    #[serde(flatten)]
    figures: crate::producer::stats::Summary<'a>,
    perf_line: &'a str,
    run_id: &'a str,
    /// The test was stopped before its end (StopTestNow, or the JVM terminated): the figures cover what was
    /// done until then.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stopped: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    audit: Option<AuditJson>,
    /// With `audit=true`: what the broker acknowledged (sequence ranges per producer) and when the run started,
    /// for an audit on demand later (`scripts/audit --summary`): without them a failed, never-written message
    /// cannot be told from a lost one.
    #[serde(skip_serializing_if = "Option::is_none")]
    audit_acked: Option<BTreeMap<String, Vec<[u64; 2]>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_start_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    breakdown: Option<serde_json::Value>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum AuditJson {
    Report(AuditReport),
    Failed { error: String },
    Skipped { skipped: String },
}

/// The consumer report's JSON: the figures and the three printed lines.
#[derive(Serialize)]
struct ConsumerJson<'a> {
    /// See [`ProducerJson::format`].
    #[serde(rename = "_format")]
    format: &'static str,
    #[serde(flatten)]
    figures: crate::consumer::stats::Summary<'a>,
    perf_header: &'a str,
    perf_row: &'a str,
    e2e_line: &'a str,
    /// Statically assigned partitions: read against available at the start, unread ones named.
    partitions_line: Option<String>,
}

impl Run {
    /// A new, empty run.
    pub fn new() -> Arc<Run> {
        Arc::new(Run::default())
    }

    /// (run id, run start in epoch milliseconds) of this run.
    pub fn current_run(&self) -> (String, u64) {
        lock(&self.id)
            .get_or_insert_with(|| {
                let start = audit::epoch_millis();
                (format!("{start:x}-{:08x}", fastrand::u32(..)), start)
            })
            .clone()
    }

    /// A producer handle's totals, at its close.
    pub fn merge_producer(&self, totals: &Totals) {
        lock(&self.producer).merge(totals);
    }

    /// A producer handle closed without waiting for its messages (the test was stopped, or the JVM is ending).
    pub fn note_stopped(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// Retries counted by a producer (from librdkafka's statistics), when it closes.
    pub fn add_retries(&self, retries: u64) {
        lock(&self.producer).retries += retries;
    }

    /// A consumer handle's totals, at its close.
    pub fn merge_consumer(&self, totals: &ConsumerTotals) {
        lock(&self.consumer).merge(totals);
    }

    /// Ends the producers' run: returns the perf-test line (None if nothing was sent), followed by the audit's
    /// line when `audit=true`, and writes the JSON summary to `path`.
    pub fn producer_report(&self, path: Option<&str>) -> Result<Option<String>, EngineError> {
        let mut totals = std::mem::take(&mut *lock(&self.producer));
        let stopped = self.stopped.swap(false, Ordering::Relaxed);
        let (run_id, run_start_ms) = self.current_run();
        *lock(&self.id) = None;
        if totals.sent == 0 {
            return Ok(None);
        }
        let mut text = totals.perf_line();
        let perf_line = text.clone();
        if let Some(late) = totals.late_line() {
            text = format!("{text}\n{late}");
        }
        if let Some(t) = &totals.transactions {
            text = format!("{text}\n{}", t.line());
        }
        // Where the time went: one line right after the perf line, then the hints with their evidence.
        let (b, knobs) = self.breakdown.take();
        // Retried: requests librdkafka sent again (its txretries, added as producers close) and messages it wrote
        // into a new request after a failed one (a leader kill retries that way only).
        totals.retries += b.resent(totals.sent);
        let mean_ms = totals.latency_us.mean() / 1000.0;
        let breakdown =
            crate::run::breakdown::report(&b, knobs.as_ref(), mean_ms, totals.duration_secs(), totals.retries);
        if let Some(b) = &breakdown {
            text +=
                &format!("\n{}", [b.line.clone()].into_iter().chain(b.hints.clone()).collect::<Vec<_>>().join("\n"));
        }
        // Nothing acknowledged, nothing to prove: no read-back (it would wait out audit.timeout.ms on a cluster that
        // may not even exist, e.g. handles that only validated their settings).
        let audit = totals.audit.as_ref().filter(|_| totals.acked > 0).map(|target| {
            if stopped {
                let why = format!(
                    "the test was stopped before its end (StopTestNow, or the JVM was terminated), when a broker may \
                     be gone: no read-back, so that the stop is not held up for up to audit.timeout.ms; audit the run \
                     later with scripts/audit --topic {} --summary <kafka.summary.file>",
                    target.topic
                );
                text.push_str(&format!("\naudit of run {run_id} skipped: {why}"));
                return AuditJson::Skipped { skipped: why };
            }
            // A second of slack: message timestamps come from the producer's clock, the run start from ours.
            let since = run_start_ms.saturating_sub(1000);
            match audit::read_back(target, &run_id, since, Some(&totals.acked_seqs)) {
                Ok(report) => {
                    text.push('\n');
                    text.push_str(&report.line());
                    AuditJson::Report(report)
                }
                Err(e) => {
                    text.push_str(&format!("\naudit of run {run_id} failed: {e}"));
                    AuditJson::Failed { error: e.to_string() }
                }
            }
        });
        let audit_acked = totals
            .audit
            .is_some()
            .then(|| totals.acked_seqs.iter().map(|(pid, seqs)| (pid.clone(), seqs.ranges())).collect());
        let json = ProducerJson {
            format: crate::run::report_paths::SUMMARY_FORMAT,
            figures: totals.summary(),
            perf_line: &perf_line,
            run_id: &run_id,
            stopped,
            audit,
            audit_acked,
            run_start_ms: totals.audit.is_some().then_some(run_start_ms),
            breakdown: breakdown.map(|b| b.json),
        };
        let mut value = serde_json::to_value(&json).expect("summaries have string keys only");
        value["test"] = self.judgement.identity();
        // OAUTHBEARER/OIDC: the tokens the run needed, and whether refreshing them ever failed.
        if let Some(oauth) = crate::client::oauth::summary() {
            value["oauth"] = oauth;
        }
        if let Some(line) = crate::client::oauth::summary_line() {
            text = format!("{text}\n{line}");
        }
        self.judgement.remember_summary(crate::verdict::judgement::Section::Producer, &value, path);
        if let Some(path) = path {
            write_json(path, &value, "kafka.summary.file")?;
        }
        Ok(Some(text))
    }

    /// Ends the consumers' run: returns the report (perf-test header, row, end-to-end latency line; None if no
    /// consumer sampled) and writes the JSON summary to `path`.
    pub fn consumer_report(&self, path: Option<&str>) -> Result<Option<String>, EngineError> {
        let totals = std::mem::take(&mut *lock(&self.consumer));
        if totals.samples == 0 {
            return Ok(None);
        }
        let (row, e2e) = (totals.perf_row(), totals.e2e_line());
        let partitions_line = totals.partitions_line();
        let mut report = format!("{PERF_HEADER}\n{row}\n{e2e}");
        if let Some(line) = &partitions_line {
            report = format!("{report}\n{line}");
        }
        let json = ConsumerJson {
            format: crate::run::report_paths::SUMMARY_FORMAT,
            figures: totals.summary(),
            perf_header: PERF_HEADER,
            perf_row: &row,
            e2e_line: &e2e,
            partitions_line,
        };
        let mut value = serde_json::to_value(&json).expect("summaries have string keys only");
        value["test"] = self.judgement.identity();
        if let Some(oauth) = crate::client::oauth::summary() {
            value["oauth"] = oauth;
        }
        self.judgement.remember_summary(crate::verdict::judgement::Section::Consumer, &value, path);
        if let Some(path) = path {
            write_json(path, &value, "kafka.consumer.summary.file")?;
        }
        Ok(Some(report))
    }
}

/// Pretty JSON with its keys in alphabetical order (through a `Value`, as the summaries have always been written).
fn write_json(path: &str, value: &serde_json::Value, property: &str) -> Result<(), EngineError> {
    let pretty = serde_json::to_string_pretty(value).expect("a JSON value always serializes");
    std::fs::write(path, pretty)
        .map_err(|e| EngineError::new(Code::SummaryNotWritten, format!("{property}: cannot write '{path}': {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::AuditTarget;
    use std::time::{Duration, Instant};

    #[test]
    fn a_stopped_run_skips_the_audit_with_a_note_and_says_it_was_stopped() {
        let run = Run::new();
        let mut t = Totals::default();
        t.record_send(Instant::now());
        t.record_ack(Duration::from_millis(1), 10, 0, Instant::now());
        let client = BTreeMap::from([("bootstrap.servers".to_string(), "127.0.0.1:1".to_string())]);
        // A read-back against this would wait out its 60 s: the skip is what keeps the test fast.
        t.audit = Some(AuditTarget::new(&client, "t", Duration::from_secs(60)));
        run.merge_producer(&t);
        run.note_stopped();
        let path = std::env::temp_dir().join(format!("kn-stopped-{}.json", std::process::id()));
        let start = Instant::now();
        let text = run.producer_report(Some(path.to_str().unwrap())).unwrap().unwrap();
        assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
        assert!(text.contains("audit of run ") && text.contains(" skipped: the test was stopped"), "{text}");
        let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(json["stopped"], true, "{json}");
        assert!(json["audit"]["skipped"].as_str().unwrap().contains("scripts/audit"), "{json}");
        // The flag belongs to that run: the next report is a normal one.
        assert!(!run.stopped.load(Ordering::Relaxed));
        let _ = std::fs::remove_file(path);
    }
}
