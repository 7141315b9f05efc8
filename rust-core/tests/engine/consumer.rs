//! The consumer engine and the lag monitor against the real broker: exactly-once consumption by a group, static
//! assignment without rebalances, end-to-end latency, the sequence check, the lag verdict.

use kafka_native::error::Code;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::common::{self, bootstrap, consumer_settings, new_topic, open_consumer, open_producer, pairs, send_all};

use kafka_native::consumer::{ConsumerHandle, PollOutcome};
use kafka_native::lag::LagMonitor;
use kafka_native::lag::{parse_lag, LagSettings};
use kafka_native::producer::SampleInput;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::mocking::MockCoordinator;
use rdkafka::producer::DefaultProducerContext;
use rdkafka::producer::{BaseRecord, Producer, ThreadedProducer};
use rdkafka::ClientConfig;

fn group(name: &str) -> String {
    format!("rust-group-{name}-{}-{}", std::process::id(), fastrand::u32(..))
}

fn lag_settings(topic: &str, group: &str, extra: &[(&str, &str)]) -> LagSettings {
    parse_lag(&pairs(topic, group, extra)).unwrap_or_else(|e| panic!("bad lag settings: {e}"))
}

/// Produces `samples` × `per_sample` messages with send-time and audit headers; returns the acked count.
fn produce(topic: &str, samples: u32, per_sample: u32) -> u64 {
    let per = per_sample.to_string();
    let p = open_producer(
        topic,
        &[
            ("messages.per.sample", &per),
            ("record.size", "100"),
            ("key.mode", "sequence"),
            ("stamp.time", "true"),
            ("audit", "true"),
        ],
    );
    send_all(p, samples)
}

/// A fresh topic `c-<name>` of `partitions` holding `samples` × `per_sample` messages from [`produce`], a fresh
/// group, and the number of messages acknowledged.
fn filled_topic(name: &str, partitions: i32, samples: u32, per_sample: u32) -> (String, String, u64) {
    let topic = new_topic(&format!("c-{name}"), partitions);
    let acked = produce(&topic, samples, per_sample);
    (topic, group(name), acked)
}

/// The outcomes of a consumer of `group` on `topic` with `extra` that polled until `expected` records arrived (at
/// most 10 s), then closed.
fn consumed(topic: &str, group: &str, extra: &[(&str, &str)], expected: u64) -> Vec<PollOutcome> {
    let mut c = open_consumer(topic, group, extra);
    let outcomes = consume(&mut c, expected, Duration::from_secs(10));
    c.close();
    outcomes
}

/// The first failure among the polls' outcomes (the test expects one).
fn first_error(outcomes: &[PollOutcome]) -> kafka_native::error::EngineError {
    outcomes.iter().find_map(|o| o.error.clone()).unwrap_or_else(|| panic!("no poll failed: {outcomes:?}"))
}

/// Polls until `expected` records arrived in total or `limit` passed; returns the outcomes.
fn consume(c: &mut ConsumerHandle, expected: u64, limit: Duration) -> Vec<PollOutcome> {
    let until = Instant::now() + limit;
    let mut outcomes = Vec::new();
    let mut total = 0u64;
    while total < expected && Instant::now() < until {
        let o = c.poll();
        total += o.records as u64;
        outcomes.push(o);
    }
    outcomes
}

fn records(outcomes: &[PollOutcome]) -> u64 {
    outcomes.iter().map(|o| o.records as u64).sum()
}

#[test]
fn every_produced_message_is_consumed_exactly_once_by_the_group() {
    require_broker!();
    let (topic, group, acked) = filled_topic("once", 4, 10, 200);
    assert_eq!(acked, 2000);

    let extra = [("commit", "sync"), ("check.sequence", "true"), ("max.records", "300"), ("thread.count", "2")];
    let mut handles: Vec<ConsumerHandle> = (1..=2)
        .map(|n| {
            let mut e = extra.to_vec();
            let n = n.to_string();
            e.push(("thread.number", &n));
            open_consumer(&topic, &group, &e)
        })
        .collect();
    let mut total = 0;
    let until = Instant::now() + Duration::from_secs(30);
    while total < acked && Instant::now() < until {
        for h in &mut handles {
            let o = h.poll();
            assert!(o.error.is_none(), "{o:?}");
            assert!(o.records <= 300);
            assert_eq!(o.check_failures, 0);
            total += o.records as u64;
        }
    }
    assert_eq!(total, acked, "every acked message consumed once");
    for h in &mut handles {
        assert!(h.close().starts_with("closed: "), "close report");
    }

    // The group committed everything: a new consumer of the same group finds nothing left.
    let mut again = open_consumer(&topic, &group, &[("poll.timeout.ms", "1500")]);
    let o = again.poll();
    assert_eq!(o.records, 0, "already consumed by the group: {o:?}");
    assert!(o.error.is_none(), "EMPTY is not an error by default: {o:?}");
    again.close();
}

#[test]
fn static_assignment_of_six_partitions_to_three_threads_never_rebalances() {
    require_broker!();
    let (topic, group, acked) = filled_topic("static", 6, 6, 100);
    let ends = kafka_native::client::admin::end_offsets(&common::connection(), &topic, Duration::from_secs(5)).unwrap();
    let threads: Vec<_> = (1..=3)
        .map(|n| {
            let (topic, group) = (topic.clone(), group.clone());
            // Thread n of 3 reads partitions n-1 and n+2.
            let expected = (ends[n - 1] + ends[n + 2]) as u64;
            std::thread::spawn(move || {
                let n = n.to_string();
                let s = consumer_settings(&topic, &group, &[("thread.number", &n), ("thread.count", "3")]);
                let mut c = ConsumerHandle::open(s, &common::RUN).unwrap();
                let outcomes = consume(&mut c, expected, Duration::from_secs(20));
                // Drain a little longer: nothing more may arrive (no partition is shared).
                let extra = c.poll().records;
                let last = outcomes.last().cloned().unwrap();
                c.close();
                assert_eq!(records(&outcomes) + extra as u64, expected);
                (records(&outcomes) + extra as u64, last.rebalances, last.assigned)
            })
        })
        .collect();
    let results: Vec<(u64, u64, u32)> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    for (n, rebalances, assigned) in &results {
        assert_eq!((*rebalances, *assigned), (0, 2), "{results:?}");
        assert!(*n > 0, "keys spread the messages over every partition: {results:?}");
    }
    assert_eq!(results.iter().map(|r| r.0).sum::<u64>(), acked, "{results:?}");
}

#[test]
fn end_to_end_latency_is_positive_and_bounded() {
    require_broker!();
    let topic = new_topic("c-e2e", 1);
    let group = group("e2e");
    let mut c = open_consumer(&topic, &group, &[("poll.timeout.ms", "200")]);
    // The consumer is assigned before the messages are sent: the latency is the pipeline's, not a backlog's.
    c.poll();
    let acked = produce(&topic, 5, 10);
    let outcomes = consume(&mut c, acked, Duration::from_secs(10));
    assert_eq!(records(&outcomes), acked);
    for o in outcomes.iter().filter(|o| o.records > 0) {
        let (mean, max) = (o.e2e_mean_us.unwrap(), o.e2e_max_us.unwrap());
        assert!(mean > 0 && mean <= max, "{o:?}");
        assert!(max < 5_000_000, "more than 5 s from producer to consumer: {o:?}");
        assert!(o.bytes >= 100 * o.records as u64, "values of 100 bytes plus headers: {o:?}");
    }
    c.close();
}

#[test]
fn subscribe_mode_joins_the_group_and_counts_the_rebalance() {
    require_broker!();
    let (topic, group, acked) = filled_topic("subscribe", 2, 1, 50);
    let mut c = open_consumer(&topic, &group, &[("assignment", "subscribe")]);
    let outcomes = consume(&mut c, acked, Duration::from_secs(30));
    assert_eq!(records(&outcomes), acked);
    let last = outcomes.last().unwrap();
    assert!(last.rebalances >= 1 && last.assigned == 2, "{last:?}");
    let report = c.close();
    assert!(report.contains("1 rebalance(s)") || report.contains("rebalance(s) pausing"), "{report}");
}

#[test]
fn the_kip848_consumer_protocol_joins_reads_everything_and_counts_the_assignment() {
    require_broker!();
    let (topic, group, acked) = filled_topic("kip848", 2, 1, 50);
    let mut c = open_consumer(&topic, &group, &[("assignment", "subscribe"), ("group.protocol", "consumer")]);
    let outcomes = consume(&mut c, acked, Duration::from_secs(30));
    assert!(outcomes.iter().all(|o| o.error.is_none()), "{:?}", first_error(&outcomes));
    assert_eq!(records(&outcomes), acked);
    let last = outcomes.last().unwrap();
    assert!(last.rebalances >= 1 && last.assigned == 2, "{last:?}");
    let report = c.close();
    assert!(report.contains("rebalance"), "{report}");
}

/// Writes messages with hand-made audit headers: (pid, seq) pairs, None = no headers at all.
fn produce_raw(topic: &str, items: &[Option<(&str, u64)>]) {
    let p: ThreadedProducer<DefaultProducerContext> =
        ClientConfig::new().set("bootstrap.servers", bootstrap()).create().unwrap();
    for item in items {
        let mut r = BaseRecord::<(), [u8]>::to(topic).payload(b"x".as_slice()).partition(0);
        if let Some((pid, seq)) = item {
            let seq = seq.to_be_bytes();
            r = r.headers(
                OwnedHeaders::new()
                    .insert(Header { key: "kn.run", value: Some("run") })
                    .insert(Header { key: "kn.pid", value: Some(*pid) })
                    .insert(Header { key: "kn.seq", value: Some(&seq) }),
            );
        }
        p.send(r).map_err(|(e, _)| e).unwrap();
    }
    p.flush(Duration::from_secs(5)).unwrap();
}

#[test]
fn sequence_check_reports_duplicates_and_missing_headers() {
    require_broker!();
    let topic = new_topic("c-seq", 1);
    let group = group("seq");
    produce_raw(&topic, &[Some(("a", 0)), Some(("b", 0)), Some(("a", 1)), Some(("a", 1)), Some(("b", 2)), None]);
    let outcomes = consumed(&topic, &group, &[("check.sequence", "true")], 6);
    assert_eq!(records(&outcomes), 6);
    let failures: u32 = outcomes.iter().map(|o| o.check_failures).sum();
    assert_eq!(failures, 2, "one duplicate, one record without headers: {outcomes:?}");
    let e = first_error(&outcomes);
    assert_eq!(e.code, "SEQUENCE_ERROR");
    assert!(e.message.contains("sequence 1 after 1: a duplicate"), "{e}");
}

#[test]
fn regex_check_is_the_engines_verdict() {
    require_broker!();
    let topic = new_topic("c-values", 1);
    produce_raw(&topic, &[None, None]);
    let outcomes = consumed(&topic, &group("values"), &[("check.regex", "^x$")], 2);
    assert!(outcomes.iter().all(|o| o.error.is_none()), "{outcomes:?}");
    let e = first_error(&consumed(&topic, &group("mismatch"), &[("check.regex", "y")], 2));
    assert_eq!(e.code, "CONTENT_MISMATCH");
    assert!(e.message.contains("do not contain a match of check.regex 'y'; the first: 'x'"), "{e}");
}

#[test]
fn missing_topic_and_unknown_partition_are_clear_errors() {
    require_broker!();
    let s = consumer_settings("no-such-topic-kafka-native", &group("missing"), &[("timeout.ms", "1000")]);
    let e = ConsumerHandle::open(s, &common::RUN).err().unwrap();
    assert_eq!(e.code, "UNKNOWN_TOPIC_OR_PART");
    assert!(e.message.contains("topic 'no-such-topic-kafka-native' does not exist"), "{e}");

    let topic = new_topic("c-partition", 2);
    let e = ConsumerHandle::open(consumer_settings(&topic, &group("p"), &[("assignment", "0,5")]), &common::RUN)
        .err()
        .unwrap();
    assert!(e.message.contains("partition 5 does not exist"), "{e}");
}

#[test]
fn empty_poll_waits_the_timeout_and_interrupt_ends_it_early() {
    require_broker!();
    let topic = new_topic("c-empty", 1);
    let mut c = open_consumer(&topic, &group("empty"), &[("poll.timeout.ms", "500"), ("fail.on.empty", "true")]);
    let o = c.poll();
    assert_eq!(o.error.as_ref().map(|e| e.code.as_str()), Some("EMPTY"), "{o:?}");
    assert!(o.elapsed >= Duration::from_millis(490), "{o:?}");

    let mut c = open_consumer(&topic, &group("interrupt"), &[("poll.timeout.ms", "20000")]);
    let flag = c.interrupter();
    let waker = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, Ordering::Release);
    });
    let start = Instant::now();
    let o = c.poll();
    waker.join().unwrap();
    assert!(start.elapsed() < Duration::from_secs(2), "took {:?}", start.elapsed());
    assert_eq!(o.error.unwrap().code, "INTERRUPTED");

    // A stop that arrives between two samples is not lost: the next poll ends at once instead of waiting out
    // poll.timeout.ms (the flag used to be cleared at the start of each poll).
    c.interrupter().store(true, Ordering::Release);
    let start = Instant::now();
    let o = c.poll();
    assert!(start.elapsed() < Duration::from_secs(2), "took {:?}", start.elapsed());
    assert_eq!(o.error.map(|e| e.code), Some("INTERRUPTED".to_string()));
    // Used up by the sample it ended: the following poll waits again (an empty topic, so until its timeout).
    c.close();
}

#[test]
fn lag_is_end_minus_committed_per_partition() {
    require_broker!();
    let (topic, group, acked) = filled_topic("lag", 2, 4, 50);
    assert_eq!(acked, 200);

    let mut monitor = LagMonitor::open(lag_settings(&topic, &group, &[])).unwrap();
    let mut e = monitor.sample().error.unwrap();
    for _ in 0..2 {
        if e.code == Code::GroupNotFound {
            break;
        }
        // A loaded broker may answer a first group lookup with a transient error: that sample fails, the next reads.
        eprintln!("transient lag error, retrying: {e}");
        e = monitor.sample().error.unwrap();
    }
    assert_eq!(e.code, Code::GroupNotFound, "{e}");
    assert!(e.message.contains(&format!("consumer group '{group}' does not exist")), "{e}");
    let e = LagMonitor::open(lag_settings("no-such-topic-kafka-native", &group, &[])).unwrap().sample().error.unwrap();
    assert_eq!(e.code, "UNKNOWN_TOPIC_OR_PART", "{e}");

    // Consume one partition completely and commit: its lag is 0, the other's is all of it.
    let mut c = open_consumer(&topic, &group, &[("assignment", "0"), ("commit", "sync")]);
    let ends = kafka_native::client::admin::end_offsets(&common::connection(), &topic, Duration::from_secs(5)).unwrap();
    consume(&mut c, ends[0] as u64, Duration::from_secs(10));
    c.close();
    let mut m = LagMonitor::open(lag_settings(&topic, &group, &[])).unwrap();
    let o = m.sample();
    assert!(o.error.is_none(), "{o:?}");
    assert_eq!(o.partitions[0].lag, 0, "{o:?}");
    assert_eq!(o.partitions[0].committed, Some(ends[0]));
    assert_eq!((o.partitions[1].lag, o.partitions[1].committed), (ends[1], None));
    assert_eq!(o.total, ends[1]);
    assert_eq!(o.partitions_text(), format!("p0=0 p1={}(no commit)", ends[1]));
}

#[test]
fn lag_verdict_fails_when_consumers_fall_behind_and_passes_when_they_keep_up() {
    require_broker!();
    let topic = new_topic("c-verdict", 1);
    let group = group("verdict");
    let mut producer = open_producer(&topic, &[("messages.per.sample", "100"), ("record.size", "10")]);
    let mut consumer =
        open_consumer(&topic, &group, &[("commit", "sync"), ("max.records", "10"), ("poll.timeout.ms", "200")]);
    let mut monitor =
        LagMonitor::open(lag_settings(&topic, &group, &[("lag.windows", "3"), ("lag.tolerance", "20")])).unwrap();

    // Throttled: 100 produced, at most 10 consumed per round.
    let mut verdicts = Vec::new();
    for _ in 0..5 {
        assert_eq!(producer.send(SampleInput::default()).acked, 100);
        consumer.poll();
        verdicts.push(monitor.sample());
    }
    let failed: Vec<_> = verdicts.iter().filter_map(|o| o.error.as_ref()).collect();
    assert!(!failed.is_empty() && failed.iter().all(|e| e.code == Code::LagGrowing), "{verdicts:?}");
    assert!(verdicts[0].error.is_none() && verdicts[3].error.is_some(), "{verdicts:?}");

    // Keeping up: everything produced is consumed before the next sample.
    let mut keep_up =
        open_consumer(&topic, &group, &[("commit", "sync"), ("max.records", "5000"), ("poll.timeout.ms", "500")]);
    for round in 0..5 {
        assert_eq!(producer.send(SampleInput::default()).acked, 100);
        let end: i64 =
            kafka_native::client::admin::end_offsets(&common::connection(), &topic, Duration::from_secs(5)).unwrap()[0];
        let until = Instant::now() + Duration::from_secs(10);
        while monitor.sample().total > 0 && Instant::now() < until {
            keep_up.poll();
        }
        let o = monitor.sample();
        assert!(o.error.is_none(), "round {round}: {o:?}");
        assert_eq!((o.total, o.partitions[0].committed), (0, Some(end)), "round {round}: {o:?}");
    }
    consumer.close();
    keep_up.close();
    producer.close(Duration::from_secs(5));
}

/// A consumer with `extra` on librdkafka's mock cluster (no broker needed), reporting to `run`.
fn mock_consumer(
    cluster: &rdkafka::mocking::MockCluster<'static, DefaultProducerContext>,
    topic: &str,
    run: &std::sync::Arc<kafka_native::run::report::Run>,
    group: &str,
    extra: &[(&str, &str)],
) -> ConsumerHandle {
    let mut pairs = vec![
        ("bootstrap.servers".to_string(), cluster.bootstrap_servers()),
        ("topic".to_string(), topic.to_string()),
        ("group.id".to_string(), group.to_string()),
    ];
    pairs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let settings = kafka_native::consumer::settings::parse_consumer(&pairs).unwrap();
    ConsumerHandle::open(settings, run).unwrap_or_else(|e| panic!("cannot open the consumer: {e}"))
}

/// `n` records into partition 0 of `topic` on the mock cluster, each in a batch of its own (so that a consumer
/// fetching one batch at a time cannot have them all before the leader goes away).
fn mock_produce(cluster: &rdkafka::mocking::MockCluster<'static, DefaultProducerContext>, topic: &str, n: usize) {
    let producer: rdkafka::producer::BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap_servers())
        .set("linger.ms", "0")
        .create()
        .unwrap();
    for i in 0..n {
        let value = format!("record-{i}");
        producer.send(BaseRecord::<str, str>::to(topic).payload(&value).partition(0)).unwrap();
        producer.flush(Duration::from_secs(5)).unwrap();
    }
}

/// Reads at most one small batch per fetch: the consumer is slow to get the records. Without a short
/// fetch.queue.backoff.ms librdkafka waits its default 1 s after each fetch that fills the (1-record) queue, and the
/// 40 records take longer than the test waits.
const ONE_BATCH_AT_A_TIME: &[(&str, &str)] = &[
    ("queued.min.messages", "1"),
    ("fetch.message.max.bytes", "1"),
    ("fetch.wait.max.ms", "10"),
    ("fetch.queue.backoff.ms", "10"),
];

#[test]
fn an_empty_poll_while_the_leader_is_down_does_not_stop_the_thread_and_every_record_is_read() {
    let cluster = rdkafka::mocking::MockCluster::new(3).expect("librdkafka's mock cluster starts");
    let topic = "failover";
    cluster.create_topic(topic, 1, 3).unwrap();
    cluster.partition_leader(topic, 0, Some(1)).unwrap();
    mock_produce(&cluster, topic, 40);
    let run = kafka_native::run::report::Run::new();
    let mut extra = vec![("max.records", "2"), ("poll.timeout.ms", "300"), ("stop.on.empty", "true")];
    extra.extend_from_slice(ONE_BATCH_AT_A_TIME);
    // The group's coordinator is not the broker that goes down: a coordinator move would stall the group for the
    // session timeout (45 s), which is another test's subject.
    let group = group("mock");
    cluster.coordinator(MockCoordinator::Group(group.clone()), 3).unwrap();
    let mut c = mock_consumer(&cluster, topic, &run, &group, &extra);
    let mut read = 0;
    while read < 4 {
        let o = c.poll();
        assert!(o.error.is_none() && !o.stop_thread, "{o:?}");
        read += o.records;
    }
    // The leader goes away: the polls come back empty, librdkafka's connection errors are not failed samples, and
    // an empty poll is not the end of the partition.
    cluster.broker_down(1).unwrap();
    let down = Instant::now();
    let mut while_down = Vec::new();
    while down.elapsed() < Duration::from_secs(3) {
        while_down.push(c.poll());
    }
    assert!(while_down.iter().all(|o| o.error.is_none() && !o.stop_thread), "{while_down:?}");
    read += while_down.iter().map(|o| o.records).sum::<u32>();
    assert!(read < 40, "the consumer had every record before the leader went down: the test proves nothing");
    // Leadership moves to broker 2: the thread reads on and stops once the partition is read to its end.
    cluster.partition_leader(topic, 0, Some(2)).unwrap();
    let moved = Instant::now();
    let stopped = loop {
        let o = c.poll();
        assert!(o.error.is_none(), "{o:?}");
        read += o.records;
        if o.stop_thread || moved.elapsed() > Duration::from_secs(30) {
            break o.stop_thread;
        }
    };
    assert!(stopped, "the thread never stopped: {read} of 40 read");
    assert_eq!(read, 40);
    c.close();
    let path = std::env::temp_dir().join(format!("kn-consumer-failover-{}.json", std::process::id()));
    run.consumer_report(Some(path.to_str().unwrap())).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!((json["records"].as_u64(), json["failed_samples"].as_u64()), (Some(40), Some(0)), "{json}");
    assert_eq!(json["unread_records"], 0, "{json}");
    assert_eq!(
        json["partitions_at_end"],
        serde_json::json!([{"topic": topic, "partition": 0, "read_offset": 40, "end_offset": 40, "left": 0}])
    );
}

#[test]
fn a_thread_that_ends_short_of_the_end_names_the_partition_with_its_offsets() {
    let cluster = rdkafka::mocking::MockCluster::new(1).expect("librdkafka's mock cluster starts");
    let topic = "short";
    cluster.create_topic(topic, 1, 1).unwrap();
    mock_produce(&cluster, topic, 10);
    let run = kafka_native::run::report::Run::new();
    let mut c =
        mock_consumer(&cluster, topic, &run, &group("mock"), &[("max.records", "3"), ("poll.timeout.ms", "2000")]);
    let mut read = 0;
    while read == 0 {
        read = c.poll().records;
    }
    c.close();
    let path = std::env::temp_dir().join(format!("kn-consumer-short-{}.json", std::process::id()));
    let report = run.consumer_report(Some(path.to_str().unwrap())).unwrap().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).ok();
    let left = 10 - read as u64;
    assert_eq!(
        json["unread"],
        serde_json::json!([{"topic": topic, "partition": 0, "read_offset": read, "end_offset": 10, "left": left}])
    );
    assert_eq!(
        (json["unread_records"].as_u64(), json["unread_partitions"].clone()),
        (Some(left), serde_json::json!([0]))
    );
    assert!(
        report.contains(&format!("1 partition(s) not read to their end: short[0] read to {read} of 10 ({left} left)")),
        "{report}"
    );
}
