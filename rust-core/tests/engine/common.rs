//! Helpers for the integration tier: tests that talk to the real broker started by `scripts/kafka start`.
//!
//! Every such test starts with [`require_broker!`]. When no broker answers, in CI (`CI=true`, as scripts/test sets
//! it) the test fails; elsewhere it prints why it is skipped (straight to the terminal, past the test harness's
//! output capture) and returns, and the run ends with the number of tests skipped, after the harness's counts.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Once};

use kafka_native::client::admin;
use kafka_native::consumer::settings::{parse_consumer, ConsumerSettings};
use kafka_native::consumer::ConsumerHandle;
use kafka_native::producer::settings as config;
use kafka_native::producer::{ProducerHandle, SampleInput, SampleOutcome};
use kafka_native::run::report::Run;

/// The run shared by the tests that do not read its totals (as the handles of one JMeter test share theirs). A test
/// that reads a run's report opens its handles on a [`Run`] of its own: the tests of this binary run in parallel.
pub static RUN: LazyLock<Arc<Run>> = LazyLock::new(Run::new);

/// Connection properties for the admin helpers: the local broker, no security.
pub fn connection() -> std::collections::BTreeMap<String, String> {
    std::collections::BTreeMap::from([("bootstrap.servers".to_string(), bootstrap())])
}

pub fn bootstrap() -> String {
    std::env::var("KAFKA_BOOTSTRAP").unwrap_or_else(|_| "127.0.0.1:9092".to_string())
}

/// A fresh topic for one test, so tests can run in parallel and offsets start at zero.
pub fn new_topic(name: &str, partitions: i32) -> String {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let topic = format!("rust-{name}-{nanos}");
    let created =
        admin::create_topic(&connection(), &topic, partitions, 1, Duration::from_secs(10)).unwrap_or_else(|e| {
            panic!("cannot create topic {topic} on {} (is `scripts/kafka start` running?): {e}", bootstrap())
        });
    assert!(created);
    topic
}

pub fn settings(topic: &str, extra: &[(&str, &str)]) -> config::ProducerSettings {
    let mut pairs = vec![("bootstrap.servers".to_string(), bootstrap()), ("topic".to_string(), topic.to_string())];
    pairs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    config::parse(&pairs).unwrap_or_else(|e| panic!("bad test settings: {e}"))
}

/// A producer on `topic` with [`settings`], reporting to the shared [`RUN`].
pub fn open_producer(topic: &str, extra: &[(&str, &str)]) -> ProducerHandle {
    open_producer_in(&RUN, topic, extra)
}

/// A producer on `topic` with [`settings`], reporting to `run`.
pub fn open_producer_in(run: &Arc<Run>, topic: &str, extra: &[(&str, &str)]) -> ProducerHandle {
    ProducerHandle::open(settings(topic, extra), run).unwrap_or_else(|e| panic!("cannot open the producer: {e}"))
}

/// Sends `samples` samples on `p`, each expected fully acknowledged, then closes it; returns the messages acked.
pub fn send_all(mut p: ProducerHandle, samples: u32) -> u64 {
    let acked = (0..samples).map(|_| p.send(SampleInput::default()).acked as u64).sum();
    p.close(Duration::from_secs(5));
    acked
}

/// One sample on `p` while another thread interrupts it (as a JMeter stop does) `after` its start; returns its
/// outcome and how long it took.
pub fn send_interrupted_after(p: &mut ProducerHandle, after: Duration) -> (SampleOutcome, Duration) {
    let slot = p.slot();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(after);
        slot.interrupt();
    });
    let start = Instant::now();
    let o = p.send(SampleInput::default());
    stopper.join().unwrap();
    (o, start.elapsed())
}

/// The settings of a client of `group` on `topic` at the test broker, then `extra`, as the Java side passes them.
pub fn pairs(topic: &str, group: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v = vec![
        ("bootstrap.servers".to_string(), bootstrap()),
        ("topic".to_string(), topic.to_string()),
        ("group.id".to_string(), group.to_string()),
    ];
    v.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    v
}

pub fn consumer_settings(topic: &str, group: &str, extra: &[(&str, &str)]) -> ConsumerSettings {
    parse_consumer(&pairs(topic, group, extra)).unwrap_or_else(|e| panic!("bad consumer settings: {e}"))
}

/// A consumer of `group` on `topic` with the `extra` settings, reporting to the shared [`RUN`].
pub fn open_consumer(topic: &str, group: &str, extra: &[(&str, &str)]) -> ConsumerHandle {
    open_consumer_in(&RUN, topic, group, extra)
}

/// A consumer of `group` on `topic` with the `extra` settings, reporting to `run`.
pub fn open_consumer_in(run: &Arc<Run>, topic: &str, group: &str, extra: &[(&str, &str)]) -> ConsumerHandle {
    ConsumerHandle::open(consumer_settings(topic, group, extra), run)
        .unwrap_or_else(|e| panic!("cannot open the consumer: {e}"))
}

pub fn total_messages(topic: &str) -> i64 {
    admin::end_offsets(&connection(), topic, Duration::from_secs(10)).unwrap().iter().sum()
}

/// True when something accepts connections at the bootstrap address (checked once per process).
pub fn broker_answers() -> bool {
    static ANSWERS: LazyLock<bool> = LazyLock::new(|| {
        use std::net::ToSocketAddrs;
        let Some(addr) = bootstrap().to_socket_addrs().ok().and_then(|mut a| a.next()) else { return false };
        std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok()
    });
    *ANSWERS
}

/// True in CI (`CI=true` or `CI=1`): a test that needs a broker fails without one instead of skipping.
pub fn skipping_fails() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Tests skipped so far, for the line printed when the test binary exits.
static SKIPPED: AtomicUsize = AtomicUsize::new(0);

/// Runs at the process's exit, after the harness's "test result" line: its counts include the skipped tests among
/// the passed ones, this line says how many.
extern "C" fn report_skips_at_exit() {
    use std::io::Write;
    let line = format!(
        "SKIPPED {} real-broker test(s) of the passed ones above: no broker answered on {} (start one with \
         scripts/kafka start, or set KAFKA_BOOTSTRAP; with CI=true they fail instead)\n",
        SKIPPED.load(Ordering::Relaxed),
        bootstrap()
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Test `name` needs a broker and none answers: fails it in CI, else prints its skip line on the terminal (not
/// captured by the harness) and counts it.
pub fn skip_or_fail(name: &str) {
    use std::io::Write;
    if skipping_fails() {
        panic!(
            "{name}: no broker answered on {} and CI is set, so the test fails instead of skipping (start one with \
             scripts/kafka start, or set KAFKA_BOOTSTRAP)",
            bootstrap()
        );
    }
    static AT_EXIT: Once = Once::new();
    // SAFETY: registers a plain function without arguments; it only formats and writes to stderr.
    AT_EXIT.call_once(|| unsafe {
        libc::atexit(report_skips_at_exit);
    });
    SKIPPED.fetch_add(1, Ordering::Relaxed);
    let line = format!(
        "SKIPPED {name}: no broker answered on {} (start one with scripts/kafka start, or set KAFKA_BOOTSTRAP)\n",
        bootstrap()
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Returns from the test (reported as skipped, with the reason) when no broker answers; fails it in CI.
#[macro_export]
macro_rules! require_broker {
    () => {
        if !$crate::common::broker_answers() {
            fn here() {}
            let name = std::any::type_name_of_val(&here);
            $crate::common::skip_or_fail(name.trim_end_matches("::here"));
            return;
        }
    };
}
