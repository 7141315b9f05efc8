//! The schema support against a REAL registry: Apicurio Registry started by `scripts/registry start`
//! (in a private network namespace, see tests/schema/run.sh). Without a registry answering at
//! $SCHEMA_REGISTRY_URL (default http://127.0.0.1:8081/apis/ccompat/v7) every test prints why and returns, or fails
//! when SCHEMA_REGISTRY_REQUIRED is set (as tests/schema/run.sh sets it) or in CI (`CI=true`). The skip line goes to the terminal, past the
//! harness's capture, as the broker tier's does:
//!
//!     unshare -n bash -c 'ip link set lo up && scripts/registry start --tls && \
//!       cargo test --release --locked -p kafka-native --test schema_registry; scripts/registry stop'

use kafka_native::error::Code;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use kafka_native::schema::{DecoderSettings, EncoderSettings, RecordDecoder, RecordEncoder, Role};
use serde_json::Value as Json;

fn registry_url() -> String {
    std::env::var("SCHEMA_REGISTRY_URL").unwrap_or_else(|_| "http://127.0.0.1:8081/apis/ccompat/v7".to_string())
}

/// The registry's URL when it answers; None (and a printed reason) otherwise.
fn registry() -> Option<String> {
    let url = registry_url();
    match ureq::get(&format!("{url}/subjects")).call() {
        Ok(_) => Some(url),
        Err(e)
            if std::env::var_os("SCHEMA_REGISTRY_REQUIRED").is_some()
                || std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") =>
        {
            panic!("no schema registry answers at {url} ({e}), and SCHEMA_REGISTRY_REQUIRED or CI is set")
        }
        Err(e) => {
            // Straight to stderr: the harness captures eprintln! of a passing test, and a skip must be seen.
            use std::io::Write;
            let line =
                format!("SKIPPED: no schema registry answers at {url} ({e}); start one with scripts/registry start\n");
            let _ = std::io::stderr().write_all(line.as_bytes());
            None
        }
    }
}

fn schemas_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/schema/schemas")
}

fn file(name: &str) -> String {
    schemas_dir().join(name).to_string_lossy().into_owned()
}

/// A name no earlier run used (the registry keeps its subjects while it runs).
fn unique(base: &str) -> String {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    format!("{base}-{nanos}")
}

fn settings(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

/// Avro records of tests/schema/schemas/order.avsc with the registry at `registry`, and the `extra` settings.
fn order_settings(registry: &str, extra: &[(&str, String)]) -> Vec<(String, String)> {
    let mut s = settings(&[
        ("value.mode", "avro".into()),
        ("value.schema.file", file("order.avsc")),
        ("schema.registry.url", registry.to_string()),
    ]);
    s.extend(settings(extra));
    s
}

fn map(s: &[(String, String)]) -> BTreeMap<&str, &str> {
    s.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

fn encoder(s: &[(String, String)], topic: &str) -> Result<RecordEncoder, kafka_native::error::EngineError> {
    let parsed = EncoderSettings::parse(&map(s), Role::Value)?.expect("a schema mode");
    RecordEncoder::new(&parsed, topic)
}

fn decoder(s: &[(String, String)]) -> RecordDecoder {
    let parsed = DecoderSettings::parse(&map(s), Role::Value).unwrap().expect("decoding on");
    RecordDecoder::new(&parsed).unwrap()
}

fn get_json(url: &str) -> Json {
    let mut r = ureq::get(url).call().unwrap();
    serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
}

#[test]
fn avro_records_from_a_file_are_registered_framed_and_decoded() {
    let Some(url) = registry() else { return };
    let topic = unique("orders");
    let s = order_settings(&url, &[("value.schema.rules.file", file("order.rules"))]);
    let mut enc = encoder(&s, &topic).unwrap();
    let id = enc.schema_id().unwrap();
    // the registry now has the subject <topic>-value with our id
    let latest = get_json(&format!("{url}/subjects/{topic}-value/versions/latest"));
    assert_eq!(latest["id"].as_u64(), Some(u64::from(id)), "{latest}");
    assert_eq!(enc.subject(), Some(format!("{topic}-value").as_str()));

    let mut dec = decoder(&settings(&[("value.decode", "avro".into()), ("schema.registry.url", url.clone())]));
    let mut record = Vec::new();
    for i in 0..500u64 {
        enc.next_into(None, &mut record).unwrap();
        assert_eq!(record[0], 0, "magic byte");
        assert_eq!(u32::from_be_bytes(record[1..5].try_into().unwrap()), id);
        let d = dec.decode(&record).unwrap();
        assert_eq!(d.schema_id, Some(id));
        assert_eq!(d.record["id"], i + 1, "seq(1) rule: {}", d.record);
        assert_eq!(d.record["code"], format!("ORD-{i}"));
        assert_eq!(d.record["currency"], "EUR");
        let lines = d.record["lines"].as_array().unwrap();
        assert!((1..=4).contains(&lines.len()));
    }
    // a second encoder (another JMeter thread) gets the same id without registering a second version
    let again = encoder(&s, &topic).unwrap();
    assert_eq!(again.schema_id(), Some(id));
    let versions = get_json(&format!("{url}/subjects/{topic}-value/versions"));
    assert_eq!(versions.as_array().map(Vec::len), Some(1), "{versions}");
}

#[test]
fn subject_naming_strategies_name_the_subjects() {
    let Some(url) = registry() else { return };
    let topic = unique("strategies");
    for (strategy, subject) in [("record", "shop.Order".to_string()), ("topic-record", format!("{topic}-shop.Order"))] {
        let s = order_settings(&url, &[("value.subject.name.strategy", strategy.into())]);
        let enc = encoder(&s, &topic).unwrap();
        assert_eq!(enc.subject(), Some(subject.as_str()));
        let subjects = get_json(&format!("{url}/subjects"));
        assert!(subjects.as_array().unwrap().iter().any(|v| v == &Json::String(subject.clone())), "{subjects}");
    }
}

#[test]
fn auto_register_off_needs_a_registered_schema() {
    let Some(url) = registry() else { return };
    let topic = unique("unregistered");
    let s = order_settings(&url, &[("auto.register.schemas", "false".into())]);
    let e = encoder(&s, &topic).err().unwrap();
    assert!([Code::SubjectNotFound, Code::SchemaNotFound].iter().any(|c| e.code == *c), "{e}");
    assert!(e.message.contains(&format!("'{topic}-value'")) && e.message.contains(&url), "{}", e.message);
    assert!(e.message.contains("auto.register.schemas=true"), "{}", e.message);

    // registered by someone else first: the lookup finds its id
    let mut reg = s.clone();
    reg.retain(|(k, _)| k != "auto.register.schemas");
    let id = encoder(&reg, &topic).unwrap().schema_id();
    assert_eq!(encoder(&s, &topic).unwrap().schema_id(), id);
}

#[test]
fn schemas_come_from_the_registry_by_subject_and_version() {
    let Some(url) = registry() else { return };
    let topic = unique("from-registry");
    let writer = order_settings(&url, &[]);
    let id = encoder(&writer, &topic).unwrap().schema_id();
    for version in ["latest", "1"] {
        let s = settings(&[
            ("value.mode", "avro".into()),
            ("value.schema.subject", format!("{topic}-value")),
            ("value.schema.version", version.into()),
            ("value.schema.rules", "id = fixed(77)".into()),
            ("schema.registry.url", url.clone()),
        ]);
        let mut enc = encoder(&s, &topic).unwrap();
        assert_eq!(enc.schema_id(), id);
        let mut record = Vec::new();
        enc.next_into(None, &mut record).unwrap();
        let mut dec = decoder(&settings(&[
            ("value.decode", "avro".into()),
            ("value.assert", "id=77".into()),
            ("schema.registry.url", url.clone()),
        ]));
        dec.check(&record).unwrap();
    }
    let missing = settings(&[
        ("value.mode", "avro".into()),
        ("value.schema.subject", unique("no-such-subject")),
        ("schema.registry.url", url.clone()),
    ]);
    let e = encoder(&missing, &topic).err().unwrap();
    assert_eq!(e.code, Code::SubjectNotFound, "{e}");
    assert!(e.message.contains("does not exist in the schema registry at"), "{}", e.message);
}

#[test]
fn an_incompatible_schema_is_refused_with_409() {
    let Some(url) = registry() else { return };
    let topic = unique("compat");
    let subject = format!("{topic}-value");
    let dir = std::env::temp_dir().join(unique("kn-compat"));
    std::fs::create_dir_all(&dir).unwrap();
    let v1 = dir.join("v1.avsc");
    let v2 = dir.join("v2.avsc");
    std::fs::write(&v1, r#"{"type":"record","name":"R","fields":[{"name":"a","type":"string"}]}"#).unwrap();
    // a new field without a default cannot be read from old records: not BACKWARD compatible
    std::fs::write(
        &v2,
        r#"{"type":"record","name":"R","fields":[{"name":"a","type":"string"},{"name":"b","type":"long"}]}"#,
    )
    .unwrap();
    let with = |path: &PathBuf| {
        settings(&[
            ("value.mode", "avro".into()),
            ("value.schema.file", path.to_string_lossy().into_owned()),
            ("schema.registry.url", url.clone()),
        ])
    };
    encoder(&with(&v1), &topic).unwrap();
    // Apicurio's default compatibility is NONE (unlike Confluent's BACKWARD): ask for BACKWARD on this subject
    ureq::put(&format!("{url}/config/{subject}"))
        .header("Content-Type", "application/vnd.schemaregistry.v1+json")
        .send(r#"{"compatibility":"BACKWARD"}"#)
        .unwrap();
    let e = encoder(&with(&v2), &topic).err().unwrap();
    assert_eq!(e.code, Code::SchemaIncompatible, "{e}");
    assert!(e.message.contains("HTTP 409") && e.message.contains(&subject), "{}", e.message);
}

#[test]
fn json_schema_and_protobuf_round_trip_through_the_registry() {
    let Some(url) = registry() else { return };
    let topic = unique("formats");
    let cases = [
        ("json-schema", file("customer.schema.json"), None, Some(file("customer.rules")), "id=1"),
        ("protobuf", file("order.proto"), None, None, "id=1"),
        ("protobuf", file("order.proto"), Some("shop.v1.Refund"), None, "order_code=R-0"),
    ];
    for (mode, schema_file, message, rules_file, assertion) in cases {
        let mut s = settings(&[
            ("value.mode", mode.into()),
            ("value.schema.file", schema_file),
            ("value.subject.name.strategy", "topic-record".into()),
            ("schema.registry.url", url.clone()),
        ]);
        if let Some(m) = message {
            s.push(("value.schema.message".into(), m.into()));
            s.push(("value.schema.rules".into(), "order_code = template(R-{seq})".into()));
        } else if mode == "protobuf" {
            s.push(("value.schema.rules".into(), "id = seq(1)".into()));
        }
        if let Some(r) = rules_file {
            s.push(("value.schema.rules.file".into(), r));
        }
        let mut enc = encoder(&s, &topic).unwrap_or_else(|e| panic!("{mode}: {e}"));
        let mut dec = decoder(&settings(&[
            ("value.decode", mode.into()),
            ("value.assert", assertion.into()),
            ("schema.registry.url", url.clone()),
        ]));
        let mut record = Vec::new();
        enc.next_into(None, &mut record).unwrap();
        let d = dec.check(&record).unwrap_or_else(|e| panic!("{mode} {message:?}: {e}"));
        assert_eq!(d.schema_id, enc.schema_id());
        if message.is_some() {
            assert_eq!(record[5..7], [2, 2], "message index path [1]: count 1, index 1 (zig-zag)");
        }
        for _ in 0..200 {
            enc.next_into(None, &mut record).unwrap();
            dec.decode(&record).unwrap_or_else(|e| panic!("{mode}: {e}"));
        }
        // the registry stores the schema with its type
        let stored = get_json(&format!("{url}/schemas/ids/{}", d.schema_id.unwrap()));
        let expected_type = if mode == "protobuf" { "PROTOBUF" } else { "JSON" };
        assert_eq!(stored["schemaType"], expected_type, "{stored}");
    }
}

#[test]
fn jmeter_json_values_are_encoded_or_refused() {
    let Some(url) = registry() else { return };
    let topic = unique("jmeter-json");
    let s = order_settings(&url, &[("value.schema.input", "jmeter".into())]);
    let mut enc = encoder(&s, &topic).unwrap();
    let good = br#"{"id": 9, "code": "C9", "status": "PAID", "ref": "0d9c5c4e-33a1-4d0f-8f5e-000000000009",
        "created": 1764547200000, "updated": 1764547200000000, "delivery_day": 20423, "total": "99.90",
        "currency": "EUR", "customer": {"id": 1, "name": "Ann", "email": "ann@example.com",
        "address": {"street": "S", "city": "C", "zip": "1", "country": "DE"}},
        "lines": [{"sku": "A", "title": "T", "qty": 1, "price": "99.90"}], "tags": [], "attributes": {},
        "gift": false, "weight_kg": 1.5}"#;
    let mut record = Vec::new();
    enc.next_into(Some(good), &mut record).unwrap();
    let mut dec = decoder(&settings(&[
        ("value.decode", "avro".into()),
        ("value.assert", "customer.address.country=DE".into()),
        ("schema.registry.url", url.clone()),
    ]));
    assert_eq!(dec.check(&record).unwrap().record["code"], "C9");
    let e = enc.next_into(Some(br#"{"id": "nine"}"#), &mut record).unwrap_err();
    assert_eq!(e.code, "RECORD_INVALID");
    assert!(e.message.contains("field 'id'"), "{}", e.message);
}

#[test]
fn decoding_failures_are_coded() {
    let Some(url) = registry() else { return };
    let mut dec = decoder(&settings(&[("value.decode", "avro".into()), ("schema.registry.url", url.clone())]));
    let e = dec.decode(b"plain text").unwrap_err();
    assert_eq!(e.code, Code::DecodeError);
    let e = dec.decode(&[0, 0x7f, 0xff, 0xff, 0xf0, 1, 2]).unwrap_err();
    assert_eq!(e.code, Code::SchemaNotFound, "{e}");
    assert!(e.message.contains("schema id 2147483632"), "{}", e.message);
}

#[test]
fn an_unreachable_registry_is_reported_with_its_url_only() {
    // needs no registry: port 1 on the loopback refuses connections
    let s = order_settings(
        "http://tester:hunter2@127.0.0.1:1/apis/ccompat/v7",
        &[("schema.registry.password", "hunter2".into())],
    );
    let e = encoder(&s, "t").err().unwrap();
    assert_eq!(e.code, Code::RegistryUnreachable, "{e}");
    assert!(e.message.contains("http://127.0.0.1:1/apis/ccompat/v7"), "{}", e.message);
    assert!(!e.message.contains("hunter2") && !e.message.contains("tester"), "{}", e.message);
}

#[test]
fn tls_with_a_ca_file() {
    let Some(url) = registry() else { return };
    let (Ok(tls_url), Ok(ca)) = (std::env::var("SCHEMA_REGISTRY_TLS_URL"), std::env::var("SCHEMA_REGISTRY_CA")) else {
        eprintln!("SKIPPED: SCHEMA_REGISTRY_TLS_URL / SCHEMA_REGISTRY_CA not set (scripts/registry start --tls)");
        return;
    };
    let _ = url;
    let topic = unique("tls");
    let mut s = order_settings(&tls_url, &[("schema.registry.ssl.ca.location", ca)]);
    let mut enc = encoder(&s, &topic).unwrap();
    let mut record = Vec::new();
    enc.next_into(None, &mut record).unwrap();
    assert!(enc.schema_id().is_some());
    // without our CA the registry's certificate is not trusted
    s.retain(|(k, _)| k != "schema.registry.ssl.ca.location");
    let e = encoder(&s, &unique("tls-untrusted")).err().unwrap();
    assert_eq!(e.code, Code::RegistryUnreachable, "{e}");
    assert!(e.message.contains(&tls_url) && e.message.contains("schema.registry.ssl.ca.location"), "{}", e.message);
}
