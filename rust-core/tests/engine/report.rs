//! The end-of-test report, of a run of its own (the other tests of this binary run beside it).

use crate::common::{new_topic, open_producer_in, send_all};
use kafka_native::run::report::Run;

#[test]
fn report_counts_every_acknowledged_message_and_writes_json() {
    require_broker!();
    let topic = new_topic("report", 2);
    let run = Run::new();
    for _ in 0..2 {
        let p = open_producer_in(&run, &topic, &[("messages.per.sample", "50"), ("record.size", "10")]);
        assert_eq!(send_all(p, 3), 150);
    }
    let path = std::env::temp_dir().join(format!("kn-summary-{}.json", std::process::id()));
    let line = run.producer_report(Some(path.to_str().unwrap())).unwrap().unwrap();
    let form = regex_like(&line);
    assert!(form, "{line}");
    assert!(line.starts_with("300 records sent, "), "{line}");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(json["sent"], 300);
    assert_eq!(json["acked"], 300);
    assert_eq!(json["failed"], 0);
    let per_partition: u64 = json["per_partition"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(per_partition, 300);
    assert!(json["latency_us"]["p50"].as_u64().unwrap() > 0);
    // The run is reset for the next test.
    assert!(run.producer_report(None).unwrap().is_none());
}

/// `N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency, P ms 50th, P ms 95th, P ms 99th, P ms 99.9th.`
fn regex_like(line: &str) -> bool {
    let words: Vec<&str> = line.split(' ').collect();
    let num = |s: &str| s.trim_start_matches('(').parse::<f64>().is_ok();
    words.len() == 27
        && num(words[0])
        && words[1..3] == ["records", "sent,"]
        && num(words[3])
        && num(words[5])
        && words[6] == "MB/sec),"
        && num(words[7])
        && words[8..11] == ["ms", "avg", "latency,"]
        && num(words[11])
        && [15, 18, 21, 24].iter().all(|i| num(words[*i]))
        && words[26] == "99.9th."
}
