//! The producer engine against the real broker: acknowledgements, batches, failures with their codes.

use std::time::{Duration, Instant};

use crate::common::{self, new_topic, open_producer, send_interrupted_after, settings, total_messages};
use kafka_native::producer::{ProducerHandle, SampleInput};

#[test]
fn one_message_is_acknowledged_with_partition_and_offset() {
    require_broker!();
    let topic = new_topic("one", 3);
    let mut p = open_producer(&topic, &[("record.size", "200"), ("partition", "2")]);
    let first = p.send(SampleInput::default());
    assert_eq!((first.sent, first.acked, first.failed), (1, 1, 0), "{first:?}");
    assert_eq!((first.partition, first.offset), (2, 0));
    assert_eq!(first.bytes, 200);
    assert!(first.error.is_none());
    let second = p.send(SampleInput::default());
    assert_eq!((second.partition, second.offset), (2, 1));
    assert!(p.close(Duration::from_secs(5)).starts_with("closed: 2 acked, 0 failed"));
    assert_eq!(total_messages(&topic), 2);
}

#[test]
fn a_batch_waits_for_every_acknowledgement() {
    require_broker!();
    let topic = new_topic("batch", 4);
    let mut p = open_producer(
        &topic,
        &[("messages.per.sample", "500"), ("key.mode", "sequence"), ("linger.ms", "5"), ("record.size", "100")],
    );
    for i in 0..4 {
        let o = p.send(SampleInput::default());
        assert_eq!((o.sent, o.acked, o.failed), (500, 500, 0), "{o:?}");
        // Keys count on across samples: "0".."499" (1 to 3 digits), then "500".."999", ... and 100 bytes of value.
        let key_bytes = if i == 0 { 10 + 90 * 2 + 400 * 3 } else { 500 * if i == 1 { 3 } else { 4 } };
        assert_eq!(o.bytes, 500 * 100 + key_bytes);
    }
    p.close(Duration::from_secs(5));
    assert_eq!(total_messages(&topic), 2000);
}

#[test]
fn shared_producer_serves_several_handles() {
    require_broker!();
    let topic = new_topic("shared", 2);
    let s = settings(&topic, &[("producer.scope", "test")]);
    let threads: Vec<_> = (0..3)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || {
                let mut p = ProducerHandle::open(s, &common::RUN).unwrap();
                let acked: u32 = (0..20).map(|_| p.send(SampleInput::default()).acked).sum();
                p.close(Duration::from_secs(5));
                acked
            })
        })
        .collect();
    let acked: u32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(acked, 60);
    assert_eq!(total_messages(&topic), 60);
}

/// One sample of a message too large on a fresh topic `name`: it fails with MSG_SIZE_TOO_LARGE and nothing is written.
fn refused_as_too_large(name: &str, extra: &[(&str, &str)]) {
    let topic = new_topic(name, 1);
    let mut p = open_producer(&topic, extra);
    let o = p.send(SampleInput::default());
    assert_eq!((o.acked, o.failed), (0, 1), "{o:?}");
    let e = o.error.expect("the message must be refused");
    assert_eq!(e.code, "MSG_SIZE_TOO_LARGE", "{e}");
    p.close(Duration::from_secs(5));
    assert_eq!(total_messages(&topic), 0);
}

#[test]
fn oversized_message_fails_with_msg_size_too_large() {
    require_broker!();
    refused_as_too_large("big", &[("record.size", "2000000")]);
}

#[test]
fn oversized_for_the_broker_only_is_refused_by_the_broker() {
    require_broker!();
    // The client allows 3 MB, the broker's default limit is about 1 MB: the broker itself refuses.
    refused_as_too_large("big-broker", &[("record.size", "1500000"), ("max.request.size", "3000000")]);
}

#[test]
fn missing_topic_is_refused_before_load() {
    require_broker!();
    let e = ProducerHandle::open(settings("no-such-topic-kafka-native", &[]), &common::RUN).err().unwrap();
    assert_eq!(e.code, "UNKNOWN_TOPIC_OR_PART");
    assert!(e.message.contains("topic 'no-such-topic-kafka-native' does not exist"), "{e}");
}

#[test]
fn unreachable_broker_fails_within_the_timeout() {
    require_broker!();
    let mut s = settings("t", &[("timeout.ms", "1500")]);
    s.client.insert("bootstrap.servers".into(), "127.0.0.1:1".into());
    let start = Instant::now();
    let e = ProducerHandle::open(s.clone(), &common::RUN).err().unwrap();
    assert!(start.elapsed() < Duration::from_secs(4), "took {:?}", start.elapsed());
    assert!(e.message.contains("no broker at 127.0.0.1:1 answered within 1500 ms"), "{e}");

    // Without the pre-flight check, the sample itself fails once the timeout has passed.
    s.preflight = kafka_native::producer::settings::Preflight::Off;
    let mut p = ProducerHandle::open(s, &common::RUN).unwrap();
    let start = Instant::now();
    let o = p.send(SampleInput::default());
    assert!(start.elapsed() < Duration::from_secs(4), "took {:?}", start.elapsed());
    assert_eq!(o.error.unwrap().code, "MSG_TIMED_OUT");
    assert_eq!(o.failed, 1);
    p.close(Duration::from_secs(1));
}

#[test]
fn interrupt_wakes_a_waiting_send() {
    require_broker!();
    let mut s = settings("t", &[("timeout.ms", "20000")]);
    s.client.insert("bootstrap.servers".into(), "127.0.0.1:1".into());
    s.preflight = kafka_native::producer::settings::Preflight::Off;
    let mut p = ProducerHandle::open(s, &common::RUN).unwrap();
    let (o, took) = send_interrupted_after(&mut p, Duration::from_millis(300));
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert_eq!(o.error.unwrap().code, "INTERRUPTED");
    p.close(Duration::from_millis(100));
}

#[test]
fn close_twice_is_harmless() {
    require_broker!();
    let topic = new_topic("close", 1);
    let mut p = open_producer(&topic, &[]);
    p.send(SampleInput::default());
    assert!(p.close(Duration::from_secs(5)).starts_with("closed: 1 acked"));
    assert_eq!(p.close(Duration::from_secs(5)), "already closed");
}

#[test]
fn preflight_fails_when_threads_outnumber_partitions() {
    require_broker!();
    let topic = new_topic("few", 2);
    let e = ProducerHandle::open(settings(&topic, &[("thread.count", "20"), ("preflight", "fail")]), &common::RUN)
        .err()
        .unwrap();
    assert_eq!(e.code, "TOO_FEW_PARTITIONS");
    assert!(e.message.contains("has 2 partition(s) for 20 producing threads"), "{e}");
    // warn (the default) lets the test run.
    let mut p = open_producer(&topic, &[("thread.count", "20")]);
    assert_eq!(p.send(SampleInput::default()).acked, 1);
    p.close(Duration::from_secs(5));
}

#[test]
fn topic_create_makes_the_topic_with_the_partitions_asked() {
    require_broker!();
    let topic = format!(
        "rust-create-{}",
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
    );
    let mut p =
        open_producer(&topic, &[("topic.create", "true"), ("topic.partitions", "5"), ("topic.replication", "1")]);
    assert_eq!(p.send(SampleInput::default()).acked, 1);
    p.close(Duration::from_secs(5));
    let offsets =
        kafka_native::client::admin::end_offsets(&common::connection(), &topic, Duration::from_secs(10)).unwrap();
    assert_eq!(offsets.len(), 5);
    assert_eq!(offsets.iter().sum::<i64>(), 1);
}

/// The key, headers and value JMeter evaluated for each sample (`${user}`, a CSV Data Set) reach the topic as that
/// sample's; a headers field that does not parse fails its sample; a sample that passes only a value keeps the last
/// key and headers.
#[test]
fn each_sample_sends_the_key_headers_and_value_it_was_given() {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::message::{Headers, Message};
    use rdkafka::{ClientConfig, Offset, TopicPartitionList};

    require_broker!();
    let topic = new_topic("per-sample", 1);
    let mut p =
        open_producer(&topic, &[("value.mode", "jmeter"), ("key.mode", "fixed"), ("key", "k0"), ("headers", "h=0")]);
    for i in 0..3 {
        let (key, headers, value) = (format!("k{i}"), format!("h={i};n=x"), format!("v{i}"));
        let o = p.send(SampleInput { value: Some(value.as_bytes()), key: Some(&key), headers: Some(&headers) });
        assert_eq!((o.acked, o.error), (1, None));
    }
    let bad = p.send(SampleInput { value: Some(b"v"), key: Some("k"), headers: Some("no-equals-sign") });
    let e = bad.error.expect("headers that do not parse fail the sample");
    assert_eq!((e.code.as_str(), bad.failed), ("CONFIG_ERROR", 1), "{e}");
    assert!(e.message.starts_with("headers: 'no-equals-sign' is not of the form key=value"), "{e}");
    assert_eq!(p.send(SampleInput::value(b"v3")).acked, 1);
    p.close(Duration::from_secs(5));

    let c: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", common::bootstrap())
        .set("group.id", format!("{topic}-reader"))
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(&topic, 0, Offset::Beginning).unwrap();
    c.assign(&tpl).unwrap();
    let mut seen = Vec::new();
    let until = Instant::now() + Duration::from_secs(10);
    while seen.len() < 4 && Instant::now() < until {
        if let Some(m) = c.poll(Duration::from_millis(200)) {
            let m = m.unwrap();
            let text = |b: Option<&[u8]>| String::from_utf8_lossy(b.unwrap_or_default()).into_owned();
            let headers = m
                .headers()
                .map_or(Vec::new(), |h| h.iter().map(|h| format!("{}={}", h.key, text(h.value))).collect::<Vec<_>>());
            seen.push((text(m.key()), headers.join(";"), text(m.payload())));
        }
    }
    let want = |k: &str, h: &str, v: &str| (k.to_string(), h.to_string(), v.to_string());
    assert_eq!(
        seen,
        [
            want("k0", "h=0;n=x", "v0"),
            want("k1", "h=1;n=x", "v1"),
            want("k2", "h=2;n=x", "v2"),
            want("k2", "h=2;n=x", "v3")
        ]
    );
}
