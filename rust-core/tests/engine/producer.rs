//! The producer engine against the real broker: acknowledgements, batches, failures with their codes.

use std::time::{Duration, Instant};

use crate::common::{self, new_topic, open_producer, send_interrupted_after, settings, total_messages};
use kafka_native::producer::ProducerHandle;

#[test]
fn one_message_is_acknowledged_with_partition_and_offset() {
    require_broker!();
    let topic = new_topic("one", 3);
    let mut p = open_producer(&topic, &[("record.size", "200"), ("partition", "2")]);
    let first = p.send(None);
    assert_eq!((first.sent, first.acked, first.failed), (1, 1, 0), "{first:?}");
    assert_eq!((first.partition, first.offset), (2, 0));
    assert_eq!(first.bytes, 200);
    assert!(first.error.is_none());
    let second = p.send(None);
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
        let o = p.send(None);
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
                let acked: u32 = (0..20).map(|_| p.send(None).acked).sum();
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
    let o = p.send(None);
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
    let o = p.send(None);
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
    p.send(None);
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
    assert_eq!(p.send(None).acked, 1);
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
    assert_eq!(p.send(None).acked, 1);
    p.close(Duration::from_secs(5));
    let offsets =
        kafka_native::client::admin::end_offsets(&common::connection(), &topic, Duration::from_secs(10)).unwrap();
    assert_eq!(offsets.len(), 5);
    assert_eq!(offsets.iter().sum::<i64>(), 1);
}
