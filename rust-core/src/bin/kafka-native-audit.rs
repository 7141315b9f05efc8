//! `scripts/audit`: the delivery audit on demand, for a run id printed by a test (summary JSON `run_id`).
//!
//! Reads the topic from `--since` (epoch ms) to its end and counts the run's messages: found once,
//! duplicates, gaps in each producer's sequence (missing), and messages not from this run.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use kafka_native::audit::{self, AuditTarget};
use kafka_native::client::settings::parse_property_list;

const USAGE: &str = "usage: scripts/audit --topic TOPIC --run-id ID [--bootstrap HOST:PORT] [--since EPOCH_MS] \
[--timeout-ms MS] [--property k=v]...
  --topic       the topic the test wrote to
  --run-id      the run id from the test's summary (kafka-native-summary.json: run_id) or its audit log line
  --bootstrap   brokers (default 127.0.0.1:9092)
  --since       read messages written at or after this time, epoch milliseconds (default: the whole topic)
  --timeout-ms  give up reading after this long (default 60000)
  --property    connection property for secured clusters, e.g. security.protocol=SASL_SSL (repeatable)
Exit code: 0 when nothing is missing or duplicated, 1 otherwise, 2 on bad usage or errors.";

struct Args {
    topic: String,
    run_id: String,
    client: BTreeMap<String, String>,
    since: u64,
    timeout: Duration,
}

fn parse_args() -> Result<Args, String> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_env();
    let (mut topic, mut run_id, mut since, mut timeout_ms) = (None, None, 0u64, 60_000u64);
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
                since = parser.value().map_err(|e| e.to_string())?.parse().map_err(|e| format!("--since: {e}"))?
            }
            Long("timeout-ms") => {
                timeout_ms =
                    parser.value().map_err(|e| e.to_string())?.parse().map_err(|e| format!("--timeout-ms: {e}"))?
            }
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
        run_id: run_id.ok_or("--run-id is required")?,
        client,
        since,
        timeout: Duration::from_millis(timeout_ms),
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("scripts/audit: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let target = AuditTarget::new(&args.client, &args.topic, args.timeout);
    match audit::read_back(&target, &args.run_id, args.since, None) {
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
