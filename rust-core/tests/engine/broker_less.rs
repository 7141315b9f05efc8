//! The broker-less tier against librdkafka's mock cluster (`rdkafka::mocking`), so it runs with plain `cargo test`
//! and no broker: the producer's deadlines, pre-flight and error mapping; the consumer (through [`ConsumerHandle`],
//! as the sampler drives it) across a group rebalance, a group coordinator move, a partition leader change and
//! partition EOF events.

use kafka_native::error::Code;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_native::consumer::settings::parse_consumer;
use kafka_native::consumer::{ConsumerHandle, PollOutcome};
use kafka_native::producer::settings::parse;
use kafka_native::producer::{ProducerHandle, SampleInput};
use kafka_native::run::report::Run;
use rdkafka::mocking::{MockCluster, MockCoordinator};
use rdkafka::producer::DefaultProducerContext;
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};

type Mock = MockCluster<'static, DefaultProducerContext>;

fn cluster(topic: &str, partitions: i32) -> Mock {
    cluster_of(1, topic, partitions)
}

fn cluster_of(brokers: i32, topic: &str, partitions: i32) -> Mock {
    let cluster = MockCluster::new(brokers).expect("librdkafka's mock cluster starts");
    cluster.create_topic(topic, partitions, brokers).expect("the mock cluster creates topics");
    cluster
}

fn open(
    cluster: &Mock,
    topic: &str,
    extra: &[(&str, &str)],
) -> Result<ProducerHandle, kafka_native::error::EngineError> {
    let mut pairs = vec![
        ("bootstrap.servers".to_string(), cluster.bootstrap_servers()),
        ("topic".to_string(), topic.to_string()),
        ("record.size".to_string(), "10".to_string()),
    ];
    pairs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    ProducerHandle::open(parse(&pairs).unwrap(), &Run::new())
}

#[test]
fn a_message_is_acknowledged_with_its_partition_and_offset() {
    let c = cluster("ok", 2);
    let mut p = open(&c, "ok", &[("partition", "1")]).unwrap();
    for offset in 0..2 {
        let o = p.send(SampleInput::default());
        assert_eq!((o.acked, o.failed, o.partition, o.offset, o.error), (1, 0, 1, offset, None));
    }
    assert!(p.close(Duration::from_secs(5)).starts_with("closed: 2 acked, 0 failed"));
}

#[test]
fn a_broker_down_times_out_within_the_sample_deadline() {
    let c = cluster("down", 1);
    let mut p = open(&c, "down", &[("timeout.ms", "1000")]).unwrap();
    assert!(p.send(SampleInput::default()).error.is_none());
    c.broker_down(1).unwrap();
    let o = p.send(SampleInput::default());
    let e = o.error.expect("no broker: the message must fail");
    assert_eq!((e.code.as_str(), o.acked, o.failed), ("MSG_TIMED_OUT", 0, 1), "{e}");
    // timeout.ms plus librdkafka's once-a-second timeout scan (the engine's VERDICT_GRACE), never much longer.
    assert!(o.elapsed < Duration::from_millis(1000 + 1200 + 800), "{:?}", o.elapsed);
    p.close(Duration::from_secs(1));
}

#[test]
fn request_errors_are_reported_by_their_names() {
    let c = cluster("refused", 1);
    let mut p = open(&c, "refused", &[]).unwrap();
    c.request_errors(RDKafkaApiKey::Produce, &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS]);
    // policy=capacity has retries=0: a retriable error shows as a failure, not as a hidden retry.
    let e = p.send(SampleInput::default()).error.expect("the broker refused the produce request");
    assert_eq!(e.code, "NOT_ENOUGH_REPLICAS", "{e}");
    assert!(p.send(SampleInput::default()).error.is_none(), "the next request is accepted");
    // Last: librdkafka then fails the topic's further messages with the same error until its metadata is refreshed.
    c.request_errors(RDKafkaApiKey::Produce, &[RDKafkaRespErr::RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED]);
    let e = p.send(SampleInput::default()).error.expect("the broker refused the produce request");
    assert_eq!(e.code, "TOPIC_AUTHORIZATION_FAILED", "{e}");
    p.close(Duration::from_secs(5));
}

#[test]
fn preflight_refuses_a_missing_topic_and_too_few_partitions() {
    let c = cluster("present", 2);
    let e = open(&c, "absent", &[("timeout.ms", "500")]).err().unwrap();
    assert_eq!(e.code, "UNKNOWN_TOPIC_OR_PART");
    assert!(e.message.starts_with("topic 'absent' does not exist on "), "{e}");
    let e = open(&c, "present", &[("thread.count", "4"), ("preflight", "fail")]).err().unwrap();
    assert_eq!(e.code, "TOO_FEW_PARTITIONS");
    assert!(e.message.contains("has 2 partition(s) for 4 producing threads"), "{e}");
    assert!(open(&c, "present", &[("thread.count", "4")]).is_ok(), "preflight=warn only logs");
}

#[test]
fn preflight_names_the_brokers_when_none_answers() {
    let c = cluster("t", 1);
    c.broker_down(1).unwrap();
    let e = open(&c, "t", &[("timeout.ms", "500")]).err().unwrap();
    assert!(e.message.starts_with(&format!("no broker at {} answered within 500 ms (", c.bootstrap_servers())), "{e}");
    assert!(
        e.message.ends_with("check bootstrap.servers, the security settings and that the broker is running"),
        "{e}"
    );
}

// ------------------------------------------------------------------------------------------------ the consumer

/// Sends `samples` samples of 10 records with audit headers (`kn.seq`, for `check.sequence`) to `topic`, retrying
/// as the reliability policy does (a leader change is a retriable error); returns the records acknowledged.
fn produce(cluster: &Mock, topic: &str, samples: u32) -> u64 {
    let mut p = open(cluster, topic, &[("messages.per.sample", "10"), ("audit", "true"), ("policy", "reliability")])
        .expect("the producer opens on the mock cluster");
    let acked = (0..samples).map(|_| p.send(SampleInput::default()).acked as u64).sum();
    p.close(Duration::from_secs(5));
    acked
}

/// A consumer of `group` on `topic` at the mock cluster, with the sampler's `extra` settings.
fn consumer(cluster: &Mock, topic: &str, group: &str, extra: &[(&str, &str)]) -> ConsumerHandle {
    consumer_in(&Run::new(), cluster, topic, group, extra)
}

/// As [`consumer`], its statistics going to `run` at its close.
fn consumer_in(run: &Arc<Run>, cluster: &Mock, topic: &str, group: &str, extra: &[(&str, &str)]) -> ConsumerHandle {
    let mut pairs = vec![
        ("bootstrap.servers".to_string(), cluster.bootstrap_servers()),
        ("topic".to_string(), topic.to_string()),
        ("group.id".to_string(), group.to_string()),
        ("poll.timeout.ms".to_string(), "200".to_string()),
    ];
    pairs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let settings = parse_consumer(&pairs).unwrap_or_else(|e| panic!("bad consumer settings: {e}"));
    ConsumerHandle::open(settings, run).unwrap_or_else(|e| panic!("the consumer opens on the mock: {e}"))
}

/// Polls `c` until `done` holds for the last outcome (at most `limit`); every poll must succeed. Returns all the
/// outcomes, the last one last.
fn poll_until(c: &mut ConsumerHandle, limit: Duration, done: impl Fn(&PollOutcome) -> bool) -> Vec<PollOutcome> {
    let until = Instant::now() + limit;
    let mut outcomes: Vec<PollOutcome> = Vec::new();
    loop {
        let o = c.poll();
        assert!(o.error.is_none(), "a poll failed: {o:?}");
        let finished = done(&o);
        outcomes.push(o);
        if finished {
            return outcomes;
        }
        assert!(Instant::now() < until, "not reached within {limit:?}; the last polls: {:?}", last_few(&outcomes));
    }
}

/// "Done" for [`poll_until`]: the first empty poll once `n` records were read (an empty poll before the group's
/// assignment arrives is not the end of the partitions).
fn after_all(n: u64) -> impl Fn(&PollOutcome) -> bool {
    let seen = std::cell::Cell::new(0u64);
    move |o| {
        seen.set(seen.get() + o.records as u64);
        seen.get() >= n && o.records == 0
    }
}

/// The count in a close report's "N rebalance(s) pausing" phrase.
fn rebalances_in(report: &str) -> u64 {
    let before = report.split(" rebalance(s) pausing ").next().filter(|b| b.len() < report.len());
    let n = before.and_then(|b| b.rsplit(' ').next()).and_then(|n| n.parse().ok());
    n.unwrap_or_else(|| panic!("no rebalance count in the close report: {report}"))
}

fn last_few(outcomes: &[PollOutcome]) -> &[PollOutcome] {
    &outcomes[outcomes.len().saturating_sub(3)..]
}

fn records(outcomes: &[PollOutcome]) -> u64 {
    outcomes.iter().map(|o| o.records as u64).sum()
}

/// Group settings that let the mock's coordinator notice joins and leaves within a second.
const FAST_GROUP: [(&str, &str); 3] =
    [("assignment", "subscribe"), ("heartbeat.interval.ms", "100"), ("session.timeout.ms", "6000")];

#[test]
fn a_rebalance_is_counted_and_the_partitions_follow_the_group() {
    let c = cluster("rebalance", 4);
    let mut first = consumer(&c, "rebalance", "g-rebalance", &FAST_GROUP);
    let joined = poll_until(&mut first, Duration::from_secs(20), |o| o.assigned == 4);
    assert_eq!(joined.last().unwrap().rebalances, 1, "{:?}", last_few(&joined));

    // A second member: the coordinator splits the 4 partitions, both members go through the rebalance.
    let mut second = consumer(&c, "rebalance", "g-rebalance", &FAST_GROUP);
    // 45 s: the mock's coordinator sometimes runs a further join round after a member's session stalls (seen once
    // in 25 runs: the first member at 0 partitions after its 4th rebalance, still waiting at 20 s).
    let until = Instant::now() + Duration::from_secs(45);
    let (mut a, mut b) = (first.poll(), second.poll());
    while !(a.assigned == 2 && b.assigned == 2) {
        assert!(Instant::now() < until, "no 2 + 2 split within 45 s: {a:?} / {b:?}");
        assert!(a.error.is_none() && b.error.is_none(), "{a:?} / {b:?}");
        (a, b) = (first.poll(), second.poll());
    }
    // The mock's coordinator may run the join in one round or two (the second member's join can land after the first
    // round started), so the first member has seen at least one more rebalance, and each one is counted.
    assert!(a.rebalances >= 2 && b.rebalances >= 1, "{a:?} / {b:?}");

    // The second one leaves: the first holds all 4 again, after one more rebalance.
    let report = second.close();
    assert!(rebalances_in(&report) >= b.rebalances, "{report} after {b:?}");
    let back = poll_until(&mut first, Duration::from_secs(20), |o| o.assigned == 4);
    let total = back.last().unwrap().rebalances;
    assert!(total > a.rebalances, "{:?} after {a:?}", last_few(&back));
    let report = first.close();
    assert!(report.starts_with("closed: 0 records in ") && rebalances_in(&report) >= total, "{report}");
}

#[test]
fn the_join_pauses_until_the_first_record_and_the_summary_has_the_threads_pause() {
    let c = cluster("pause", 4);
    assert_eq!(produce(&c, "pause", 2), 20);
    let run = Run::new();
    let mut member = consumer_in(&run, &c, "pause", "g-pause", &FAST_GROUP);
    let began = Instant::now();
    let polls = poll_until(&mut member, Duration::from_secs(20), |o| o.records > 0);
    let waited = began.elapsed();
    // Only the poll that got the first record after the assignment ends the join's pause, and says so.
    let first = polls.last().unwrap();
    let (number, pause) = first.rebalance_ended.unwrap_or_else(|| panic!("not marked: {first:?}"));
    assert_eq!(number, 1, "{first:?}");
    assert!(pause > Duration::ZERO && pause <= waited + Duration::from_millis(50), "{pause:?} of {waited:?}");
    assert!(polls[..polls.len() - 1].iter().all(|o| o.rebalance_ended.is_none()), "{polls:?}");
    assert_eq!(member.poll().rebalance_ended, None, "the next poll is not marked");
    let report = member.close();
    let ms = pause.as_millis();
    assert!(
        report.contains(&format!(
            ", 1 rebalance(s) pausing {ms} ms in all, at most {ms} ms, 4 partition(s) gained, 0 lost"
        )),
        "{report}"
    );
    let path = std::env::temp_dir().join(format!("kn-pause-summary-{}.json", std::process::id()));
    run.consumer_report(Some(path.to_str().unwrap())).unwrap();
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    let thread = serde_json::json!({"thread": "1/1", "count": 1, "total_ms": ms as u64, "max_ms": ms as u64,
        "partitions_gained": 4, "partitions_lost": 0});
    assert_eq!(summary["rebalance_pauses"]["threads"], serde_json::json!([thread]), "{summary}");
    assert_eq!(summary["rebalance_pauses"]["max_ms"], ms as u64, "{summary}");
}

#[test]
fn offsets_are_committed_to_the_group_coordinator_after_it_moved() {
    let c = cluster_of(3, "coord", 1);
    c.partition_leader("coord", 0, Some(3)).unwrap();
    c.coordinator(MockCoordinator::Group("g-coord".into()), 1).unwrap();
    assert_eq!(produce(&c, "coord", 2), 20);
    let mut consumer1 = consumer(&c, "coord", "g-coord", &[("commit", "sync")]);
    let before = poll_until(&mut consumer1, Duration::from_secs(10), |o| o.offset == 19);
    assert_eq!(records(&before), 20);

    // The group's coordinator moves to broker 2: the commits that follow must reach it.
    c.coordinator(MockCoordinator::Group("g-coord".into()), 2).unwrap();
    assert_eq!(produce(&c, "coord", 2), 20);
    let after = poll_until(&mut consumer1, Duration::from_secs(15), |o| o.offset == 39);
    assert_eq!(records(&after), 20);
    let report = consumer1.close();
    assert!(report.starts_with("closed: 40 records in ") && report.contains(" 0 failed)"), "{report}");

    // A new member of the group starts after the last committed offset: nothing is read twice.
    let mut again = consumer(&c, "coord", "g-coord", &[("poll.timeout.ms", "1000")]);
    let o = again.poll();
    assert_eq!((o.records, o.error.as_ref().map(|e| e.code.as_str())), (0, None), "{o:?}");
    again.close();
}

#[test]
fn a_leader_change_loses_and_repeats_no_record() {
    let c = cluster_of(2, "leader", 1);
    c.partition_leader("leader", 0, Some(1)).unwrap();
    let check = [("check.sequence", "true"), ("commit", "sync"), ("max.records", "15")];
    let mut consumer1 = consumer(&c, "leader", "g-leader", &check);
    assert_eq!(produce(&c, "leader", 3), 30);
    let before = poll_until(&mut consumer1, Duration::from_secs(10), |o| o.offset == 29);

    // Broker 2 becomes the leader: the producer and the consumer both follow it.
    c.partition_leader("leader", 0, Some(2)).unwrap();
    assert_eq!(produce(&c, "leader", 3), 30);
    let after = poll_until(&mut consumer1, Duration::from_secs(15), |o| o.offset == 59);
    let all: Vec<PollOutcome> = before.into_iter().chain(after).collect();
    assert_eq!(records(&all), 60, "every record once");
    assert!(all.iter().all(|o| o.check_failures == 0 && o.records <= 15), "{:?}", last_few(&all));
    let report = consumer1.close();
    assert!(report.starts_with("closed: 60 records in ") && report.contains(" 0 failed)"), "{report}");
}

#[test]
fn partition_eof_events_neither_fail_nor_shorten_a_sample() {
    let c = cluster("eof", 2);
    assert_eq!(produce(&c, "eof", 1), 10);
    // enable.partition.eof: librdkafka reports the end of each partition as an event, which the sampler must not
    // take for an error (nor for the end of the wait).
    let eof = [("enable.partition.eof", "true"), ("poll.timeout.ms", "500")];
    let mut drain = consumer(&c, "eof", "g-eof", &eof);
    let read = poll_until(&mut drain, Duration::from_secs(10), after_all(10));
    assert_eq!(records(&read), 10);
    let empty = read.last().unwrap();
    assert!(empty.elapsed >= Duration::from_millis(500), "the EOF cut the wait short: {empty:?}");
    assert!(!empty.stop_thread);
    drain.close();

    // At the end of the partitions, stop.on.empty ends the thread; fail.on.empty fails the sample as EMPTY.
    let mut stop = consumer(&c, "eof", "g-eof-stop", &[eof[0], eof[1], ("stop.on.empty", "true")]);
    let last = poll_until(&mut stop, Duration::from_secs(10), after_all(10));
    assert!(last.last().unwrap().stop_thread, "{:?}", last_few(&last));
    stop.close();
    let mut fail = consumer(&c, "eof", "g-eof-fail", &[eof[0], eof[1], ("fail.on.empty", "true")]);
    let until = Instant::now() + Duration::from_secs(10);
    let e = loop {
        let o = fail.poll();
        if let Some(e) = o.error {
            break e;
        }
        assert!(Instant::now() < until, "no EMPTY sample within 10 s");
    };
    assert_eq!(e.code, Code::Empty, "{e}");
    assert_eq!(e.message, "no record within 500 ms (poll.timeout.ms)");
    fail.close();
}

#[test]
fn messages_librdkafka_sends_again_are_counted_as_retries() {
    let c = cluster("retried", 1);
    let run = Run::new();
    let pairs: Vec<(String, String)> = [
        ("bootstrap.servers", c.bootstrap_servers().as_str()),
        ("topic", "retried"),
        ("record.size", "10"),
        ("policy", "reliability"),
        ("extra.properties", "statistics.interval.ms=100;retry.backoff.ms=10"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut p = ProducerHandle::open(parse(&pairs).unwrap(), &run).unwrap();
    // A leader that moved, three times: librdkafka puts the message back into the partition's queue and writes it
    // into a new request each time (its request-retry counter stays 0 for these).
    let moved = RDKafkaRespErr::RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION;
    c.request_errors(RDKafkaApiKey::Produce, &[moved, moved, moved]);
    let o = p.send(SampleInput::default());
    assert_eq!((o.acked, o.failed), (1, 0), "{:?}", o.error);
    std::thread::sleep(Duration::from_millis(400)); // a statistics emission after the retries
    p.close(Duration::from_secs(5));
    run.producer_report(None).unwrap();
    let summary = run
        .judgement
        .judge(&kafka_native::verdict::judgement::Request { spec: "retries>=3".into(), ..Default::default() });
    assert_eq!(summary.failed, 0, "{:?}", summary.text);
}
