//! The librdkafka producer behind the handles: its creation with the pre-flight check (once per test and
//! configuration), the pool of producers shared by all threads with `producer.scope=test` (`producer.pool.size`), and,
//! with `producer.scope=thread`, a producer whose events the waiting JMeter thread serves itself.

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, LazyLock, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use rdkafka::bindings as rdsys;
use rdkafka::client::Client;
use rdkafka::error::KafkaError;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer, PurgeConfig, ThreadedProducer};

use super::settings::{Preflight, ProducerSettings, Scope};
use super::slot::{ProducerCtx, Ticket};
use crate::client::context::HasClientCtx;
use crate::client::metadata::{self, Fetch};
use crate::client::settings::{self, connection_properties, servers};
use crate::client::{admin, config};
use crate::error::{Code, EngineError};
use crate::run::breakdown::Knobs;
use crate::run::report::Run;

/// A message as the engine hands it to librdkafka.
pub(super) type Record<'a> = BaseRecord<'a, [u8], [u8], Box<Ticket>>;

/// A librdkafka producer. Every handle using it has already waited (bounded) for its own messages
/// and counted those that never got a verdict, so dropping it only purges what is left, without waiting.
pub(crate) struct KafkaProducer {
    inner: Inner,
    run: Arc<Run>,
    /// Prepared (pre-flight passed) and handed to handles. One whose preparation failed holds only librdkafka's
    /// own requests, which are no messages: purging them is not worth a warning (there were 200 of them, one per
    /// thread, when 200 threads met a dead broker).
    ready: bool,
}

/// Who serves librdkafka's events (delivery reports above all).
enum Inner {
    /// Shared producer: rdkafka's polling thread, which hands each report to the slot of the thread that sent it.
    Threaded(config::Created<ThreadedProducer<ProducerCtx>>),
    /// One producer per JMeter thread: that thread, while it waits, so a report costs no wake-up of a third thread.
    Served(Served),
}

/// A producer without a polling thread. librdkafka writes a byte to `wake` when its main queue goes from empty to
/// non-empty; the waiting thread sleeps on that socket and then serves the queue with non-blocking polls
/// (`BaseProducer::poll` with a timeout loops for the whole timeout, so it is only ever called with zero).
struct Served {
    queue: MainQueue,
    producer: config::Created<BaseProducer<ProducerCtx>>,
    wake: UnixStream,
    /// The end librdkafka writes to; kept open as long as the queue may write.
    _wake_tx: UnixStream,
}

/// A reference to the client's main queue (librdkafka is thread-safe; the pointer is released once, in `Drop`).
struct MainQueue(*mut rdsys::rd_kafka_queue_t);

// SAFETY: librdkafka's queues may be used from any thread; the pointer is only released in Drop.
unsafe impl Send for MainQueue {}
// SAFETY: see Send; rd_kafka_queue_length and rd_kafka_queue_io_event_enable are thread-safe.
unsafe impl Sync for MainQueue {}

impl MainQueue {
    fn len(&self) -> usize {
        // SAFETY: the queue reference is valid until Drop.
        unsafe { rdsys::rd_kafka_queue_length(self.0) }
    }
}

impl Drop for MainQueue {
    fn drop(&mut self) {
        // SAFETY: the reference was obtained from rd_kafka_queue_get_main and is released exactly once; the io
        // event is turned off first so librdkafka never writes to the socket after it is closed.
        unsafe {
            rdsys::rd_kafka_queue_io_event_enable(self.0, -1, std::ptr::null(), 0);
            rdsys::rd_kafka_queue_destroy(self.0);
        }
    }
}

impl Served {
    fn new(producer: config::Created<BaseProducer<ProducerCtx>>) -> Result<Served, EngineError> {
        let io =
            |e: std::io::Error| EngineError::new(Code::InternalError, format!("the producer's wake-up socket: {e}"));
        let (wake, tx) = UnixStream::pair().map_err(io)?;
        // librdkafka writes from its own threads and ignores a full socket: it must never block there.
        tx.set_nonblocking(true).map_err(io)?;
        wake.set_nonblocking(true).map_err(io)?;
        // SAFETY: native_ptr is valid while `producer` lives, and MainQueue (declared first) is dropped before it.
        let queue = MainQueue(unsafe { rdsys::rd_kafka_queue_get_main(producer.client().native_ptr()) });
        // SAFETY: the payload is a static byte; the fd stays open until after the io event is disabled (Drop).
        unsafe { rdsys::rd_kafka_queue_io_event_enable(queue.0, tx.as_raw_fd(), b"!".as_ptr().cast(), 1) };
        Ok(Served { queue, producer, wake, _wake_tx: tx })
    }

    /// Serves every queued event on this thread; if there was none, first sleeps until one arrives or `timeout`.
    fn serve(&self, timeout: Duration) {
        if self.queue.len() == 0 {
            let mut fd = libc::pollfd { fd: self.wake.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd; an error or timeout simply ends the wait.
            unsafe { libc::poll(&mut fd, 1, ms) };
        }
        // Wake-up bytes written while events were being served are stale now: drop them.
        let mut buf = [0u8; 64];
        while matches!(std::io::Read::read(&mut &self.wake, &mut buf), Ok(n) if n == buf.len()) {}
        while self.queue.len() > 0 {
            self.producer.poll(Duration::ZERO);
        }
    }
}

impl KafkaProducer {
    /// Hands one message to librdkafka (it comes back on a local refusal such as a full queue).
    #[allow(clippy::result_large_err)] // rdkafka's own signature: the record comes back for a retry
    pub(super) fn send<'a>(&self, record: Record<'a>) -> Result<(), (KafkaError, Record<'a>)> {
        match &self.inner {
            Inner::Threaded(p) => p.send(record),
            Inner::Served(s) => s.producer.send(record),
        }
    }

    /// Whether the threads using this producer serve its events themselves ([`KafkaProducer::serve`]).
    pub(super) fn serves_on_caller(&self) -> bool {
        matches!(self.inner, Inner::Served(_))
    }

    /// Serves this producer's queued events on the calling thread, first waiting up to `timeout` for one if there
    /// is none; does nothing for a producer whose events its polling thread serves.
    pub(super) fn serve(&self, timeout: Duration) {
        if let Inner::Served(s) = &self.inner {
            s.serve(timeout);
        }
    }

    /// Runs a transactional call (init, begin, commit, abort) on the producer; transactions need
    /// `producer.scope=thread`, whose producer the calling thread serves.
    pub(super) fn txn(
        &self,
        call: impl FnOnce(&BaseProducer<ProducerCtx>) -> rdkafka::error::KafkaResult<()>,
    ) -> rdkafka::error::KafkaResult<()> {
        match &self.inner {
            Inner::Served(s) => call(&s.producer),
            // The settings refuse transactional.id.prefix with producer.scope=test, so this is never reached.
            Inner::Threaded(_) => Err(KafkaError::Global(rdkafka::types::RDKafkaErrorCode::NotImplemented)),
        }
    }

    /// Aborts the open transaction within `timeout`. librdkafka's abort purges the transaction's outstanding
    /// messages and then waits until their delivery reports are served; on this producer only the calling thread
    /// serves them, and it is blocked in the abort, so a transaction that still had messages in flight (a sample
    /// that failed on its timeout while a broker was gone) could never abort ("Failed to flush all outstanding
    /// messages"). The purge is done first here and the reports served until none is left, then the abort is
    /// called with the rest of the time.
    pub(super) fn abort_transaction(&self, timeout: Duration) -> rdkafka::error::KafkaResult<()> {
        let Inner::Served(s) = &self.inner else {
            // The settings refuse transactional.id.prefix with producer.scope=test, so this is never reached.
            return Err(KafkaError::Global(rdkafka::types::RDKafkaErrorCode::NotImplemented));
        };
        let deadline = Instant::now() + timeout;
        if s.producer.in_flight_count() > 0 {
            s.producer.purge(PurgeConfig::default().queue().inflight());
            while s.producer.in_flight_count() > 0 {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                s.serve(left.min(Duration::from_millis(100)));
            }
        }
        let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        s.producer.abort_transaction(left)
    }

    /// A message that failed while the OAuth token endpoint is down says so ([`ProducerCtx::outage`]).
    pub(super) fn explain_unsent(&self, e: EngineError, sent: Instant) -> EngineError {
        self.client().context().outage(e, sent)
    }

    fn client(&self) -> &Client<ProducerCtx> {
        match &self.inner {
            Inner::Threaded(p) => p.client(),
            Inner::Served(s) => s.producer.client(),
        }
    }

    fn in_flight_count(&self) -> i32 {
        match &self.inner {
            Inner::Threaded(p) => p.in_flight_count(),
            Inner::Served(s) => s.producer.in_flight_count(),
        }
    }
}

impl Drop for KafkaProducer {
    fn drop(&mut self) {
        self.run.add_retries(self.client().context().client_ctx().retries());
        if let Some(b) = self.client().context().client_ctx().breakdown() {
            self.run.breakdown.merge(b);
        }
        let left = self.in_flight_count();
        if left > 0 && self.ready {
            log::warn!("{left} message(s) still in flight when the producer closed were purged (counted as UNDELIVERED_AT_CLOSE)");
        }
        if left > 0 {
            match &self.inner {
                Inner::Threaded(p) => p.purge(PurgeConfig::default().queue().inflight()),
                Inner::Served(s) => s.producer.purge(PurgeConfig::default().queue().inflight()),
            }
        }
    }
}

/// Producers shared by all threads of a test (`producer.scope=test`), by run, configuration and pool member.
static SHARED: LazyLock<Mutex<HashMap<String, Weak<KafkaProducer>>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// A shared producer's failed creation, by the same key: the threads that were waiting for it (all of a test's
/// threads start at once) get the same error at once instead of each trying again for timeout.ms and logging
/// it again. Kept for [`FAILURE_REUSE`], so that a later test (in the same JVM, the GUI) tries afresh.
static FAILED: LazyLock<Mutex<HashMap<String, (Instant, EngineError)>>> = LazyLock::new(|| Mutex::new(HashMap::new()));
const FAILURE_REUSE: Duration = Duration::from_secs(10);

/// The producer of a handle: its own, or the one shared by all handles of the run with the same configuration.
pub(crate) fn producer_for(settings: &ProducerSettings, run: &Arc<Run>) -> Result<Arc<KafkaProducer>, EngineError> {
    // The run's id, not its address: a later test in the same JVM may get the same address.
    let key = format!("{}\n{}\n{}", run.current_run().0, settings.topic, settings.sharing_key());
    if settings.scope == Scope::Thread {
        let client = match &settings.transaction {
            // Only this producer's properties carry its id: the preparation (keyed by the shared properties) stays
            // once per test.
            Some(t) => {
                let mut client = settings.client.clone();
                client.insert("transactional.id".into(), transactional_id(&t.prefix, settings.thread_number));
                std::borrow::Cow::Owned(client)
            }
            None => std::borrow::Cow::Borrowed(&settings.client),
        };
        let inner = Inner::Served(Served::new(config::create(&client, context(settings), "producer")?)?);
        let mut producer = KafkaProducer { inner, run: Arc::clone(run), ready: false };
        prepare_once(&key, &producer, settings)?;
        if let Some(t) = &settings.transaction {
            // Registers the id with its coordinator and fences any older producer with the same id.
            let id = transactional_id(&t.prefix, settings.thread_number);
            producer.txn(|p| p.init_transactions(settings.timeout)).map_err(|e| {
                super::transaction::init_failed(&e, t, &id, settings.timeout, || {
                    let connection = connection_properties(&settings.client);
                    let timeout = settings.timeout.min(Duration::from_secs(5));
                    admin::broker_setting(&connection, "transaction.max.timeout.ms", timeout)
                })
            })?;
        }
        producer.ready = true;
        return Ok(Arc::new(producer));
    }
    // The pool's member for this thread: threads are spread round-robin by their number, so each member carries
    // about threads / K of them. The pre-flight (keyed by `key`) stays once for the whole pool.
    let member_key = format!("{key}\n#{} of {}", pool_member(settings), settings.pool_size);
    // Held while creating, so that two threads opening at once do not create two producers.
    let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = shared.get(&member_key).and_then(Weak::upgrade) {
        return Ok(p);
    }
    let mut failed = FAILED.lock().unwrap_or_else(|p| p.into_inner());
    failed.retain(|_, (at, _)| at.elapsed() < FAILURE_REUSE);
    if let Some((_, e)) = failed.get(&key) {
        return Err(e.clone());
    }
    drop(failed);
    let p = create_shared(&key, settings, run).inspect_err(|e| {
        FAILED.lock().unwrap_or_else(|p| p.into_inner()).insert(key.clone(), (Instant::now(), e.clone()));
    })?;
    shared.retain(|_, w| w.strong_count() > 0);
    shared.insert(member_key, Arc::downgrade(&p));
    Ok(p)
}

/// A thread's `transactional.id`: stable across runs, so that a test started again fences its predecessor.
pub(super) fn transactional_id(prefix: &str, thread_number: u32) -> String {
    format!("{prefix}-{thread_number}")
}

/// Which of the pool's producers a thread uses: `thread.number` round-robin over `producer.pool.size`, never more
/// members than the thread group has threads (a member nobody uses would only cost a connection).
fn pool_member(settings: &ProducerSettings) -> u32 {
    let size = match settings.thread_count {
        0 => settings.pool_size,
        threads => settings.pool_size.min(threads),
    };
    settings.thread_number.saturating_sub(1) % size.max(1)
}

/// A producer's context, whose statistics also record where this configuration's send->ack time goes.
fn context(settings: &ProducerSettings) -> ProducerCtx {
    ProducerCtx::new(Knobs::new(&settings.client, settings.messages_per_sample, settings.scope == Scope::Thread))
}

/// A new shared producer, prepared (topic creation, pre-flight) before any thread uses it.
fn create_shared(key: &str, settings: &ProducerSettings, run: &Arc<Run>) -> Result<Arc<KafkaProducer>, EngineError> {
    let inner = Inner::Threaded(config::create(&settings.client, context(settings), "producer")?);
    let mut p = KafkaProducer { inner, run: Arc::clone(run), ready: false };
    prepare_once(key, &p, settings)?;
    p.ready = true;
    Ok(Arc::new(p))
}

/// Topic creation and pre-flight, once per run, topic and configuration: the first thread to open does them while
/// the others wait for its verdict, so hundreds of threads starting at once cause one metadata request, not one each
/// (at 400 threads, 400 simultaneous fetches made some time out), and those waiting report the same failure.
fn prepare_once(key: &str, producer: &KafkaProducer, settings: &ProducerSettings) -> Result<(), EngineError> {
    type Verdict = Arc<OnceLock<Result<(), EngineError>>>;
    static PREPARED: LazyLock<Mutex<HashMap<String, Verdict>>> = LazyLock::new(|| Mutex::new(HashMap::new()));
    let verdict = {
        let mut prepared = PREPARED.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(prepared.entry(key.to_string()).or_default())
    };
    let result = verdict.get_or_init(|| prepare(producer, settings)).clone();
    if result.is_err() {
        // The threads waiting now share the failure; a thread opening later (ramp-up) tries again.
        let mut prepared = PREPARED.lock().unwrap_or_else(|p| p.into_inner());
        if prepared.get(key).is_some_and(|v| Arc::ptr_eq(v, &verdict)) {
            prepared.remove(key);
        }
    }
    result
}

fn prepare(producer: &KafkaProducer, settings: &ProducerSettings) -> Result<(), EngineError> {
    let mut created = false;
    if let Some((partitions, replication)) = settings.topic_create {
        // Probe first: the admin request alone would wait out its own 30 s and say only OperationTimedOut, while
        // the producer's metadata request fails within timeout.ms with librdkafka's cause (refused, resolve, SASL).
        let advice = "; check bootstrap.servers, the security settings and that the broker is running";
        metadata::all_topics(
            producer.client(),
            Fetch { servers: servers(&settings.client), timeout: settings.timeout, advice },
        )?;
        let connection = connection_properties(&settings.client);
        created = admin::create_topic(&connection, &settings.topic, partitions, replication, settings.timeout)?;
        if created {
            log::info!(
                "created topic '{}' with {partitions} partitions, replication {replication} (-1 = broker default)",
                settings.topic
            );
        }
    }
    if settings.preflight != Preflight::Off {
        // A topic created a moment ago reaches the brokers' metadata a little later: seconds on a busy machine with a
        // freshly started broker (seen: more than 3 s at 98 % CPU). It exists, so wait for it as long as its creation
        // may take; any other topic gets the usual short wait.
        let propagation = if created {
            settings.timeout.max(Duration::from_secs(30))
        } else {
            settings.timeout.min(Duration::from_secs(5))
        };
        preflight(producer, settings, propagation)?;
    }
    warn_linger(settings);
    Ok(())
}

/// Once per test and configuration, before load: the broker answers and the topic exists, waiting up to `propagation`
/// for a topic to appear in the metadata.
fn preflight(producer: &KafkaProducer, settings: &ProducerSettings, propagation: Duration) -> Result<(), EngineError> {
    let servers = servers(&settings.client);
    let advice = "; check bootstrap.servers, the security settings and that the broker is running";
    let partitions = metadata::topic_partitions(
        producer.client(),
        &settings.topic,
        propagation,
        Fetch { servers, timeout: settings.timeout, advice },
    )?
    .ok_or_else(|| missing_topic(settings, servers))?;
    check_partitions(settings, servers, partitions.len() as u32)
}

fn missing_topic(settings: &ProducerSettings, servers: &str) -> EngineError {
    EngineError::new(
        Code::UnknownTopicOrPart,
        format!(
            "topic '{}' does not exist on {servers}; create it before the test (e.g. scripts/kafka topics --create --topic {} \
             --partitions 16) so it is not auto-created with the broker's defaults, or set preflight=off to allow that",
            settings.topic, settings.topic
        ),
    )
}

/// Fewer partitions than producing threads caps the broker's parallelism: warn or fail, as asked.
fn check_partitions(settings: &ProducerSettings, servers: &str, partitions: u32) -> Result<(), EngineError> {
    if let Some(p) = settings.partition {
        // librdkafka would accept the send and fail every message with UNKNOWN_PARTITION, logging nothing.
        if p as u32 >= partitions {
            return Err(EngineError::config(format!(
                "partition: {p} does not exist; topic '{}' has {partitions} partition(s) (0-{}) on {servers}",
                settings.topic,
                partitions.saturating_sub(1)
            )));
        }
    }
    if settings.thread_count > partitions && settings.partition.is_none() {
        // What the shortage means depends on who sends: own producers each append to the same few partitions, while
        // one shared producer batches every thread's messages, so only the broker's per-partition parallelism is capped.
        let consequence = match settings.scope {
            Scope::Thread => "the threads' producers will contend for the same partitions and",
            Scope::Test => "the shared producers batch their messages, but",
        };
        let text = format!(
            "topic '{}' has {partitions} partition(s) for {} producing threads: {consequence} the broker's parallelism is \
             capped at {partitions}; add partitions (scripts/kafka topics --alter --topic {} --partitions {}) or set \
             topic.create=true with topic.partitions on a new topic",
            settings.topic, settings.thread_count, settings.topic, settings.thread_count
        );
        if settings.preflight == Preflight::Fail {
            return Err(EngineError::new(Code::TooFewPartitions, text));
        }
        warn_once(&format!("{servers}/{}", settings.topic), &text);
    }
    Ok(())
}

/// Logs a pre-flight warning once per test and topic, not once per JMeter thread.
fn warn_once(key: &str, text: &str) {
    settings::warn_once(key, &format!("pre-flight: {text}"));
}

/// `linger.ms` > 0 only delays a synchronous sender that has its own producer and one message per sample: nothing
/// else can join its batch, so every sample waits out the linger. Said once per test and configuration.
fn warn_linger(settings: &ProducerSettings) {
    let linger: f64 = settings.client.get("linger.ms").and_then(|v| v.parse().ok()).unwrap_or(0.0);
    if linger > 0.0 && settings.scope == Scope::Thread && settings.messages_per_sample == 1 {
        warn_once(
            &format!("linger\n{}\n{}", servers(&settings.client), settings.topic),
            &format!(
                "linger.ms={linger} with producer.scope=thread and messages.per.sample=1 only adds latency: each sample \
                 waits out the linger for a batch nothing else can join (measured on 2 cores, 10 threads: linger.ms=1 took \
                 the sampler from about 10,000 to about 4,500 samples/s); set linger.ms=0, or producer.scope=test so \
                 the threads' messages share batches"
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pool: &str, threads: u32, thread: u32) -> ProducerSettings {
        let pairs: Vec<(String, String)> = [
            ("bootstrap.servers", "127.0.0.1:9092".to_string()),
            ("topic", "t".to_string()),
            ("producer.pool.size", pool.to_string()),
            ("thread.count", threads.to_string()),
            ("thread.number", thread.to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        super::super::settings::parse(&pairs).unwrap()
    }

    #[test]
    fn threads_are_spread_round_robin_over_at_most_as_many_members_as_threads() {
        let members: Vec<u32> = (1..=10).map(|n| pool_member(&settings("4", 10, n))).collect();
        assert_eq!(members, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]);
        // Two threads never open more than two producers, whatever the pool size.
        let members: Vec<u32> = (1..=2).map(|n| pool_member(&settings("8", 2, n))).collect();
        assert_eq!(members, [0, 1]);
        assert!((1..=50).all(|n| pool_member(&settings("1", 50, n)) == 0), "pool size 1 is one shared producer");
    }
}
