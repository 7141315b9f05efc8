//! The delivery audit against the real broker: it counts what is in the topic, and it does catch
//! duplicates, missing and foreign messages (proved with messages written by hand).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::common::{bootstrap, new_topic, open_producer_in, send_all, total_messages};
use kafka_native::audit::{self, AuditTarget, SeqSet};
use kafka_native::run::report::Run;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::ClientConfig;

fn target(topic: &str) -> AuditTarget {
    let mut client = BTreeMap::new();
    client.insert("bootstrap.servers".to_string(), bootstrap());
    AuditTarget::new(&client, topic, Duration::from_secs(30))
}

#[test]
fn audit_detects_duplicates_missing_and_foreign_messages() {
    require_broker!();
    let topic = new_topic("audit-hand", 2);
    let producer: BaseProducer = ClientConfig::new().set("bootstrap.servers", bootstrap()).create().unwrap();
    let since = audit::epoch_millis() - 1000;
    let send = |seq: Option<u64>| {
        let headers = seq.map(|seq| {
            OwnedHeaders::new()
                .insert(Header { key: audit::RUN_HEADER, value: Some("run-by-hand") })
                .insert(Header { key: audit::PRODUCER_HEADER, value: Some("p1") })
                .insert(Header { key: audit::SEQ_HEADER, value: Some(&seq.to_be_bytes()) })
        });
        let mut record = BaseRecord::<(), str>::to(&topic).payload("x");
        if let Some(h) = headers {
            record = record.headers(h);
        }
        producer.send(record).map_err(|(e, _)| e).unwrap();
    };
    for seq in 0..10 {
        send(Some(seq));
    }
    send(Some(3)); // a retry that wrote twice
    send(None); // another writer's message
    send(Some(11)); // written, but the test counted it as failed
    producer.flush(Duration::from_secs(10)).unwrap();

    let mut acked = SeqSet::default();
    for seq in (0..10).chain([42]) {
        acked.insert(seq); // 42 was acknowledged but is not in the topic
    }
    let acked = BTreeMap::from([("p1".to_string(), acked)]);
    let report = audit::read_back(&target(&topic), "run-by-hand", since, Some(&acked)).unwrap();
    assert!(report.complete);
    assert_eq!(
        (report.acked, report.found, report.duplicates, report.missing, report.unexpected, report.found_unacked),
        (11, 10, 1, 1, 1, 1),
        "{}",
        report.line()
    );
    // On demand (scripts/audit), without the acknowledged set: a sequence gap (seq 10 here) may be a failed,
    // never-written message, so it is a gap, not missing.
    let report = audit::read_back(&target(&topic), "run-by-hand", since, None).unwrap();
    assert_eq!(
        (report.found, report.duplicates, report.missing, report.gaps, report.unexpected),
        (11, 1, 0, Some(1), 1),
        "{}",
        report.line()
    );
}

#[test]
fn audited_run_finds_every_acknowledged_message_once() {
    require_broker!();
    let topic = new_topic("audit-run", 4);
    let run = Run::new(); // its own: the audit is of this run's messages
    let extra = [("audit", "true"), ("messages.per.sample", "250"), ("policy", "reliability"), ("record.size", "100")];
    for _ in 0..2 {
        assert_eq!(send_all(open_producer_in(&run, &topic, &extra), 2), 500);
    }
    let path = std::env::temp_dir().join(format!("kn-audit-{}.json", std::process::id()));
    let text = run.producer_report(Some(path.to_str().unwrap())).unwrap().unwrap();
    assert!(text.contains("1000 acked, 1000 found, 0 missing, 0 duplicates, 0 unexpected"), "{text}");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(json["audit"]["found"], 1000);
    assert_eq!(json["audit"]["duplicates"], 0);
    assert_eq!(json["audit"]["missing"], 0);
    assert_eq!(json["acked"], 1000);
    assert_eq!(total_messages(&topic), 1000);
}
