//! The transactional producer against librdkafka's mock cluster: a transaction that fails while its only broker
//! (the partition leader and the transaction coordinator) is down, whose abort cannot reach the coordinator either,
//! must not leave the thread failing to the end of the test: once the broker is back, a new producer with the same
//! transactional.id takes over and the samples commit again.
//!
//! Two samples per transaction, so that the failing transaction already holds an acknowledged message: its
//! partition is registered with the coordinator and the abort must reach it (a transaction with no partition
//! yet is aborted by the client alone, and would not test the failed abort).
//!
//! A commit that gets no answer, on a cluster whose transaction coordinator is another broker than the partition's
//! leader: it is not aborted (the coordinator may have decided to commit), but waited on until the coordinator
//! answers, or, past `transaction.timeout.ms`, reported in doubt.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_native::producer::settings::parse;
use kafka_native::producer::transaction::TxnEnd;
use kafka_native::producer::{ProducerHandle, SampleInput, SampleOutcome};
use kafka_native::run::report::Run;
use rdkafka::mocking::{MockCluster, MockCoordinator};
use rdkafka::producer::DefaultProducerContext;

const TOPIC: &str = "txn";

type Mock = MockCluster<'static, DefaultProducerContext>;

fn cluster() -> Mock {
    let cluster = MockCluster::new(1).expect("librdkafka's mock cluster starts");
    cluster.create_topic(TOPIC, 1, 1).expect("the mock cluster creates topics");
    cluster
}

fn transactional(cluster: &Mock, prefix: &str) -> ProducerHandle {
    transactional_with(cluster, prefix, &[], &Run::new())
}

fn transactional_with(cluster: &Mock, prefix: &str, more: &[(&str, &str)], run: &Arc<Run>) -> ProducerHandle {
    let mut pairs: Vec<(String, String)> = [
        ("bootstrap.servers", cluster.bootstrap_servers().as_str()),
        ("topic", TOPIC),
        ("record.size", "10"),
        ("policy", "reliability"),
        ("producer.scope", "thread"),
        ("timeout.ms", "1000"),
        ("transactional.id.prefix", prefix),
        ("transaction.samples", "2"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    pairs.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    ProducerHandle::open(parse(&pairs).unwrap(), run).unwrap_or_else(|e| panic!("opens on the mock: {e}"))
}

/// Two brokers: broker 1 leads the topic's partition, broker 2 coordinates the transactions of `<prefix>-0`.
fn split_cluster(prefix: &str) -> Mock {
    let cluster = MockCluster::new(2).expect("librdkafka's mock cluster starts");
    cluster.create_topic(TOPIC, 1, 1).expect("the mock cluster creates topics");
    cluster.partition_leader(TOPIC, 0, Some(1)).unwrap();
    cluster.coordinator(MockCoordinator::Transaction(format!("{prefix}-0")), 2).unwrap();
    cluster
}

fn ended_as(o: &SampleOutcome, end: TxnEnd) -> bool {
    o.error.is_none() && o.acked == 1 && o.transaction == end
}

/// One committed transaction, then the first sample of the next one, then the broker goes down and the second
/// sample fails: its abort times out.
fn fail_a_transaction(cluster: &Mock, p: &mut ProducerHandle) -> SampleOutcome {
    for end in [TxnEnd::Open, TxnEnd::Committed, TxnEnd::Open] {
        let o = p.send(SampleInput::default());
        assert!(ended_as(&o, end), "{end:?} expected: {o:?}");
    }
    cluster.broker_down(1).unwrap();
    p.send(SampleInput::default())
}

#[test]
fn a_transaction_whose_abort_timed_out_is_followed_by_committed_ones() {
    let cluster = cluster();
    let mut p = transactional(&cluster, "mock-txn");
    let failed = fail_a_transaction(&cluster, &mut p);
    let e = failed.error.as_ref().expect("the broker is down: the transaction must fail");
    assert_eq!((failed.acked, failed.failed, failed.transaction), (0, 1, TxnEnd::None), "{e}");
    // The message timed out, then the abort could not reach the coordinator: its own deadline is timeout.ms too,
    // and the sample reports the abort's failure (the reason the next samples begin no transaction).
    assert_eq!(e.code.as_str(), "TXN_TIMED_OUT", "{e}");
    assert!(e.message.starts_with("aborting the failed transaction got no answer"), "{e}");
    assert!(failed.elapsed < Duration::from_millis(1000 + 1200 + 1000 + 1500), "{:?}", failed.elapsed);
    // While the broker is down, a new producer cannot start: the samples say why, each within its deadline.
    let waiting = p.send(SampleInput::default());
    let e = waiting.error.as_ref().expect("no coordinator: no transaction can begin");
    assert!(
        e.message.starts_with("no transaction begun: the previous, failed one is not aborted yet"),
        "{}: {}",
        e.code.as_str(),
        e.message
    );

    cluster.broker_up(1).unwrap();
    let back = Instant::now();
    let mut outcomes = Vec::new();
    while outcomes.iter().filter(|o| ended_as(o, TxnEnd::Committed)).count() < 3 {
        assert!(back.elapsed() < Duration::from_secs(30), "no commit 30 s after the broker came back: {outcomes:?}");
        outcomes.push(p.send(SampleInput::default()));
    }
    // Once a transaction began again, every later sample succeeds.
    let first_ok = outcomes.iter().position(|o| o.error.is_none()).unwrap();
    assert!(outcomes[first_ok..].iter().all(|o| o.error.is_none()), "{outcomes:?}");
    p.close(Duration::from_secs(5));
}

#[test]
fn a_test_ending_after_a_failed_abort_closes_within_its_deadline() {
    let cluster = cluster();
    let mut p = transactional(&cluster, "mock-txn-close");
    let failed = fail_a_transaction(&cluster, &mut p);
    assert_eq!(failed.error.as_ref().map(|e| e.code.as_str()), Some("TXN_TIMED_OUT"), "{failed:?}");
    // The broker is back when the test ends: the close lets a new producer with the same transactional.id end
    // the failed transaction (instead of the coordinator, after transaction.timeout.ms), and reports the figures.
    cluster.broker_up(1).unwrap();
    let started = Instant::now();
    let report = p.close(Duration::from_secs(5));
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(report.starts_with("closed: 3 acked, 1 failed"), "{report}");
}

#[test]
fn a_commit_without_an_answer_is_waited_on_not_aborted() {
    let cluster = split_cluster("mock-txn-slow");
    let mut p = transactional(&cluster, "mock-txn-slow");
    let first = p.send(SampleInput::default());
    assert!(ended_as(&first, TxnEnd::Open), "{first:?}");
    // The partition is registered: the second sample's message needs only its leader, the commit the
    // coordinator, which now answers after 2.5 s, longer than timeout.ms (1 s).
    cluster.broker_round_trip_time(2, Duration::from_millis(2500)).unwrap();
    let slow = p.send(SampleInput::default());
    assert!(ended_as(&slow, TxnEnd::Committed), "the commit must wait for the coordinator: {slow:?}");
    assert!(slow.elapsed >= Duration::from_millis(2000), "the sample's time is the commit's wait: {:?}", slow.elapsed);
    cluster.broker_round_trip_time(2, Duration::ZERO).unwrap();
    for end in [TxnEnd::Open, TxnEnd::Committed] {
        let o = p.send(SampleInput::default());
        assert!(ended_as(&o, end), "{end:?} expected: {o:?}");
    }
    let report = p.close(Duration::from_secs(5));
    assert!(report.starts_with("closed: 4 acked, 0 failed"), "{report}");
}

#[test]
fn a_commit_unanswered_past_the_transaction_timeout_is_in_doubt() {
    let cluster = split_cluster("mock-txn-doubt");
    let run = Run::new();
    let more = [("extra.properties", "transaction.timeout.ms=1500")];
    let mut p = transactional_with(&cluster, "mock-txn-doubt", &more, &run);
    let first = p.send(SampleInput::default());
    assert!(ended_as(&first, TxnEnd::Open), "{first:?}");
    cluster.broker_down(2).unwrap();
    let started = Instant::now();
    let doubt = p.send(SampleInput::default());
    let e = doubt.error.as_ref().expect("no coordinator: the commit cannot be confirmed");
    assert_eq!((e.code.as_str(), doubt.acked, doubt.failed), ("TXN_TIMED_OUT", 0, 1), "{e}");
    assert!(
        e.message.contains("transaction.timeout.ms (1500 ms") && e.message.contains("its outcome is unknown"),
        "{e}"
    );
    assert!(started.elapsed() < Duration::from_millis(1500 + 1500), "{:?}", started.elapsed());
    cluster.broker_up(2).unwrap();
    let back = Instant::now();
    while !ended_as(&p.send(SampleInput::default()), TxnEnd::Committed) {
        assert!(back.elapsed() < Duration::from_secs(30), "no commit 30 s after the coordinator came back");
    }
    p.close(Duration::from_secs(5));
    let dir = std::env::temp_dir().join(format!("txn-doubt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("summary.json");
    let text = run.producer_report(Some(path.to_str().unwrap())).unwrap().expect("a report");
    assert!(text.contains("1 in doubt (2 records"), "{text}");
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let t = &summary["transactions"];
    assert_eq!(
        (t["in_doubt"].as_u64(), t["records_in_doubt"].as_u64(), t["failed"].as_u64()),
        (Some(1), Some(2), Some(0)),
        "{t}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
