//! `target.rate`: samples start at their intended times, and lateness is reported, not hidden.

use std::time::{Duration, Instant};

use crate::common::{new_topic, open_producer, open_producer_in, send_interrupted_after};
use kafka_native::producer::SampleInput;
use kafka_native::run::report::Run;

#[test]
fn target_rate_paces_samples_and_reports_schedule_delay() {
    require_broker!();
    let topic = new_topic("paced", 1);
    let run = Run::new(); // its own: the report below is of these samples only
    let mut p = open_producer_in(&run, &topic, &[("target.rate", "20")]);
    let start = Instant::now();
    for _ in 0..10 {
        assert_eq!(p.send(SampleInput::default()).acked, 1);
    }
    // 10 samples at 20/s: the 10th is intended 450 ms after the first.
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(440), "took {took:?}");
    p.close(Duration::from_secs(5));
    let path = std::env::temp_dir().join(format!("kn-paced-{}.json", std::process::id()));
    run.producer_report(Some(path.to_str().unwrap())).unwrap().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let delay = &json["schedule_delay_us"];
    assert!(delay.is_object(), "{json}");
    // On time: each sample starts within a few ms of its slot (generous for a busy CI machine).
    assert!(delay["p50"].as_u64().unwrap() < 50_000, "{delay}");
}

#[test]
fn a_stop_during_the_target_rate_pause_ends_the_sample_unsent() {
    require_broker!();
    let topic = new_topic("paced-stop", 1);
    // One sample every 5 s: the second waits for its slot, and the stop comes during that wait.
    let mut p = open_producer(&topic, &[("target.rate", "0.2")]);
    assert_eq!(p.send(SampleInput::default()).acked, 1);
    let (o, took) = send_interrupted_after(&mut p, Duration::from_millis(300));
    assert!(took < Duration::from_secs(2), "took {took:?}");
    // The stop is not lost after the pause: the sample is not sent (it used to be, and acknowledged).
    assert_eq!((o.acked, o.error.as_ref().map(|e| e.code.as_str())), (0, Some("INTERRUPTED")), "{o:?}");
    // A stop between samples ends the next one too, at once.
    p.slot().interrupt();
    let o = p.send(SampleInput::default());
    assert_eq!((o.acked, o.error.as_ref().map(|e| e.code.as_str())), (0, Some("INTERRUPTED")), "{o:?}");
    assert!(p.close(Duration::from_secs(5)).starts_with("closed: 1 acked, 0 failed"));
}
