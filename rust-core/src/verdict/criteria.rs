//! `kafka.verdict`: pass/fail criteria over the run's figures, for `jmeter -n` in CI.
//!
//! A verdict is a list of criteria separated by `;` (or new lines), each `metric OP threshold`, e.g.
//! `error.rate<0.1%; p99<50ms; records.per.sec>=40000; audit.missing=0; audit.duplicates=0; lag=stable`.
//! Criteria are evaluated over a [`serde_json::Value`] holding the run's summaries by section (see
//! [`crate::verdict::judgement`]): `producer`, `consumer`, `lag`, `generator`, `baseline`. Reading the figures by JSON path
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
    /// Where the figure is read from in the run's sections.
    source: Source,
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

fn consumer(run: &Value) -> Result<&Value, String> {
    let c = section(run, "consumer", NO_CONSUMER)?;
    if number(c, &["samples"], NO_CONSUMER)? == 0.0 {
        return Err(NO_CONSUMER.into());
    }
    Ok(c)
}

fn lag(run: &Value) -> Result<&Value, String> {
    let l = section(run, "lag", NO_LAG)?;
    if number(l, &["readings"], NO_LAG)? == 0.0 {
        return Err("the lag sampler never read the group's lag (see its failed samples)".into());
    }
    Ok(l)
}

/// A send->ack latency quantile of the producer, in ms; unmeasured when nothing was acknowledged.
fn latency(run: &Value, key: &str) -> Result<f64, String> {
    let p = producer(run)?;
    if number(p, &["acked"], NO_PRODUCER)? == 0.0 {
        return Err("no message was acknowledged: there is no latency to judge".into());
    }
    Ok(number(p, &["latency_us", key], "no latency in the producer's summary")? / 1000.0)
}

fn audit(run: &Value, key: &str) -> Result<f64, String> {
    let a = section(producer(run)?, "audit", NO_AUDIT)?;
    if let Some(e) = a.get("error").and_then(Value::as_str) {
        return Err(format!("the audit failed: {e}"));
    }
    if a.get("complete").and_then(Value::as_bool) == Some(false) {
        return Err("the audit did not reach the end of the topic (raise audit.timeout.ms)".into());
    }
    number(a, &[key], NO_AUDIT)
}

fn regression(run: &Value, key: Option<&str>) -> Result<f64, String> {
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
    Ok(worse.into_iter().fold(f64::MIN, f64::max))
}

/// A section of the run's summaries that metrics read figures from.
#[derive(Clone, Copy)]
enum Section {
    Producer,
    Consumer,
    Lag,
    Generator,
}

impl Section {
    /// The section, or why it holds nothing to judge.
    fn of(self, run: &Value) -> Result<&Value, String> {
        match self {
            Section::Producer => producer(run),
            Section::Consumer => consumer(run),
            Section::Lag => lag(run),
            Section::Generator => section(run, "generator", NO_GENERATOR),
        }
    }

    /// Why a figure of the section is missing.
    fn missing(self) -> &'static str {
        match self {
            Section::Producer => NO_PRODUCER,
            Section::Consumer => NO_CONSUMER,
            Section::Lag => NO_LAG,
            Section::Generator => NO_GENERATOR,
        }
    }
}

/// Where a metric's figure comes from; that also decides its kind (a latency is read in ms, a share in percent).
#[derive(Clone, Copy)]
enum Source {
    /// The count or rate at this path of a section.
    Figure(Section, &'static [&'static str]),
    /// The percentage at this path of a section.
    Percent(Section, &'static [&'static str]),
    /// 100 × the first figure of a section / the second (a failure rate).
    Share(Section, &'static str, &'static str),
    /// A send->ack latency quantile of the producer (`latency_us`), in ms.
    Latency(&'static str),
    /// A quantile of how late the producer's samples started (`schedule_delay_us`), in ms.
    ScheduleDelay(&'static str),
    /// A produce->consume latency quantile of the consumer (`e2e_latency_us`), in ms.
    E2e(&'static str),
    /// A count of the producer's audit.
    Audit(&'static str),
    /// `growing` if any lag reading found the lag growing, else `stable`.
    LagState,
    /// The worst change vs the baseline in percent, of one figure or of all (None).
    Regression(Option<&'static str>),
}

impl Source {
    /// What the figure read is.
    const fn kind(self) -> Kind {
        match self {
            Source::Figure(..) | Source::Audit(_) => Kind::Number,
            Source::Percent(..) | Source::Share(..) | Source::Regression(_) => Kind::Percent,
            Source::Latency(_) | Source::ScheduleDelay(_) | Source::E2e(_) => Kind::Millis,
            Source::LagState => Kind::State(&["stable", "growing"]),
        }
    }

    /// The values the figure can take: a share or a load is 0 to 100 %, a regression any change, the rest 0 or more.
    fn range(self) -> (f64, f64) {
        match self {
            Source::Percent(..) | Source::Share(..) => (0.0, 100.0),
            Source::Regression(_) => (f64::NEG_INFINITY, f64::INFINITY),
            _ => (0.0, f64::INFINITY),
        }
    }

    /// Reads the figure from the run's sections, or says why it was not measured.
    fn read(self, run: &Value) -> Result<Measured, String> {
        let x = match self {
            Source::Figure(s, path) | Source::Percent(s, path) => number(s.of(run)?, path, s.missing())?,
            Source::Share(s, part, whole) => {
                let v = s.of(run)?;
                100.0 * number(v, &[part], s.missing())? / number(v, &[whole], s.missing())?
            }
            Source::Latency(key) => latency(run, key)?,
            Source::ScheduleDelay(key) => {
                let missing = "no schedule was kept: set target.rate on the producer";
                number(producer(run)?, &["schedule_delay_us", key], missing)? / 1000.0
            }
            Source::E2e(key) => {
                let missing = "no consumed record carried a send time (kn.sent.us header or Kafka timestamp)";
                number(consumer(run)?, &["e2e_latency_us", key], missing)? / 1000.0
            }
            Source::Audit(key) => audit(run, key)?,
            Source::LagState => {
                let growing = number(lag(run)?, &["growing_readings"], NO_LAG)? > 0.0;
                return Ok(Measured::Word(if growing { "growing" } else { "stable" }.into()));
            }
            Source::Regression(key) => regression(run, key)?,
        };
        Ok(Measured::Number(x))
    }
}

/// A table row: the metric's kind is its source's.
const fn metric(name: &'static str, source: Source, about: &'static str) -> Metric {
    Metric { name, kind: source.kind(), about, source }
}

// The table reads as a table: sections and sources by their short names.
use Section::{Consumer, Generator, Lag, Producer};
use Source::{Audit, E2e, Figure, LagState, Latency, Percent, Regression, ScheduleDelay, Share};

/// Every metric a verdict may name, in the order they are listed.
pub static METRICS: &[Metric] = &[
    metric("error.rate", Share(Producer, "failed", "sent"), "failed messages / sent messages of the producer"),
    metric(
        "records.per.sec",
        Figure(Producer, &["records_per_sec"]),
        "acknowledged records per second (first send to last ack)",
    ),
    metric("mb.per.sec", Figure(Producer, &["mb_per_sec"]), "acknowledged MiB per second"),
    metric("acked", Figure(Producer, &["acked"]), "acknowledged messages"),
    metric("failed", Figure(Producer, &["failed"]), "failed messages"),
    metric("retries", Figure(Producer, &["retries"]), "retries librdkafka made"),
    metric(
        "acked.after.timeout",
        Figure(Producer, &["acked_after_timeout"]),
        "messages acknowledged after their sample had ended (timed out or stopped)",
    ),
    metric("mean", Latency("mean"), "mean send->ack latency"),
    metric("p50", Latency("p50"), "median send->ack latency"),
    metric("p95", Latency("p95"), "95th percentile send->ack latency"),
    metric("p99", Latency("p99"), "99th percentile send->ack latency"),
    metric("p999", Latency("p999"), "99.9th percentile send->ack latency"),
    metric("max", Latency("max"), "highest send->ack latency"),
    metric(
        "schedule.delay.p99",
        ScheduleDelay("p99"),
        "99th percentile of how late samples started (needs target.rate)",
    ),
    metric("audit.missing", Audit("missing"), "acknowledged messages the audit did not find"),
    metric("audit.duplicates", Audit("duplicates"), "messages the audit found more than once"),
    metric("audit.unexpected", Audit("unexpected"), "messages in the topic not from this run"),
    metric("audit.unacked", Audit("found_unacked"), "messages written although reported failed"),
    metric("lag", LagState, "growing if any lag sample found the lag growing (LAG_GROWING), else stable"),
    metric("lag.max", Figure(Lag, &["max"]), "highest total lag read (records)"),
    metric("consumer.records", Figure(Consumer, &["records"]), "records consumed"),
    metric(
        "consumer.records.per.sec",
        Figure(Consumer, &["perf", "nMsg.sec"]),
        "records consumed per second (nMsg.sec)",
    ),
    metric(
        "consumer.error.rate",
        Share(Consumer, "failed_samples", "samples"),
        "failed consumer samples / consumer samples",
    ),
    metric(
        "consumer.check.failures",
        Figure(Consumer, &["check_failures"]),
        "records that failed the consumer's content or sequence check",
    ),
    metric(
        "consumer.unread",
        Figure(Consumer, &["unread_records"]),
        "records left unread at the end: end offset - read offset, over the partitions the consumers held",
    ),
    metric("e2e.p50", E2e("p50"), "median produce->consume latency"),
    metric("e2e.p99", E2e("p99"), "99th percentile produce->consume latency"),
    metric("e2e.max", E2e("max"), "highest produce->consume latency"),
    metric(
        "generator.cpu",
        Percent(Generator, &["process_cpu_pct", "mean"]),
        "mean CPU of the JMeter process (engine included), % of all cores",
    ),
    metric(
        "machine.cpu",
        Percent(Generator, &["machine_cpu_pct", "mean"]),
        "mean CPU of the whole machine, % of all cores",
    ),
    metric("generator.gc", Percent(Generator, &["gc", "pause_pct"]), "JVM time in GC pauses, % of the test's duration"),
    metric(
        "regression",
        Regression(None),
        "worst change vs the baseline among throughput, p50, p99 (positive = worse)",
    ),
    metric(
        "regression.throughput",
        Regression(Some("throughput")),
        "throughput drop vs the baseline (positive = slower)",
    ),
    metric("regression.p50", Regression(Some("p50")), "p50 rise vs the baseline (positive = slower)"),
    metric("regression.p99", Regression(Some("p99")), "p99 rise vs the baseline (positive = slower)"),
];

/// A comparison of a criterion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `=`
    Eq,
    /// `!=`
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
    /// Whether the criterion held.
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

    /// The criterion's outcome in the summary JSON and the JUnit report.
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

/// Parses a `kafka.verdict` value; an empty one has no criteria (no verdict asked for), one made only of
/// separators (`;;;`) is refused: a gate without a criterion would pass every run.
pub fn parse(spec: &str) -> Result<Vec<Criterion>, EngineError> {
    let criteria: Vec<Criterion> = spec
        .split([';', '\n'])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(parse_criterion)
        .collect::<Result<_, _>>()?;
    if criteria.is_empty() && !spec.trim().is_empty() {
        return Err(EngineError::config(format!(
            "kafka.verdict: '{}' holds no criterion, and a verdict without one would pass every run: write at least \
             one, e.g. error.rate<0.1%; p99<50ms (or leave kafka.verdict empty for no verdict)",
            spec.trim()
        )));
    }
    Ok(criteria)
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
    if let Measured::Number(t) = threshold {
        judges_something(metric, op, t).map_err(&bad)?;
    }
    Ok(Criterion { text: text.to_string(), metric, op, threshold })
}

/// Refuses a threshold that decides the criterion before anything is measured: outside the values the figure can
/// take (`error.rate<-1%`, `generator.cpu>101%`), or at the edge of them so that it can never pass (`p99<0`) or can
/// never fail (`error.rate<=100%`, `failed>=0`).
fn judges_something(metric: &Metric, op: Op, t: f64) -> Result<(), String> {
    let (lo, hi) = metric.source.range();
    let u = unit(metric.kind);
    let span = if hi.is_finite() { format!("{lo} to {hi}{u}") } else { format!("{lo}{u} or more") };
    if t < lo || t > hi {
        return Err(format!(
            "{} is never {t}{u} (it is {span}): the criterion is decided before the test runs",
            metric.name
        ));
    }
    let never = match op {
        Op::Lt => t == lo,
        Op::Gt => t == hi,
        _ => false,
    };
    let always = match op {
        Op::Le => t == hi,
        Op::Ge => t == lo,
        _ => false,
    };
    if never || always {
        let result = if never { "never pass" } else { "pass whatever is measured" };
        return Err(format!("{} is {span}: {} {}{t}{u} would {result}", metric.name, metric.name, op.symbol()));
    }
    Ok(())
}

fn parse_threshold(kind: Kind, text: &str) -> Result<Measured, String> {
    // Finite after scaling too: 1e308s is infinite in milliseconds.
    let number = |t: &str, example: &str, scale: f64| {
        t.trim()
            .parse::<f64>()
            .ok()
            .map(|x| x * scale)
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("'{text}' is not a finite number ({example})"))
    };
    match kind {
        Kind::Percent => Ok(Measured::Number(number(text.strip_suffix('%').unwrap_or(text), "e.g. 0.1%", 1.0)?)),
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
            Ok(Measured::Number(number(digits, "e.g. 50ms, 2s or 800us", scale)?))
        }
        Kind::Number => Ok(Measured::Number(number(text, "a plain number, e.g. 40000", 1.0)?)),
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
            let value = c.metric.source.read(run);
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
            ("p99<fast", "not a finite number"),
            ("p99<1e308s", "not a finite number"),
            ("p99<NaN", "not a finite number"),
            ("error.rate<-1%", "error.rate is never -1 % (it is 0 to 100 %)"),
            ("generator.cpu>=101%", "is never 101 %"),
            ("p99<0", "p99 <0 ms would never pass"),
            ("error.rate<=100%", "would pass whatever is measured"),
            ("failed>=0", "would pass whatever is measured"),
            ("p99<1%", "takes a time"),
            ("lag=calm", "not one of stable, growing"),
            ("lag<stable", "compare it with = or !="),
        ] {
            let e = parse(spec).err().unwrap();
            assert!(e.message.contains(says), "{spec}: {}", e.message);
        }
        assert!(parse("").unwrap().is_empty() && parse("  ").unwrap().is_empty());
        for spec in [";;;", " ; \n"] {
            let e = parse(spec).err().unwrap();
            assert!(e.message.contains("holds no criterion"), "{spec}: {}", e.message);
        }
        assert!(parse("regression<-5%").is_ok(), "a regression may be asked to be an improvement");
    }
}
