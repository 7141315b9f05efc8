//! Schema-aware records in and out of files, for the interop check (tests/schema/run.sh) and for trying
//! schemas and rules without Kafka: one base64-encoded record per line, exactly the bytes a producer
//! would send (with the registry header when a registry URL is set).
//!
//!     cargo run --release --example schema_records -- encode --topic orders --count 100 --out x.b64 \
//!         --set value.mode=avro --set value.schema.file=order.avsc --set schema.registry.url=http://…/apis/ccompat/v7
//!     cargo run --release --example schema_records -- decode --in x.b64 --set value.decode=avro --set schema.registry.url=…
//!
//! `decode` prints the first record as JSON and ends with "N passed, N failed" (exit status 1 on a failure).

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use base64::Engine as _;
use kafka_native::schema::{DecoderSettings, EncoderSettings, RecordDecoder, RecordEncoder, Role};

const USAGE: &str = "usage: schema_records encode --topic T --count N --out FILE [--set key=value ...]
       schema_records decode --in FILE [--set key=value ...]";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("schema_records: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let mut args = std::env::args().skip(1);
    let command = args.next().ok_or(USAGE)?;
    let mut settings: Vec<(String, String)> = Vec::new();
    let (mut topic, mut count, mut file) = (String::from("records"), 10usize, None::<String>);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--set" => {
                let kv = value()?;
                let (k, v) = kv.split_once('=').ok_or_else(|| format!("--set {kv}: not key=value"))?;
                settings.push((k.to_string(), v.to_string()));
            }
            "--topic" => topic = value()?,
            "--count" => count = value()?.parse().map_err(|_| "--count needs a number".to_string())?,
            "--out" | "--in" => file = Some(value()?),
            other => return Err(format!("unknown option '{other}'\n{USAGE}")),
        }
    }
    let map: BTreeMap<&str, &str> = settings.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let file = file.ok_or("--out/--in FILE is needed")?;
    let b64 = base64::engine::general_purpose::STANDARD;
    match command.as_str() {
        "encode" => {
            let s = EncoderSettings::parse(&map, Role::Value)
                .map_err(|e| e.to_string())?
                .ok_or("value.mode must be avro, json-schema or protobuf")?;
            let mut encoder = RecordEncoder::new(&s, &topic).map_err(|e| e.to_string())?;
            let jmeter_value = map.get("value").map(|v| v.as_bytes());
            let mut out = std::io::BufWriter::new(std::fs::File::create(&file).map_err(|e| format!("{file}: {e}"))?);
            let mut record = Vec::new();
            for _ in 0..count {
                encoder.next_into(jmeter_value, &mut record).map_err(|e| e.to_string())?;
                writeln!(out, "{}", b64.encode(&record)).map_err(|e| e.to_string())?;
            }
            out.flush().map_err(|e| e.to_string())?;
            println!(
                "wrote {count} records to {file} (schema id {}, subject {})",
                encoder.schema_id().map_or("none".to_string(), |i| i.to_string()),
                encoder.subject().unwrap_or("none")
            );
            Ok(ExitCode::SUCCESS)
        }
        "decode" => {
            let s = DecoderSettings::parse(&map, Role::Value)
                .map_err(|e| e.to_string())?
                .ok_or("value.decode must be avro, json-schema or protobuf")?;
            let mut decoder = RecordDecoder::new(&s).map_err(|e| e.to_string())?;
            let text = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
            let (mut passed, mut failed) = (0usize, 0usize);
            for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
                let result = b64
                    .decode(line.trim())
                    .map_err(|e| format!("not base64: {e}"))
                    .and_then(|bytes| decoder.check(&bytes).map_err(|e| e.to_string()));
                match result {
                    Ok(d) => {
                        if passed == 0 {
                            println!("first record (schema id {:?}): {}", d.schema_id, d.record);
                        }
                        passed += 1;
                    }
                    Err(e) => {
                        failed += 1;
                        if failed <= 5 {
                            println!("record {i}: {e}");
                        }
                    }
                }
            }
            println!("{passed} passed, {failed} failed");
            Ok(if failed == 0 && passed > 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        _ => Err(USAGE.to_string()),
    }
}
