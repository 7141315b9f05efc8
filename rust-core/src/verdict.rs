//! `kafka.verdict`: pass/fail criteria over the run's figures, for `jmeter -n` in CI.
//!
//! A verdict is a list of criteria separated by `;` (or new lines), each `metric OP threshold`, e.g.
//! `error.rate<0.1%; p99<50ms; records.per.sec>=40000; audit.missing=0; audit.duplicates=0; lag=stable`.
//! Criteria are evaluated over a [`serde_json::Value`] holding the run's summaries by section (see
//! [`crate::judgement`]): `producer`, `consumer`, `lag`, `generator`, `baseline`. Reading the figures by JSON path
//! keeps the verdict independent of how the summary structs are laid out.
//!
//! A criterion whose figure is absent (no audit ran, no consumer, no baseline given, ...) FAILS: a CI gate that
//! passes because nothing was measured is worse than none.

use std::fmt;

use serde_json::{json, Value};

use crate::error::EngineError;

/// What a figure is, which decides the units a threshold may carry and how values are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A percentage: `0.1%` (a bare number is read as percent too).
    Percent,
    /// A duration in milliseconds: `50ms`, `2s`, `800us` (a bare number is read as milliseconds).
    Millis,
    /// A count or a rate: a plain number.
    Number,
    /// A state: one of a few words (`lag=stable`).
    State(&'static [&'static str]),
}

/// A figure the verdict can judge: its name, what it is, where it comes from and how to get it measured.
pub struct Metric {
    /// The name a criterion uses.
    pub name: &'static str,
    /// What the figure is (unit and printing).
    pub kind: Kind,
    /// What the figure means (listed when an unknown name is refused).
    pub about: &'static str,
    /// Reads the figure from the run's sections, or says why it was not measured.
    read: fn(&Value) -> Result<Measured, String>,
}

/// A measured figure, in the metric's base unit (percent, milliseconds, count).
#[derive(Debug, Clone, PartialEq)]
pub enum Measured {
    /// A figure in its metric's base unit.
    Number(f64),
    /// A state (`stable`, `growing`).
    Word(String),
}

const NO_PRODUCER: &str = "no producer sent anything in this run";
const NO_CONSUMER: &str = "no consumer sampled in this run";
const NO_AUDIT: &str = "no audit ran: set audit=true on the producer";
const NO_LAG: &str = "no lag was read: add a KafkaLagSampler thread group";
const NO_BASELINE: &str = "no baseline to compare with: set kafka.verdict.baseline=previous-summary.json";
const NO_GENERATOR: &str = "the load generator was not sampled";

fn section<'a>(run: &'a Value, name: &str, missing: &str) -> Result<&'a Value, String> {
    match run.get(name) {
        Some(v) if !v.is_null() => Ok(v),
        _ => Err(missing.to_string()),
    }
}

fn number(v: &Value, path: &[&str], missing: &str) -> Result<f64, String> {
    let mut at = v;
    for p in path {
        at = at.get(*p).ok_or_else(|| missing.to_string())?;
    }
    at.as_f64().ok_or_else(|| missing.to_string())
}

fn producer(run: &Value) -> Result<&Value, String> {
    let p = section(run, "producer", NO_PRODUCER)?;
    if number(p, &["sent"], NO_PRODUCER)? == 0.0 {
        return Err(NO_PRODUCER.into());
    }
    Ok(p)
}

/// A send->ack latency quantile of the producer, in ms; unmeasured when nothing was acknowledged.
fn latency(run: &Value, key: &str) -> Result<Measured, String> {
    let p = producer(run)?;
    if number(p, &["acked"], NO_PRODUCER)? == 0.0 {
        return Err("no message was acknowledged: there is no latency to judge".into());
    }
    Ok(Measured::Number(number(p, &["latency_us", key], "no latency in the producer's summary")? / 1000.0))
}

fn audit(run: &Value, key: &str) -> Result<Measured, String> {
    let a = section(producer(run)?, "audit", NO_AUDIT)?;
    if let Some(e) = a.get("error").and_then(Value::as_str) {
        return Err(format!("the audit failed: {e}"));
    }
    if a.get("complete").and_then(Value::as_bool) == Some(false) {
        return Err("the audit did not reach the end of the topic (raise audit.timeout.ms)".into());
    }
    Ok(Measured::Number(number(a, &[key], NO_AUDIT)?))
}

fn consumer(run: &Value) -> Result<&Value, String> {
    let c = section(run, "consumer", NO_CONSUMER)?;
    if number(c, &["samples"], NO_CONSUMER)? == 0.0 {
        return Err(NO_CONSUMER.into());
    }
    Ok(c)
}

fn e2e(run: &Value, key: &str) -> Result<Measured, String> {
    let missing = "no consumed record carried a send time (kn.sent.us header or Kafka timestamp)";
    Ok(Measured::Number(number(consumer(run)?, &["e2e_latency_us", key], missing)? / 1000.0))
}

fn lag(run: &Value) -> Result<&Value, String> {
    let l = section(run, "lag", NO_LAG)?;
    if number(l, &["readings"], NO_LAG)? == 0.0 {
        return Err("the lag sampler never read the group's lag (see its failed samples)".into());
    }
    Ok(l)
}

fn regression(run: &Value, key: Option<&str>) -> Result<Measured, String> {
    let b = section(run, "baseline", NO_BASELINE)?;
    if let Some(e) = b.get("error").and_then(Value::as_str) {
        return Err(e.to_string());
    }
    let rows = b.get("rows").and_then(Value::as_array).ok_or_else(|| NO_BASELINE.to_string())?;
    let worse: Vec<f64> = rows
        .iter()
        .filter(|r| key.is_none_or(|k| r.get("name").and_then(Value::as_str) == Some(k)))
        .filter_map(|r| r.get("worse_pct").and_then(Value::as_f64))
        .collect();
    if worse.is_empty() {
        return Err(format!("the baseline and this run have no {} figure in common", key.unwrap_or("comparable")));
    }
    Ok(Measured::Number(worse.into_iter().fold(f64::MIN, f64::max)))
}

fn generator(run: &Value, path: &[&str]) -> Result<Measured, String> {
    let g = section(run, "generator", NO_GENERATOR)?;
    Ok(Measured::Number(number(g, path, NO_GENERATOR)?))
}

fn n(x: f64) -> Result<Measured, String> {
    Ok(Measured::Number(x))
}

/// Every metric a verdict may name.
pub static METRICS: &[Metric] = &[
    Metric {
        name: "error.rate",
        kind: Kind::Percent,
        about: "failed messages / sent messages of the producer",
        read: |r| {
            let p = producer(r)?;
            n(100.0 * number(p, &["failed"], NO_PRODUCER)? / number(p, &["sent"], NO_PRODUCER)?)
        },
    },
    Metric {
        name: "records.per.sec",
        kind: Kind::Number,
        about: "acknowledged records per second (first send to last ack)",
        read: |r| n(number(producer(r)?, &["records_per_sec"], NO_PRODUCER)?),
    },
    Metric {
        name: "mb.per.sec",
        kind: Kind::Number,
        about: "acknowledged MiB per second",
        read: |r| n(number(producer(r)?, &["mb_per_sec"], NO_PRODUCER)?),
    },
    Metric {
        name: "acked",
        kind: Kind::Number,
        about: "acknowledged messages",
        read: |r| n(number(producer(r)?, &["acked"], NO_PRODUCER)?),
    },
    Metric {
        name: "failed",
        kind: Kind::Number,
        about: "failed messages",
        read: |r| n(number(producer(r)?, &["failed"], NO_PRODUCER)?),
    },
    Metric {
        name: "retries",
        kind: Kind::Number,
        about: "retries librdkafka made",
        read: |r| n(number(producer(r)?, &["retries"], NO_PRODUCER)?),
    },
    Metric {
        name: "acked.after.timeout",
        kind: Kind::Number,
        about: "messages acknowledged after their sample had ended (timed out or stopped)",
        read: |r| n(number(producer(r)?, &["acked_after_timeout"], NO_PRODUCER)?),
    },
    Metric { name: "mean", kind: Kind::Millis, about: "mean send->ack latency", read: |r| latency(r, "mean") },
    Metric { name: "p50", kind: Kind::Millis, about: "median send->ack latency", read: |r| latency(r, "p50") },
    Metric { name: "p95", kind: Kind::Millis, about: "95th percentile send->ack latency", read: |r| latency(r, "p95") },
    Metric { name: "p99", kind: Kind::Millis, about: "99th percentile send->ack latency", read: |r| latency(r, "p99") },
    Metric {
        name: "p999",
        kind: Kind::Millis,
        about: "99.9th percentile send->ack latency",
        read: |r| latency(r, "p999"),
    },
    Metric { name: "max", kind: Kind::Millis, about: "highest send->ack latency", read: |r| latency(r, "max") },
    Metric {
        name: "schedule.delay.p99",
        kind: Kind::Millis,
        about: "99th percentile of how late samples started (needs target.rate)",
        read: |r| {
            let missing = "no schedule was kept: set target.rate on the producer";
            n(number(producer(r)?, &["schedule_delay_us", "p99"], missing)? / 1000.0)
        },
    },
    Metric {
        name: "audit.missing",
        kind: Kind::Number,
        about: "acknowledged messages the audit did not find",
        read: |r| audit(r, "missing"),
    },
    Metric {
        name: "audit.duplicates",
        kind: Kind::Number,
        about: "messages the audit found more than once",
        read: |r| audit(r, "duplicates"),
    },
    Metric {
        name: "audit.unexpected",
        kind: Kind::Number,
        about: "messages in the topic not from this run",
        read: |r| audit(r, "unexpected"),
    },
    Metric {
        name: "audit.unacked",
        kind: Kind::Number,
        about: "messages written although reported failed",
        read: |r| audit(r, "found_unacked"),
    },
    Metric {
        name: "lag",
        kind: Kind::State(&["stable", "growing"]),
        about: "growing if any lag sample found the lag growing (LAG_GROWING), else stable",
        read: |r| {
            let growing = number(lag(r)?, &["growing_readings"], NO_LAG)? > 0.0;
            Ok(Measured::Word(if growing { "growing" } else { "stable" }.into()))
        },
    },
    Metric {
        name: "lag.max",
        kind: Kind::Number,
        about: "highest total lag read (records)",
        read: |r| n(number(lag(r)?, &["max"], NO_LAG)?),
    },
    Metric {
        name: "consumer.records",
        kind: Kind::Number,
        about: "records consumed",
        read: |r| n(number(consumer(r)?, &["records"], NO_CONSUMER)?),
    },
    Metric {
        name: "consumer.records.per.sec",
        kind: Kind::Number,
        about: "records consumed per second (nMsg.sec)",
        read: |r| n(number(consumer(r)?, &["perf", "nMsg.sec"], NO_CONSUMER)?),
    },
    Metric {
        name: "consumer.error.rate",
        kind: Kind::Percent,
        about: "failed consumer samples / consumer samples",
        read: |r| {
            let c = consumer(r)?;
            n(100.0 * number(c, &["failed_samples"], NO_CONSUMER)? / number(c, &["samples"], NO_CONSUMER)?)
        },
    },
    Metric {
        name: "consumer.check.failures",
        kind: Kind::Number,
        about: "records that failed the consumer's content or sequence check",
        read: |r| n(number(consumer(r)?, &["check_failures"], NO_CONSUMER)?),
    },
    Metric { name: "e2e.p50", kind: Kind::Millis, about: "median produce->consume latency", read: |r| e2e(r, "p50") },
    Metric {
        name: "e2e.p99",
        kind: Kind::Millis,
        about: "99th percentile produce->consume latency",
        read: |r| e2e(r, "p99"),
    },
    Metric { name: "e2e.max", kind: Kind::Millis, about: "highest produce->consume latency", read: |r| e2e(r, "max") },
    Metric {
        name: "generator.cpu",
        kind: Kind::Percent,
        about: "mean CPU of the JMeter process (engine included), % of all cores",
        read: |r| generator(r, &["process_cpu_pct", "mean"]),
    },
    Metric {
        name: "machine.cpu",
        kind: Kind::Percent,
        about: "mean CPU of the whole machine, % of all cores",
        read: |r| generator(r, &["machine_cpu_pct", "mean"]),
    },
    Metric {
        name: "generator.gc",
        kind: Kind::Percent,
        about: "JVM time in GC pauses, % of the test's duration",
        read: |r| generator(r, &["gc", "pause_pct"]),
    },
    Metric {
        name: "regression",
        kind: Kind::Percent,
        about: "worst change vs the baseline among throughput, p50, p99 (positive = worse)",
        read: |r| regression(r, None),
    },
    Metric {
        name: "regression.throughput",
        kind: Kind::Percent,
        about: "throughput drop vs the baseline (positive = slower)",
        read: |r| regression(r, Some("throughput")),
    },
    Metric {
        name: "regression.p50",
        kind: Kind::Percent,
        about: "p50 rise vs the baseline (positive = slower)",
        read: |r| regression(r, Some("p50")),
    },
    Metric {
        name: "regression.p99",
        kind: Kind::Percent,
        about: "p99 rise vs the baseline (positive = slower)",
        read: |r| regression(r, Some("p99")),
    },
];

/// A comparison of a criterion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "=",
            Op::Ne => "!=",
        }
    }

    fn holds<T: PartialOrd>(self, value: T, threshold: T) -> bool {
        match self {
            Op::Lt => value < threshold,
            Op::Le => value <= threshold,
            Op::Gt => value > threshold,
            Op::Ge => value >= threshold,
            Op::Eq => value == threshold,
            Op::Ne => value != threshold,
        }
    }
}

/// One parsed criterion.
pub struct Criterion {
    /// As written by the user, trimmed.
    pub text: String,
    /// The figure it judges.
    pub metric: &'static Metric,
    /// How the figure must compare with the threshold to pass.
    pub op: Op,
    /// In the metric's base unit (percent, milliseconds, count), or a state's word.
    pub threshold: Measured,
}

/// The result of one criterion.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The criterion as written.
    pub criterion: String,
    /// The metric's name.
    pub metric: &'static str,
    /// The comparison's symbol.
    pub op: &'static str,
    /// In the metric's base unit.
    pub threshold: Measured,
    /// The measured value, or why there is none (then the criterion failed).
    pub value: Result<Measured, String>,
    pub passed: bool,
    kind: Kind,
}

impl fmt::Display for Measured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Measured::Number(x) if x.fract() == 0.0 && x.abs() < 1e15 => write!(f, "{x:.0}"),
            Measured::Number(x) if x.abs() >= 100.0 => write!(f, "{x:.1}"),
            Measured::Number(x) if x.abs() >= 1.0 => write!(f, "{x:.2}"),
            Measured::Number(x) => write!(f, "{x:.4}"),
            Measured::Word(w) => f.write_str(w),
        }
    }
}

fn unit(kind: Kind) -> &'static str {
    match kind {
        Kind::Percent => " %",
        Kind::Millis => " ms",
        Kind::Number | Kind::State(_) => "",
    }
}

impl Outcome {
    /// `p99 = 3.21 ms (threshold < 50 ms): PASS`, or `audit.missing not measured (...) (threshold = 0): FAIL`.
    pub fn line(&self) -> String {
        let u = unit(self.kind);
        let verdict = if self.passed { "PASS" } else { "FAIL" };
        match &self.value {
            Ok(v) => format!("{} = {v}{u} (threshold {} {}{u}): {verdict}", self.metric, self.op, self.threshold),
            Err(why) => {
                format!("{} not measured: {why} (threshold {} {}{u}): {verdict}", self.metric, self.op, self.threshold)
            }
        }
    }

    pub fn to_json(&self) -> Value {
        let as_json = |m: &Measured| match m {
            Measured::Number(x) => json!(x),
            Measured::Word(w) => json!(w),
        };
        json!({
            "criterion": self.criterion,
            "metric": self.metric,
            "op": self.op,
            "threshold": as_json(&self.threshold),
            "unit": unit(self.kind).trim(),
            "value": self.value.as_ref().ok().map(as_json),
            "not_measured": self.value.as_ref().err(),
            "passed": self.passed,
        })
    }
}

/// The exit code of `jmeter -n` when the verdict fails (a criterion failed, could not be measured, or
/// `kafka.verdict` is invalid). 3 is also what Taurus returns for failed pass/fail criteria; JMeter itself uses 1
/// for its own errors, so a CI log tells the two apart.
pub const FAILED_EXIT_CODE: i32 = 3;

/// The list of valid metric names, for error messages.
pub fn metric_list() -> String {
    METRICS.iter().map(|m| format!("  {:<26} {}", m.name, m.about)).collect::<Vec<_>>().join("\n")
}

/// Parses a `kafka.verdict` value; an empty one has no criteria.
pub fn parse(spec: &str) -> Result<Vec<Criterion>, EngineError> {
    spec.split([';', '\n']).map(str::trim).filter(|c| !c.is_empty()).map(parse_criterion).collect()
}

fn parse_criterion(text: &str) -> Result<Criterion, EngineError> {
    let bad = |why: String| EngineError::config(format!("kafka.verdict: '{text}': {why}"));
    let at = text.find(['<', '>', '=', '!']).ok_or_else(|| {
        bad("no comparison: write metric, one of < <= > >= = != and a threshold, e.g. p99<50ms".into())
    })?;
    let (name, rest) = (text[..at].trim(), &text[at..]);
    let (op, threshold) =
        [("<=", Op::Le), (">=", Op::Ge), ("!=", Op::Ne), ("==", Op::Eq), ("<", Op::Lt), (">", Op::Gt), ("=", Op::Eq)]
            .iter()
            .find_map(|(s, op)| rest.strip_prefix(s).map(|t| (*op, t.trim())))
            .ok_or_else(|| bad(format!("'{}' is not a comparison (use < <= > >= = !=)", &rest[..1])))?;
    let metric = METRICS.iter().find(|m| m.name == name).ok_or_else(|| {
        let hint = METRICS
            .iter()
            .map(|m| (strsim::jaro_winkler(m.name, name), m.name))
            .filter(|(score, _)| *score > 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map_or(String::new(), |(_, n)| format!(" (did you mean {n}?)"));
        bad(format!("unknown metric '{name}'{hint}; valid metrics:\n{}", metric_list()))
    })?;
    let threshold = parse_threshold(metric.kind, threshold).map_err(&bad)?;
    if matches!(metric.kind, Kind::State(_)) && !matches!(op, Op::Eq | Op::Ne) {
        return Err(bad(format!("{} is a state: compare it with = or !=", metric.name)));
    }
    Ok(Criterion { text: text.to_string(), metric, op, threshold })
}

fn parse_threshold(kind: Kind, text: &str) -> Result<Measured, String> {
    let number = |t: &str, example: &str| {
        t.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("'{text}' is not a number ({example})"))
    };
    match kind {
        Kind::Percent => Ok(Measured::Number(number(text.strip_suffix('%').unwrap_or(text), "e.g. 0.1%")?)),
        Kind::Millis => {
            let (digits, scale) = if let Some(t) = text.strip_suffix("ms") {
                (t, 1.0)
            } else if let Some(t) = text.strip_suffix("us").or_else(|| text.strip_suffix("µs")) {
                (t, 0.001)
            } else if let Some(t) = text.strip_suffix('s') {
                (t, 1000.0)
            } else if text.ends_with('%') {
                return Err("a latency takes a time, e.g. 50ms, 2s or 800us".into());
            } else {
                (text, 1.0)
            };
            Ok(Measured::Number(number(digits, "e.g. 50ms, 2s or 800us")? * scale))
        }
        Kind::Number => Ok(Measured::Number(number(text, "a plain number, e.g. 40000")?)),
        Kind::State(words) => match words.iter().find(|w| **w == text) {
            Some(w) => Ok(Measured::Word(w.to_string())),
            None => Err(format!("'{text}' is not one of {}", words.join(", "))),
        },
    }
}

/// Evaluates every criterion over the run's sections.
pub fn evaluate(criteria: &[Criterion], run: &Value) -> Vec<Outcome> {
    criteria
        .iter()
        .map(|c| {
            let value = (c.metric.read)(run);
            let passed = match (&value, &c.threshold) {
                (Ok(Measured::Number(v)), Measured::Number(t)) => c.op.holds(*v, *t),
                (Ok(Measured::Word(v)), Measured::Word(t)) => c.op.holds(v, t),
                _ => false,
            };
            Outcome {
                criterion: c.text.clone(),
                metric: c.metric.name,
                op: c.op.symbol(),
                threshold: c.threshold.clone(),
                value,
                passed,
                kind: c.metric.kind,
            }
        })
        .collect()
}

/// The closing line: `verdict: PASS (6 criteria)` or `verdict: FAIL (2 of 6 criteria failed: p99, lag); exit code 3`.
pub fn closing_line(outcomes: &[Outcome]) -> String {
    let failed: Vec<&str> = outcomes.iter().filter(|o| !o.passed).map(|o| o.metric).collect();
    if failed.is_empty() {
        format!("verdict: PASS ({} criteria)", outcomes.len())
    } else {
        format!(
            "verdict: FAIL ({} of {} criteria failed: {}); jmeter -n exits with code {FAILED_EXIT_CODE}",
            failed.len(),
            outcomes.len(),
            failed.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> Value {
        json!({
            "producer": {
                "sent": 2000, "acked": 1999, "failed": 1, "records_per_sec": 45000.0, "mb_per_sec": 43.9,
                "retries": 0, "acked_after_timeout": 0,
                "latency_us": { "mean": 2100.0, "p50": 1800, "p95": 4000, "p99": 8000, "p999": 20000, "max": 30000 },
                "audit": { "missing": 0, "duplicates": 2, "unexpected": 0, "found_unacked": 0, "complete": true }
            },
            "lag": { "readings": 5, "growing_readings": 0, "max": 120 }
        })
    }

    fn judge(spec: &str) -> Vec<Outcome> {
        evaluate(&parse(spec).unwrap(), &run())
    }

    #[test]
    fn criteria_pass_and_fail_on_the_figures() {
        let o =
            judge("error.rate<0.1%; p99<50ms; records.per.sec>=40000; audit.missing=0; audit.duplicates=0; lag=stable");
        let passed: Vec<bool> = o.iter().map(|o| o.passed).collect();
        assert_eq!(passed, [true, true, true, true, false, true], "{o:?}");
        assert_eq!(o[1].line(), "p99 = 8 ms (threshold < 50 ms): PASS");
        assert_eq!(o[4].line(), "audit.duplicates = 2 (threshold = 0): FAIL");
        assert!(closing_line(&o).starts_with("verdict: FAIL (1 of 6 criteria failed: audit.duplicates)"));
        assert_eq!(closing_line(&o[..2]), "verdict: PASS (2 criteria)");
    }

    #[test]
    fn units_convert_to_the_base_unit() {
        assert!(judge("p99 < 0.009s")[0].passed);
        assert!(!judge("p99<7999us")[0].passed);
        assert!(judge("p99<=8")[0].passed, "a bare number is milliseconds");
        assert!(judge("error.rate <= 0.1")[0].passed, "a bare number is percent");
        assert!(judge("lag != growing")[0].passed);
    }

    #[test]
    fn an_unmeasured_criterion_fails_and_says_why() {
        let o = judge("e2e.p99<100ms;regression<10%;schedule.delay.p99<5ms");
        assert!(o.iter().all(|o| !o.passed));
        assert_eq!(o[0].value, Err(NO_CONSUMER.to_string()));
        assert!(o[1].line().contains("set kafka.verdict.baseline"), "{}", o[1].line());
        assert!(o[2].line().contains("not measured: no schedule was kept: set target.rate"), "{}", o[2].line());
        let mut no_audit = run();
        no_audit["producer"].as_object_mut().unwrap().remove("audit");
        let o = evaluate(&parse("audit.missing=0").unwrap(), &no_audit);
        assert_eq!((o[0].passed, o[0].value.clone()), (false, Err(NO_AUDIT.to_string())));
        assert_eq!(o[0].to_json()["value"], Value::Null);
    }

    #[test]
    fn bad_criteria_are_refused_with_the_valid_names() {
        let e = parse("p99<50ms; p98<3ms").err().unwrap();
        assert_eq!(e.code, "CONFIG_ERROR");
        assert!(e.message.contains("unknown metric 'p98' (did you mean p99?)"), "{}", e.message);
        assert!(e.message.contains("records.per.sec") && e.message.contains("audit.duplicates"), "{}", e.message);
        for (spec, says) in [
            ("p99 50ms", "no comparison"),
            ("p99<fast", "not a number"),
            ("p99<1%", "takes a time"),
            ("lag=calm", "not one of stable, growing"),
            ("lag<stable", "compare it with = or !="),
        ] {
            let e = parse(spec).err().unwrap();
            assert!(e.message.contains(says), "{spec}: {}", e.message);
        }
        assert!(parse(" ; \n").unwrap().is_empty());
    }
}
