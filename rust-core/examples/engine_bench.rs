//! "Our engine alone": the producer engine driven exactly as the JMeter sampler drives it, without JMeter.
//!
//! Each thread opens a [`ProducerHandle`] from the same configuration keys the sampler passes (parsed by
//! [`config::parse`]), calls `send` in a loop (one sample = `messages.per.sample` messages, waiting for every ack),
//! and closes it; at the end the engine prints its kafka-producer-perf-test style line and writes the JSON
//! summary, as the sampler does at test end. This is the ceiling for JMeter + our sampler (scripts/bench, issue 6).
//!
//!     cargo run --release --example engine_bench -- --topic T --threads 10 --records 100000 \
//!         --record-size 200 --messages-per-sample 1 --summary target/bench/x.json [--set key=value ...]

use std::process::ExitCode;
use std::time::Duration;

use kafka_native::producer::settings as config;
use kafka_native::producer::{ProducerHandle, SampleInput};
use kafka_native::run::report::Run;

const USAGE: &str = "\
Usage: engine_bench --topic TOPIC [options]

Options (defaults in brackets):
  --bootstrap HOST:PORT        bootstrap.servers [127.0.0.1:9092]
  --topic NAME                 topic to send to (must exist) [required]
  --threads N                  sending threads, one producer each (producer.scope=thread) [1]
  --records N                  messages in total, split evenly over threads and samples [100000]
  --messages-per-sample N      messages per send call, as the sampler's messages.per.sample [1]
  --record-size BYTES          value size (value.mode=fixed) [200]
  --acks A                     [1]
  --linger-ms MS               [0]
  --batch-size BYTES           [engine default]
  --compression TYPE           compression.type [none]
  --timeout-ms MS              the sampler's timeout.ms [30000]
  --set KEY=VALUE              any other sampler/engine parameter (repeatable)
  --summary FILE               write the engine's JSON summary there (as kafka.summary.file)
  -h, --help                   this text
";

struct Args {
    threads: u32,
    records: u64,
    mps: u32,
    summary: Option<String>,
    pairs: Vec<(String, String)>,
}

fn parse_args() -> Result<Option<Args>, String> {
    let mut threads = 1u32;
    let mut records = 100_000u64;
    let mut mps = 1u32;
    let mut summary = None;
    let mut topic = None;
    let mut opts: Vec<(String, String)> = vec![
        ("bootstrap.servers".into(), "127.0.0.1:9092".into()),
        ("policy".into(), "capacity".into()),
        ("acks".into(), "1".into()),
        ("linger.ms".into(), "0".into()),
        ("compression.type".into(), "none".into()),
        ("timeout.ms".into(), "30000".into()),
        ("value.mode".into(), "fixed".into()),
        ("record.size".into(), "200".into()),
        ("key.mode".into(), "none".into()),
        ("producer.scope".into(), "thread".into()),
        ("preflight".into(), "warn".into()),
    ];
    let set = |opts: &mut Vec<(String, String)>, k: &str, v: String| {
        opts.retain(|(key, _)| key != k);
        opts.push((k.to_string(), v));
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        if arg == "-h" || arg == "--help" {
            return Ok(None);
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = || -> Result<String, String> {
            inline.clone().or_else(|| it.next()).ok_or_else(|| format!("{name} needs a value"))
        };
        let num = |v: String, name: &str| -> Result<u64, String> {
            v.parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{name}: '{v}' is not a positive whole number"))
        };
        match name.as_str() {
            "--bootstrap" => set(&mut opts, "bootstrap.servers", value()?),
            "--topic" => topic = Some(value()?),
            "--threads" => threads = num(value()?, &name)? as u32,
            "--records" => records = num(value()?, &name)?,
            "--messages-per-sample" => mps = num(value()?, &name)? as u32,
            "--record-size" => set(&mut opts, "record.size", value()?),
            "--acks" => set(&mut opts, "acks", value()?),
            "--linger-ms" => set(&mut opts, "linger.ms", value()?),
            "--batch-size" => set(&mut opts, "batch.size", value()?),
            "--compression" => set(&mut opts, "compression.type", value()?),
            "--timeout-ms" => set(&mut opts, "timeout.ms", value()?),
            "--summary" => summary = Some(value()?),
            "--set" => {
                let kv = value()?;
                let (k, v) = kv.split_once('=').ok_or_else(|| format!("--set: '{kv}' is not KEY=VALUE"))?;
                set(&mut opts, k.trim(), v.trim().to_string());
            }
            other => return Err(format!("unknown option '{other}' (see --help)")),
        }
    }
    let topic = topic.ok_or("--topic is required")?;
    opts.push(("topic".into(), topic));
    opts.push(("messages.per.sample".into(), mps.to_string()));
    opts.push(("thread.count".into(), threads.to_string()));
    Ok(Some(Args { threads, records, mps, summary, pairs: opts }))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("engine_bench: {e}");
            return ExitCode::from(2);
        }
    };
    // Same split as the JMeter plans: every thread runs `loops` samples of `mps` messages.
    let per_sample_total = u64::from(args.threads) * u64::from(args.mps);
    let loops = (args.records / per_sample_total).max(1);

    // Parse once per thread, as each sampler instance does in setupTest (thread.number differs).
    let mut settings = Vec::new();
    for n in 1..=args.threads {
        let mut pairs = args.pairs.clone();
        pairs.push(("thread.number".into(), n.to_string()));
        match config::parse(&pairs) {
            Ok(s) => settings.push(s),
            Err(e) => {
                eprintln!("engine_bench: {e}");
                return ExitCode::from(2);
            }
        }
    }
    // Open every handle before the load starts, as JMeter's threads do in setupTest (ramp-up aside).
    let run = Run::new();
    let mut handles = Vec::new();
    for s in settings {
        match ProducerHandle::open(s, &run) {
            Ok(h) => handles.push(h),
            Err(e) => {
                eprintln!("engine_bench: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let close_timeout = Duration::from_secs(35);
    let workers: Vec<_> = handles
        .into_iter()
        .map(|mut h| {
            std::thread::spawn(move || {
                let mut failed = 0u64;
                for _ in 0..loops {
                    failed += u64::from(h.send(SampleInput::default()).failed);
                }
                h.close(close_timeout);
                failed
            })
        })
        .collect();
    let mut failed = 0u64;
    for w in workers {
        failed += w.join().unwrap_or(u64::MAX / 2);
    }
    match run.producer_report(args.summary.as_deref()) {
        Ok(Some(line)) => println!("{line}"),
        Ok(None) => {
            eprintln!("engine_bench: nothing was sent");
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!("engine_bench: {e}");
            return ExitCode::from(1);
        }
    }
    if failed > 0 {
        eprintln!("engine_bench: {failed} message(s) failed");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
