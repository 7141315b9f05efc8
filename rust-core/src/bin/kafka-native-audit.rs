//! `scripts/audit`: the delivery audit on demand, for a run id printed by a test (summary JSON `run_id`).
//!
//! Reads the topic from `--since` (epoch ms) to its end and counts the run's messages: found once,
//! duplicates, and messages not from this run. With `--summary` (the test's summary JSON, which records what the
//! broker acknowledged) it counts acknowledged messages that are absent as missing; without it, only gaps in
//! each producer's sequence can be seen, and a gap may be a failed sample: they are reported as gaps, not missing.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use kafka_native::audit::{self, AuditTarget, SeqSet};
use kafka_native::client::settings::parse_property_list;
use kafka_native::files;

const USAGE: &str = "usage: scripts/audit --topic TOPIC (--run-id ID | --summary FILE) [--bootstrap HOST:PORT] \
[--since EPOCH_MS] [--timeout-ms MS] [--transactional] [--property k=v]...
  --topic       the topic the test wrote to
  --run-id      the run id from the test's summary (kafka-native-summary.json: run_id) or its audit log line
  --summary     the test's summary JSON (kafka.summary.file): run id, start and the acknowledged messages, so that
                missing counts only acknowledged messages that are absent (failed samples are not missing)
  --bootstrap   brokers (default 127.0.0.1:9092)
  --since       read messages written at or after this time, epoch milliseconds (default: the whole topic)
  --timeout-ms  give up reading after this long (default 60000)
  --transactional
                the run wrote with transactions (implied by a --summary that has transactions): read the topic a
                second time with read_uncommitted and count the run's records of aborted transactions
  --property    connection property for secured clusters, e.g. security.protocol=SASL_SSL (repeatable)
Exit code: 0 when nothing is missing or duplicated, 1 otherwise, 2 on bad usage or errors.";

struct Args {
    topic: String,
    run_id: String,
    acked: Option<BTreeMap<String, SeqSet>>,
    transactional: bool,
    client: BTreeMap<String, String>,
    since: u64,
    timeout: Duration,
}

fn parse_args() -> Result<Args, String> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_env();
    let (mut topic, mut run_id, mut since, mut timeout_ms) = (None, None, None, 60_000u64);
    let (mut acked, mut transactional) = (None, false);
    let mut client = BTreeMap::from([("bootstrap.servers".to_string(), "127.0.0.1:9092".to_string())]);
    let text = |v: std::ffi::OsString| v.into_string().map_err(|_| "arguments must be UTF-8".to_string());
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("topic") => topic = Some(text(parser.value().map_err(|e| e.to_string())?)?),
            Long("run-id") => run_id = Some(text(parser.value().map_err(|e| e.to_string())?)?),
            Long("bootstrap") => {
                client.insert("bootstrap.servers".into(), text(parser.value().map_err(|e| e.to_string())?)?);
            }
            Long("since") => {
                since = Some(parser.value().map_err(|e| e.to_string())?.parse().map_err(|e| format!("--since: {e}"))?)
            }
            Long("summary") => {
                let path = text(parser.value().map_err(|e| e.to_string())?)?;
                let (id, start, seqs, with_transactions) = read_summary(&path)?;
                run_id = run_id.or(Some(id));
                transactional |= with_transactions;
                // The same second of slack as the test's own audit.
                since = since.or(Some(start.saturating_sub(1000)));
                acked = Some(seqs);
            }
            Long("timeout-ms") => {
                timeout_ms =
                    parser.value().map_err(|e| e.to_string())?.parse().map_err(|e| format!("--timeout-ms: {e}"))?
            }
            Long("transactional") => transactional = true,
            Long("property") => {
                let item = text(parser.value().map_err(|e| e.to_string())?)?;
                client.extend(parse_property_list(&item, "--property").map_err(|e| e.message)?);
            }
            Short('h') | Long("help") => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unexpected argument {}", other.unexpected())),
        }
    }
    Ok(Args {
        topic: topic.ok_or("--topic is required")?,
        run_id: run_id.ok_or("--run-id or --summary is required")?,
        acked,
        transactional,
        client,
        since: since.unwrap_or(0),
        timeout: Duration::from_millis(timeout_ms),
    })
}

/// (run id, run start in epoch ms, acknowledged sequence numbers by producer, whether it wrote with transactions)
/// from a test's summary JSON.
fn read_summary(path: &str) -> Result<(String, u64, BTreeMap<String, SeqSet>, bool), String> {
    let text = files::read_text(path, "--summary", files::Limit::fixed(files::MAX_DOCUMENT))?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("--summary: '{path}': {e}"))?;
    let run_id = json["run_id"].as_str().ok_or(format!("--summary: '{path}' has no run_id"))?.to_string();
    let acked = json["audit_acked"]
        .as_object()
        .ok_or(format!("--summary: '{path}' has no audit_acked: was the test run with audit=true?"))?;
    let mut seqs = BTreeMap::new();
    for (pid, ranges) in acked {
        let ranges: Vec<[u64; 2]> =
            serde_json::from_value(ranges.clone()).map_err(|e| format!("--summary: audit_acked.{pid}: {e}"))?;
        seqs.insert(pid.clone(), SeqSet::from_ranges(&ranges));
    }
    Ok((run_id, json["run_start_ms"].as_u64().unwrap_or(0), seqs, json["transactions"].is_object()))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("scripts/audit: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut target = AuditTarget::new(&args.client, &args.topic, args.timeout);
    target.transactional = args.transactional;
    match audit::read_back(&target, &args.run_id, args.since, args.acked.as_ref()) {
        Ok(report) => {
            println!("{}", report.line());
            println!("{}", serde_json::to_value(&report).expect("an audit report serializes"));
            if report.missing == 0 && report.duplicates == 0 && report.complete {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("scripts/audit: {e}");
            ExitCode::from(2)
        }
    }
}
