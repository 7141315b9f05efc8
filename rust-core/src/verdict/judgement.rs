//! The end of a run as a whole: what every part reported, judged once after JMeter's own end of test.
//!
//! The producer's and the consumer's summaries are remembered when they are written (each when its last handle
//! closes), the lag sampler's readings as they are taken, in the run's [`Record`]. [`Record::judge`] then gathers them into one value by section
//! (`producer`, `consumer`, `lag`, `generator` from the Java side, `baseline`), evaluates `kafka.verdict` over it
//! ([`crate::verdict::criteria`]), and adds `generator`, `lag` and `verdict` blocks to the summary files written in this run.

use crate::error::Code;
use std::sync::Mutex;

use serde_json::{json, Value};

use super::{baseline, criteria, junit};
use crate::lag::LagOutcome;
use crate::run::report_paths::{self, Input, Report};

/// Which summary a remembered value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The producer's summary (`kafka.summary.file`).
    Producer,
    /// The consumer's summary (`kafka.consumer.summary.file`).
    Consumer,
}

/// The lag readings of a run (all lag samplers together).
#[derive(Debug, Clone, Default, PartialEq)]
struct LagRecord {
    samples: u64,
    /// Samples that read the lag (including those that found it growing).
    readings: u64,
    growing_readings: u64,
    max: i64,
    last: Option<i64>,
}

impl LagRecord {
    fn to_json(&self) -> Value {
        if self.samples == 0 {
            return Value::Null;
        }
        json!({
            "samples": self.samples,
            "readings": self.readings,
            "growing_readings": self.growing_readings,
            "max": self.max,
            "last": self.last,
            "verdict": if self.growing_readings > 0 { "growing" } else { "stable" },
        })
    }
}

#[derive(Default)]
struct RunRecord {
    producer: Option<(Value, Option<String>)>,
    consumer: Option<(Value, Option<String>)>,
    lag: LagRecord,
    /// What the test is (plan, samplers and their main settings), from the Java side; the summaries' `test` block.
    identity: Value,
    /// The baseline as read at test start ([`Record::prepare`]): (path, its summary or why it cannot be used).
    baseline: Option<(String, Result<Value, String>)>,
}

/// What a run reported, until it is judged (one per [`crate::run::report::Run`]).
#[derive(Default)]
pub struct Record(Mutex<RunRecord>);

impl Record {
    fn lock(&self) -> std::sync::MutexGuard<'_, RunRecord> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers a summary as it is written to `path` (None: not written to a file).
    pub fn remember_summary(&self, section: Section, summary: &Value, path: Option<&str>) {
        let entry = Some((summary.clone(), path.map(str::to_string)));
        match section {
            Section::Producer => self.lock().producer = entry,
            Section::Consumer => self.lock().consumer = entry,
        }
    }

    /// Remembers one lag sample.
    pub fn remember_lag(&self, outcome: &LagOutcome) {
        let mut run = self.lock();
        let lag = &mut run.lag;
        lag.samples += 1;
        let growing = outcome.error.as_ref().is_some_and(|e| e.code == Code::LagGrowing);
        if outcome.error.is_none() || growing {
            lag.readings += 1;
            lag.growing_readings += growing as u64;
            lag.max = lag.max.max(outcome.total);
            lag.last = Some(outcome.total);
        }
    }

    /// At test start, before any load and before any file is removed: refuses an invalid `kafka.verdict`, report paths
    /// that would replace a file they should not ([`report_paths`]), and a baseline that a regression criterion needs
    /// but cannot be read; reads the baseline now, so that nothing this run writes or removes can change it.
    pub fn prepare(&self, request: &Request, reports: &[Report], inputs: &[Input]) -> Result<(), String> {
        let criteria = criteria::parse(&request.spec).map_err(|e| e.message)?;
        report_paths::check(reports, inputs)?;
        let baseline = request.baseline.as_deref().map(|path| (path.to_string(), baseline::read(path)));
        if let Some((_, Err(e))) = &baseline {
            if criteria.iter().any(|c| c.metric.name.starts_with("regression")) {
                return Err(format!("kafka.verdict.baseline: {e}"));
            }
        }
        self.lock().baseline = baseline;
        Ok(())
    }

    /// What the test is, as the Java side knows it so far (it grows as samplers set up): the summaries' `test` block.
    pub fn identify(&self, identity: Value) {
        self.lock().identity = identity;
    }

    /// See [`Record::identify`] (null when not given).
    pub fn identity(&self) -> Value {
        self.lock().identity.clone()
    }

    /// Judges the run and forgets it (the next test starts afresh).
    pub fn judge(&self, request: &Request) -> Judgement {
        judge(std::mem::take(&mut *self.lock()), request)
    }
}

/// What the end of the test asks for.
#[derive(Debug, Default)]
pub struct Request {
    /// `kafka.verdict` (empty: no criteria, the summary blocks are still added).
    pub spec: String,
    /// `kafka.verdict.baseline`: a previous summary file.
    pub baseline: Option<String>,
    /// `kafka.verdict.junit`: where to write the JUnit XML report.
    pub junit: Option<String>,
    /// The load generator's health, measured by the Java side.
    pub generator: Value,
}

/// The verdict of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// Lines for stdout and jmeter.log (None when there was nothing to judge nor report).
    pub text: Option<String>,
    /// Criteria judged.
    pub criteria: usize,
    /// Criteria failed (an invalid verdict or an unwritable JUnit file count as one each).
    pub failed: usize,
}

impl Judgement {
    /// The exit code `jmeter -n` should end with: 0, or [`criteria::FAILED_EXIT_CODE`].
    pub fn exit_code(&self) -> i32 {
        if self.failed > 0 {
            criteria::FAILED_EXIT_CODE
        } else {
            0
        }
    }
}

fn judge(record: RunRecord, request: &Request) -> Judgement {
    let producer = record.producer.as_ref().map(|(v, _)| v.clone()).unwrap_or(Value::Null);
    let consumer = record.consumer.as_ref().map(|(v, _)| v.clone()).unwrap_or(Value::Null);
    let lag = record.lag.to_json();
    let nothing_ran = producer.is_null() && consumer.is_null() && lag.is_null();
    if nothing_ran && request.spec.trim().is_empty() {
        return Judgement { text: None, criteria: 0, failed: 0 };
    }
    // Read at test start when prepared; read now otherwise (a caller that did not prepare).
    let stored = record.baseline.filter(|(path, _)| Some(path.as_str()) == request.baseline.as_deref());
    let baseline_block = request.baseline.as_deref().map(|path| {
        let read = stored.as_ref().map_or_else(|| baseline::read(path), |(_, b)| b.clone());
        let mut note = None;
        let rows = read.and_then(|b| {
            // The baseline is compared with the same kind of summary from this run.
            let current = if b.get("records_per_sec").is_some() { &producer } else { &consumer };
            if current.is_null() {
                return Err(format!("this run wrote no summary of the baseline's kind to compare with '{path}'"));
            }
            note = baseline::same_test(path, &b, current)?;
            baseline::compare(&b, current)
        });
        let mut block = baseline::to_json(path, &rows);
        if let Some(n) = &note {
            block["note"] = json!(n);
        }
        (block, rows, note)
    });
    let view = json!({
        "producer": producer,
        "consumer": consumer,
        "lag": lag,
        "generator": request.generator,
        "baseline": baseline_block.as_ref().map(|(j, _, _)| j.clone()),
    });

    let mut lines: Vec<String> = Vec::new();
    if let Some((_, rows, note)) = &baseline_block {
        if let Some(n) = note {
            lines.push(format!("baseline: WARNING {n}"));
        }
        lines.push(match rows {
            Ok(rows) => format!(
                "baseline {}: {}",
                request.baseline.as_deref().unwrap_or(""),
                rows.iter()
                    .map(|r| format!("{} {:+.1}% ({:.2} -> {:.2} {})", r.name, r.change_pct, r.before, r.after, r.unit))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Err(e) => format!("baseline: {e}"),
        });
    }
    let (outcomes, invalid) = match criteria::parse(&request.spec) {
        Ok(criteria) => (criteria::evaluate(&criteria, &view), None),
        Err(e) => (Vec::new(), Some(e.message)),
    };
    let failed = outcomes.iter().filter(|o| !o.passed).count() + invalid.is_some() as usize;
    for o in &outcomes {
        lines.push(format!("verdict: {}", o.line()));
    }
    match &invalid {
        Some(e) => lines.push(format!("verdict: FAIL: {e}; jmeter -n exits with code {}", criteria::FAILED_EXIT_CODE)),
        None if !outcomes.is_empty() => lines.push(criteria::closing_line(&outcomes)),
        None => {}
    }
    let verdict_block = (!request.spec.trim().is_empty()).then(|| {
        json!({
            "spec": request.spec,
            "passed": failed == 0,
            "exit_code": if failed == 0 { 0 } else { criteria::FAILED_EXIT_CODE },
            "invalid": invalid,
            "criteria": outcomes.iter().map(criteria::Outcome::to_json).collect::<Vec<_>>(),
            "baseline": baseline_block.as_ref().map(|(j, _, _)| j.clone()),
        })
    });

    let mut write_failures = 0;
    if let Some(path) = &request.junit {
        let xml = junit::report(&outcomes, invalid.as_deref(), &lines.join("\n"));
        if let Err(e) = std::fs::write(path, xml) {
            lines.push(format!("verdict: FAIL: kafka.verdict.junit: cannot write '{path}': {e}"));
            write_failures += 1;
        }
    }
    for (summary, path) in [record.producer, record.consumer].into_iter().flatten() {
        let Some(path) = path else { continue };
        let mut summary = summary;
        summary["generator"] = request.generator.clone();
        summary["lag"] = view["lag"].clone();
        if let Some(v) = &verdict_block {
            summary["verdict"] = v.clone();
        }
        let text = serde_json::to_string_pretty(&summary).expect("a JSON value always serializes");
        if let Err(e) = std::fs::write(&path, text) {
            lines.push(format!("verdict: the summary '{path}' could not be updated: {e}"));
        }
    }
    Judgement {
        text: (!lines.is_empty()).then(|| lines.join("\n")),
        criteria: outcomes.len(),
        failed: failed + write_failures,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judges_remembered_summaries_and_updates_their_files() {
        let record = Record::default();
        let dir = std::env::temp_dir().join(format!("kn-judgement-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let summary = dir.join("summary.json");
        let base = dir.join("base.json");
        let junit = dir.join("junit.xml");
        let producer = json!({ "sent": 100, "acked": 100, "failed": 0, "records_per_sec": 900.0,
                               "latency_us": { "p50": 1000, "p99": 2000 } });
        std::fs::write(
            &base,
            json!({ "records_per_sec": 1000.0, "latency_us": { "p50": 1000, "p99": 2000 } }).to_string(),
        )
        .unwrap();
        record.remember_summary(Section::Producer, &producer, summary.to_str());
        for total in [10, 20] {
            record.remember_lag(&LagOutcome { total, ..LagOutcome::default() });
        }
        let j = record.judge(&Request {
            spec: "p99<50ms; lag=stable; regression<5%; audit.missing=0".into(),
            baseline: base.to_str().map(String::from),
            junit: junit.to_str().map(String::from),
            generator: json!({ "samples": 3 }),
        });
        assert_eq!((j.criteria, j.failed, j.exit_code()), (4, 2, 3));
        let text = j.text.unwrap();
        assert!(text.contains("throughput -10.0% (1000.00 -> 900.00 records/s)"), "{text}");
        assert!(text.contains("verdict: regression = 10 % (threshold < 5 %): FAIL"), "{text}");
        let written: Value = serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
        assert_eq!(written["verdict"]["passed"], false);
        assert_eq!(written["verdict"]["criteria"][1]["value"], "stable");
        assert_eq!((written["lag"]["max"].clone(), written["generator"]["samples"].clone()), (json!(20), json!(3)));
        assert!(std::fs::read_to_string(&junit).unwrap().contains(r#"tests="4" failures="2""#));
        // Forgotten after judging: the next run with the same spec measures nothing and fails every criterion.
        let again = record.judge(&Request { spec: "p99<50ms".into(), ..Request::default() });
        assert_eq!((again.criteria, again.failed), (1, 1));
        assert!(again.text.unwrap().contains("not measured: no producer sent anything"));
        assert_eq!(record.judge(&Request::default()).text, None);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
