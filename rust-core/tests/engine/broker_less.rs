//! The broker-less tier: the producer's deadlines, pre-flight and error mapping against librdkafka's mock cluster
//! (`rdkafka::mocking`), so they run with plain `cargo test` and no broker.

use std::time::Duration;

use kafka_native::producer::settings::parse;
use kafka_native::producer::{ProducerHandle, SampleInput};
use kafka_native::report::Run;
use rdkafka::mocking::MockCluster;
use rdkafka::producer::DefaultProducerContext;
use rdkafka::types::{RDKafkaApiKey, RDKafkaRespErr};

fn cluster(topic: &str, partitions: i32) -> MockCluster<'static, DefaultProducerContext> {
    let cluster = MockCluster::new(1).expect("librdkafka's mock cluster starts");
    cluster.create_topic(topic, partitions, 1).expect("the mock cluster creates topics");
    cluster
}

fn open(
    cluster: &MockCluster<'static, DefaultProducerContext>,
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
    let summary =
        run.judgement.judge(&kafka_native::judgement::Request { spec: "retries>=3".into(), ..Default::default() });
    assert_eq!(summary.failed, 0, "{:?}", summary.text);
}
