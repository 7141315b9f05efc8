//! The consumers' end-of-test report, of a run of its own (the other tests of this binary run beside it).

use crate::common::{new_topic, open_consumer_in, open_producer_in, send_all};
use kafka_native::consumer::stats::PERF_HEADER;
use kafka_native::run::report::Run;

#[test]
fn report_has_the_perf_test_columns_and_the_latency_line_and_writes_json() {
    require_broker!();
    let topic = new_topic("c-report", 2);
    let run = Run::new();
    let extra =
        [("messages.per.sample", "150"), ("record.size", "1000"), ("stamp.time", "true"), ("key.mode", "sequence")];
    assert_eq!(send_all(open_producer_in(&run, &topic, &extra), 1), 150);

    let group = format!("rust-report-{}-{}", std::process::id(), fastrand::u32(..));
    let mut total = 0;
    for n in ["1", "2"] {
        let extra = [("thread.number", n), ("thread.count", "2"), ("poll.timeout.ms", "1500")];
        let mut c = open_consumer_in(&run, &topic, &group, &extra);
        loop {
            let o = c.poll();
            if o.records == 0 {
                break;
            }
            total += o.records;
        }
        c.close();
    }
    assert_eq!(total, 150);

    let path = std::env::temp_dir().join(format!("kn-consumer-summary-{}.json", std::process::id()));
    let report = run.consumer_report(Some(path.to_str().unwrap())).unwrap().unwrap();
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines.len(), 4, "{report}");
    assert!(lines[3].starts_with("partitions read/available at start: "), "{report}");
    assert_eq!(lines[0], PERF_HEADER);
    let row: Vec<&str> = lines[1].split(", ").collect();
    assert_eq!(row.len(), 10, "{report}");
    assert_eq!(row[4], "150", "data.consumed.in.nMsg: {report}");
    assert_eq!(row[6], "0", "static assignment: no rebalance time: {report}");
    assert!(lines[2].starts_with("end-to-end latency: 150 records, avg "), "{report}");
    assert!(lines[2].contains("(150 from kn.sent.us headers)"), "{report}");

    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(json["records"], 150);
    assert_eq!(json["consumers"], 2);
    assert_eq!(json["rebalances"], 0);
    assert_eq!(json["perf"]["data.consumed.in.nMsg"], 150);
    assert!(json["e2e_latency_us"]["p50"].as_u64().unwrap() > 0);
    assert_eq!(json["perf_header"], PERF_HEADER);
    std::fs::remove_file(&path).ok();
    // The run is reset for the next test.
    assert!(run.consumer_report(None).unwrap().is_none());
}
