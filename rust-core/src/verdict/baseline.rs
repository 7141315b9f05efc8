//! This run against a stored one: throughput, p50 and p99 changes in %, for `kafka.verdict.baseline` and
//! `scripts/compare A.json B.json` (one implementation, so the table and the verdict agree).
//!
//! Works on summary JSON files as written by the engine: a producer summary (`records_per_sec`, `latency_us`)
//! or a consumer summary (`perf.nMsg.sec`, `e2e_latency_us`).

use serde_json::{json, Value};

/// One compared figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// `throughput`, `p50` or `p99`.
    pub name: &'static str,
    /// `records/s` or `ms`.
    pub unit: &'static str,
    /// The baseline's figure.
    pub before: f64,
    /// This run's figure.
    pub after: f64,
    /// after vs before, in % (positive = higher).
    pub change_pct: f64,
    /// The change in the bad direction, in % (positive = worse: less throughput, more latency).
    pub worse_pct: f64,
}

/// What a summary file holds, and how to read its three figures.
struct Figures {
    kind: &'static str,
    throughput: Option<f64>,
    p50_ms: Option<f64>,
    p99_ms: Option<f64>,
}

fn figures(summary: &Value) -> Option<Figures> {
    let ms = |v: &Value| v.as_f64().map(|us| us / 1000.0);
    if let Some(rps) = summary.get("records_per_sec").and_then(Value::as_f64) {
        let lat = &summary["latency_us"];
        return Some(Figures {
            kind: "producer",
            throughput: Some(rps),
            p50_ms: ms(&lat["p50"]),
            p99_ms: ms(&lat["p99"]),
        });
    }
    let rps = summary.get("perf").and_then(|p| p.get("nMsg.sec")).and_then(Value::as_f64)?;
    let lat = &summary["e2e_latency_us"];
    Some(Figures { kind: "consumer", throughput: Some(rps), p50_ms: ms(&lat["p50"]), p99_ms: ms(&lat["p99"]) })
}

/// Compares `after` with `before`; an error says why the two cannot be compared.
pub fn compare(before: &Value, after: &Value) -> Result<Vec<Row>, String> {
    let not_summary =
        |which: &str| format!("the {which} is not a kafka-native summary (no records_per_sec or perf.nMsg.sec)");
    let b = figures(before).ok_or_else(|| not_summary("baseline"))?;
    let a = figures(after).ok_or_else(|| not_summary("current run"))?;
    if a.kind != b.kind {
        return Err(format!("the baseline is a {} summary, this run's is a {} summary", b.kind, a.kind));
    }
    let mut rows = Vec::new();
    for (name, unit, higher_is_better, x, y) in [
        ("throughput", "records/s", true, b.throughput, a.throughput),
        ("p50", "ms", false, b.p50_ms, a.p50_ms),
        ("p99", "ms", false, b.p99_ms, a.p99_ms),
    ] {
        let (Some(before), Some(after)) = (x, y) else { continue };
        if before <= 0.0 {
            continue; // no base to take a percentage of
        }
        let change_pct = 100.0 * (after - before) / before;
        let worse_pct = if higher_is_better { -change_pct } else { change_pct };
        rows.push(Row { name, unit, before, after, change_pct, worse_pct });
    }
    Ok(rows)
}

/// Whether `before` (the baseline, read from `path`) is a run of the same test as `after`, by the summaries' `test`
/// blocks (plan, samplers and their main settings, topic): an error when it is another test or this very run, a
/// warning when the baseline carries no `test` block (written before summaries had one) and is compared as is.
pub fn same_test(path: &str, before: &Value, after: &Value) -> Result<Option<String>, String> {
    let run_id = |v: &Value| v.get("run_id").and_then(Value::as_str).map(str::to_string);
    if let (Some(b), Some(a)) = (run_id(before), run_id(after)) {
        if a == b {
            return Err(format!(
                "the baseline '{path}' is this run's own summary (run {a}): a run compared with itself always passes; \
                 compare with the previous run's summary, kept under another name"
            ));
        }
    }
    let test = |v: &Value| v.get("test").filter(|t| !t.is_null()).cloned();
    let (Some(b), Some(a)) = (test(before), test(after)) else {
        return Ok(Some(format!(
            "the baseline '{path}' or this run carries no identity of its test (plan, samplers, settings; a summary \
             written before summaries had one): compared as is, make sure both are runs of the same test"
        )));
    };
    let mut diffs = Vec::new();
    differences("", &b, &a, &mut diffs);
    if diffs.is_empty() {
        return Ok(None);
    }
    let shown = diffs.iter().take(4).cloned().collect::<Vec<_>>().join("; ");
    let more = if diffs.len() > 4 { format!(" and {} more", diffs.len() - 4) } else { String::new() };
    Err(format!(
        "the baseline '{path}' is a run of another test ({shown}{more}; baseline vs this run): its figures say \
         nothing about this one. Compare runs of the same plan and settings"
    ))
}

/// `path: before vs after` for every leaf where two `test` blocks differ.
fn differences(at: &str, before: &Value, after: &Value, out: &mut Vec<String>) {
    let join = |k: &str| if at.is_empty() { k.to_string() } else { format!("{at}.{k}") };
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            let keys: std::collections::BTreeSet<&String> = b.keys().chain(a.keys()).collect();
            for k in keys {
                differences(&join(k), b.get(k).unwrap_or(&Value::Null), a.get(k).unwrap_or(&Value::Null), out);
            }
        }
        _ if before != after => {
            let show = |v: &Value| if v.is_null() { "(none)".to_string() } else { v.to_string() };
            out.push(format!("{at}: {} vs {}", show(before), show(after)));
        }
        _ => {}
    }
}

/// The comparison as the summary's `verdict.baseline` block.
pub fn to_json(path: &str, rows: &Result<Vec<Row>, String>) -> Value {
    match rows {
        Ok(rows) => json!({
            "file": path,
            "rows": rows.iter().map(|r| json!({
                "name": r.name, "unit": r.unit, "before": r.before, "after": r.after,
                "change_pct": r.change_pct, "worse_pct": r.worse_pct,
            })).collect::<Vec<_>>(),
        }),
        Err(e) => json!({ "file": path, "error": e }),
    }
}

/// Reads a summary file for comparison.
pub fn read(path: &str) -> Result<Value, String> {
    let limit = crate::files::Limit::fixed(crate::files::MAX_DOCUMENT);
    let text = crate::files::read_text(path, "kafka.verdict.baseline", limit)?;
    serde_json::from_str(&text).map_err(|e| format!("the baseline '{path}' is not JSON: {e}"))
}

/// The table `scripts/compare` prints.
pub fn table(before_name: &str, after_name: &str, rows: &[Row]) -> String {
    let mut out = format!("{:<12} {:>14} {:>14} {:>9}  {}\n", "figure", before_name, after_name, "change", "");
    for r in rows {
        let label = format!("{} {}", r.name, r.unit);
        let direction = if r.worse_pct > 0.0 {
            "worse"
        } else if r.worse_pct < 0.0 {
            "better"
        } else {
            "same"
        };
        out += &format!("{label:<12} {:>14.2} {:>14.2} {:>+8.1}%  {direction}\n", r.before, r.after, r.change_pct);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn producer(rps: f64, p50: u64, p99: u64) -> Value {
        json!({ "records_per_sec": rps, "latency_us": { "p50": p50, "p99": p99 } })
    }

    #[test]
    fn changes_are_signed_and_worse_is_positive() {
        let rows = compare(&producer(50000.0, 1000, 4000), &producer(40000.0, 1100, 3000)).unwrap();
        let worse: Vec<(&str, i64)> = rows.iter().map(|r| (r.name, r.worse_pct.round() as i64)).collect();
        assert_eq!(worse, [("throughput", 20), ("p50", 10), ("p99", -25)]);
        assert_eq!(rows[0].change_pct.round(), -20.0);
        let t = table("A", "B", &rows);
        assert!(t.contains("throughput records/s       50000.00       40000.00    -20.0%  worse"), "{t}");
        assert!(t.contains("p99 ms"), "{t}");
    }

    #[test]
    fn a_baseline_of_another_test_or_of_this_run_is_refused() {
        let with = |run: &str, topic: &str| {
            let mut v = producer(1.0, 1, 1);
            v["run_id"] = json!(run);
            v["test"] = json!({ "plan": "p.jmx", "samplers": { "producer 'P'": { "topic": topic, "acks": "1" } } });
            v
        };
        assert_eq!(same_test("b.json", &with("a", "t"), &with("b", "t")), Ok(None));
        let e = same_test("b.json", &with("a", "t"), &with("a", "t")).unwrap_err();
        assert!(e.contains("is this run's own summary (run a)"), "{e}");
        let e = same_test("b.json", &with("a", "old"), &with("b", "new")).unwrap_err();
        assert!(e.contains(r#"samplers.producer 'P'.topic: "old" vs "new""#), "{e}");
        let legacy = producer(1.0, 1, 1);
        let note = same_test("b.json", &legacy, &with("b", "t")).unwrap().unwrap();
        assert!(note.contains("carries no identity of its test"), "{note}");
    }

    #[test]
    fn consumer_summaries_compare_and_kinds_must_match() {
        let c = json!({ "perf": { "nMsg.sec": 1000.0 }, "e2e_latency_us": { "p50": 2000, "p99": null } });
        let rows = compare(&c, &c).unwrap();
        assert_eq!(rows.iter().map(|r| r.name).collect::<Vec<_>>(), ["throughput", "p50"]);
        assert!(compare(&c, &producer(1.0, 1, 1)).unwrap_err().contains("consumer summary, this run's is a producer"));
        assert!(compare(&json!({}), &c).unwrap_err().contains("baseline is not a kafka-native summary"));
    }
}
