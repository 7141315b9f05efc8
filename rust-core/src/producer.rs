//! The producer engine: one message (or a batch) sent synchronously, the sample ending at the broker's ack.
//!
//! Flow of one sample: [`ProducerHandle::send`] enqueues `messages.per.sample` records into librdkafka,
//! each carrying a [`Ticket`] (which sample it belongs to, when it was sent); librdkafka's polling thread
//! calls [`Ctx::delivery`] with the broker's verdict; the ticket's [`Slot`] counts it and wakes the
//! JMeter thread waiting in `send` once every message of the sample has an outcome, or the deadline passed.
//!
//! Nothing here is shared between JMeter threads on the per-message path except the librdkafka producer
//! itself when `producer.scope=test`: each handle has its own slot, payload generator and statistics.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use once_cell::sync::Lazy;
use rdkafka::config::ClientConfig;
use rdkafka::error::KafkaError;
use rdkafka::message::Headers;
use rdkafka::message::{Header, Message, OwnedHeaders};
use rdkafka::metadata::Metadata;
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, PurgeConfig, ThreadedProducer};
use rdkafka::statistics::Statistics;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientContext;

use crate::admin;
use crate::audit::{self, AuditTarget, SeqSet};
use crate::config::{self, Preflight, ProducerSettings, Scope};
use crate::error::{redact_kafka, EngineError, INTERRUPTED, MSG_TIMED_OUT};
use crate::payload::PayloadGen;
use crate::stats::{self, Totals};

/// librdkafka reports a message timeout up to about a second after `message.timeout.ms`
/// (it scans for expired messages once per second), so a sample waits that much longer
/// to receive librdkafka's own verdict instead of guessing.
const VERDICT_GRACE: Duration = Duration::from_millis(1200);

/// What one sample did: the numbers a JMeter `SampleResult` needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleOutcome {
    pub sent: u32,
    pub acked: u32,
    pub failed: u32,
    /// First send to last outcome (all acked), or to the moment the sample gave up.
    pub elapsed: Duration,
    /// Key + value + header bytes of all messages of the sample.
    pub bytes: u64,
    /// Partition and offset of the last acknowledged message, -1 if none.
    pub partition: i32,
    pub offset: i64,
    /// The first failure of the sample, if any.
    pub error: Option<EngineError>,
}

/// Travels with each message through librdkafka and comes back in the delivery callback.
pub(crate) struct Ticket {
    slot: Arc<Slot>,
    sample: u64,
    /// The message's audit sequence number within its handle.
    seq: u64,
    sent_at: Instant,
    bytes: usize,
}

/// Where a handle's outcomes arrive; shared only by its JMeter thread and librdkafka's polling thread.
pub struct Slot {
    state: Mutex<SlotState>,
    cond: Condvar,
}

#[derive(Default)]
struct SlotState {
    /// Number of the sample being waited for; bumped when it ends, so late verdicts are told apart.
    sample: u64,
    outstanding: u32,
    acked: u32,
    failed: u32,
    first_error: Option<EngineError>,
    partition: i32,
    offset: i64,
    last_outcome: Option<Instant>,
    interrupted: bool,
    /// Messages handed to librdkafka whose verdict has not arrived yet (across samples).
    in_flight: u64,
    totals: Totals,
    /// With `audit=true`: the sequence numbers the broker acknowledged.
    acked_seqs: Option<SeqSet>,
}

impl Slot {
    fn new() -> Arc<Slot> {
        Arc::new(Slot { state: Mutex::new(SlotState::default()), cond: Condvar::new() })
    }

    fn lock(&self) -> MutexGuard<'_, SlotState> {
        // A panic while holding the lock cannot leave the counters half-updated in a harmful way.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes the thread waiting in `send`; its unfinished messages are reported as INTERRUPTED.
    pub fn interrupt(&self) {
        self.lock().interrupted = true;
        self.cond.notify_all();
    }

    fn complete(&self, result: Result<(i32, i64), EngineError>, ticket: &Ticket) {
        let now = Instant::now();
        let mut s = self.lock();
        s.in_flight -= 1;
        let current = ticket.sample == s.sample && s.outstanding > 0;
        match result {
            Ok((partition, offset)) => {
                s.totals.record_ack(now - ticket.sent_at, ticket.bytes, partition, now);
                if let Some(acked) = &mut s.acked_seqs {
                    acked.insert(ticket.seq);
                }
                if current {
                    s.acked += 1;
                    s.partition = partition;
                    s.offset = offset;
                } else {
                    s.totals.acked_after_timeout += 1;
                }
            }
            Err(e) => {
                s.totals.record_failure(&e.code);
                if current {
                    s.failed += 1;
                    s.first_error.get_or_insert(e);
                }
            }
        }
        if current {
            s.outstanding -= 1;
            s.last_outcome = Some(now);
        }
        if s.outstanding == 0 || s.in_flight == 0 {
            self.cond.notify_all();
        }
    }
}

/// librdkafka callbacks: logs go through the `log` crate (default), deliveries to the ticket's slot,
/// statistics to the retry count.
pub(crate) struct Ctx {
    /// Retries so far over all brokers, as of librdkafka's latest statistics (cumulative).
    retries: AtomicU64,
    /// librdkafka's latest client-level error (e.g. a SASL authentication failure). A failed metadata request
    /// only says "transport failure"; this says why.
    last_error: Mutex<Option<EngineError>>,
    /// Where the send→ack time goes, from the same statistics.
    breakdown: crate::breakdown::Recorder,
}

impl ClientContext for Ctx {
    fn error(&self, error: KafkaError, reason: &str) {
        log::error!("librdkafka: {error}: {reason}");
        let mut last = self.last_error.lock().unwrap_or_else(|p| p.into_inner());
        // "All brokers are down" follows the error that took them down: keep that one.
        if error.rdkafka_error_code() == Some(RDKafkaErrorCode::AllBrokersDown) && last.is_some() {
            return;
        }
        let mut e = EngineError::from_kafka(&error);
        e.message = reason.to_string();
        *last = Some(e);
    }

    fn stats(&self, statistics: Statistics) {
        let retries = statistics.brokers.values().map(|b| b.txretries).sum();
        self.retries.store(retries, Ordering::Relaxed);
        self.breakdown.record(&statistics);
    }
}

impl ProducerContext for Ctx {
    type DeliveryOpaque = Box<Ticket>;

    fn delivery(&self, result: &DeliveryResult<'_>, ticket: Box<Ticket>) {
        let verdict = match result {
            Ok(m) => Ok((m.partition(), m.offset())),
            Err((e, _)) => Err(EngineError::from_kafka(e)),
        };
        ticket.slot.complete(verdict, &ticket);
    }
}

/// A librdkafka producer. Every handle using it has already waited (bounded) for its own messages
/// and counted those that never got a verdict, so dropping it only purges what is left, without waiting.
pub(crate) struct KafkaProducer {
    inner: ThreadedProducer<Ctx>,
}

impl Drop for KafkaProducer {
    fn drop(&mut self) {
        stats::add_retries(self.inner.context().retries.load(Ordering::Relaxed));
        self.inner.context().breakdown.merge_into_run();
        let left = self.inner.in_flight_count();
        if left > 0 {
            log::warn!("{left} message(s) still in flight when the producer closed were purged (counted as UNDELIVERED_AT_CLOSE)");
            self.inner.purge(PurgeConfig::default().queue().inflight());
        }
    }
}

fn recorder(settings: &ProducerSettings) -> crate::breakdown::Recorder {
    let knobs =
        crate::breakdown::Knobs::new(&settings.client, settings.messages_per_sample, settings.scope == Scope::Thread);
    crate::breakdown::Recorder::new(knobs)
}

/// Producers shared by all threads of a test (`producer.scope=test`), by configuration.
static SHARED: Lazy<Mutex<HashMap<String, Weak<KafkaProducer>>>> = Lazy::new(|| Mutex::new(HashMap::new()));

fn create_producer(settings: &ProducerSettings) -> Result<Arc<KafkaProducer>, EngineError> {
    let mut config = ClientConfig::new();
    for (k, v) in &settings.client {
        config.set(k, v);
    }
    let inner: ThreadedProducer<Ctx> = config
        .create_with_context(Ctx {
            retries: AtomicU64::new(0),
            last_error: Mutex::new(None),
            breakdown: recorder(settings),
        })
        .map_err(|e| EngineError::config(format!("the producer could not be created: {}", redact_kafka(&e))))?;
    let producer = Arc::new(KafkaProducer { inner });
    if let Some((partitions, replication)) = settings.topic_create {
        let connection = config::connection_properties(&settings.client);
        if admin::create_topic(&connection, &settings.topic, partitions, replication, settings.timeout)? {
            log::info!(
                "created topic '{}' with {partitions} partitions, replication {replication} (-1 = broker default)",
                settings.topic
            );
        }
    }
    if settings.preflight != Preflight::Off {
        preflight(&producer, settings)?;
    }
    Ok(producer)
}

/// Once per producer, before load: the broker answers and the topic exists. Asking for all topics'
/// metadata never auto-creates the topic (asking for this topic alone could).
fn preflight(producer: &KafkaProducer, settings: &ProducerSettings) -> Result<(), EngineError> {
    let servers = settings.client.get("bootstrap.servers").map(String::as_str).unwrap_or("(bootstrap.servers not set)");
    // A topic created a moment ago may take a little while to reach every broker's metadata.
    let propagation = Instant::now() + settings.timeout.min(Duration::from_secs(5));
    let partitions = loop {
        let metadata = fetch_all_metadata(producer, settings, servers)?;
        if let Some(topic) = metadata.topics().iter().find(|t| t.name() == settings.topic) {
            break topic.partitions().len() as u32;
        }
        if Instant::now() >= propagation {
            return Err(missing_topic(settings, servers));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    check_partitions(settings, servers, partitions)
}

fn fetch_all_metadata(
    producer: &KafkaProducer,
    settings: &ProducerSettings,
    servers: &str,
) -> Result<Metadata, EngineError> {
    producer.inner.client().fetch_metadata(None, settings.timeout).map_err(|e| {
        // The client's own latest error (authentication, TLS, name resolution) explains the failure best.
        let cause = producer.inner.context().last_error.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut err = cause.unwrap_or_else(|| EngineError::from_kafka(&e));
        err.message = format!(
            "no broker at {servers} answered within {} ms ({}); check bootstrap.servers, the security settings \
             and that the broker is running",
            settings.timeout.as_millis(),
            err.message
        );
        err
    })
}

fn missing_topic(settings: &ProducerSettings, servers: &str) -> EngineError {
    EngineError::new(
            "UNKNOWN_TOPIC_OR_PART",
            format!(
                "topic '{}' does not exist on {servers}; create it before the test (e.g. scripts/kafka topics --create --topic {} \
                 --partitions 16) so it is not auto-created with the broker's defaults, or set preflight=off to allow that",
            settings.topic, settings.topic
        ),
    )
}

/// Fewer partitions than producing threads caps the broker's parallelism: warn or fail, as asked.
fn check_partitions(settings: &ProducerSettings, servers: &str, partitions: u32) -> Result<(), EngineError> {
    if settings.thread_count > partitions && settings.partition.is_none() {
        let text = format!(
            "topic '{}' has {partitions} partition(s) for {} producing threads: threads will contend for the same partitions \
             and the broker's parallelism is capped at {partitions}; add partitions (scripts/kafka topics --alter --topic {} \
             --partitions {}) or set topic.create=true with topic.partitions on a new topic",
            settings.topic, settings.thread_count, settings.topic, settings.thread_count
        );
        if settings.preflight == Preflight::Fail {
            return Err(EngineError::new("TOO_FEW_PARTITIONS", text));
        }
        warn_once(&format!("{servers}/{}", settings.topic), &text);
    }
    Ok(())
}

/// Logs a pre-flight warning once per test and topic, not once per JMeter thread.
fn warn_once(key: &str, text: &str) {
    static WARNED: Lazy<Mutex<HashSet<String>>> = Lazy::new(|| Mutex::new(HashSet::new()));
    if WARNED.lock().unwrap_or_else(|p| p.into_inner()).insert(key.to_string()) {
        log::warn!("pre-flight: {text}");
    }
}

fn shared_producer(settings: &ProducerSettings) -> Result<Arc<KafkaProducer>, EngineError> {
    // Held while creating, so that two threads opening at once do not create two producers.
    let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    let key = settings.sharing_key();
    if let Some(p) = shared.get(&key).and_then(Weak::upgrade) {
        return Ok(p);
    }
    let p = create_producer(settings)?;
    shared.retain(|_, w| w.strong_count() > 0);
    shared.insert(key, Arc::downgrade(&p));
    Ok(p)
}

/// One JMeter thread's producer: owns its slot, payload generator and statistics.
pub struct ProducerHandle {
    producer: Option<Arc<KafkaProducer>>,
    settings: ProducerSettings,
    slot: Arc<Slot>,
    payload: PayloadGen,
    /// Audit identity: (run id, producer id), with `audit=true`.
    audit_id: Option<(String, String)>,
    /// Sequence number of the next message (audit header).
    seq: u64,
    pacer: Option<Pacer>,
}

/// Starts samples at their intended times for `target.rate`, and measures how late each one started.
struct Pacer {
    interval: Duration,
    next: Option<Instant>,
}

/// Distinguishes the handles of one JVM in audit headers.
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(0);

impl ProducerHandle {
    pub fn open(settings: ProducerSettings) -> Result<ProducerHandle, EngineError> {
        for w in &settings.warnings {
            log::warn!("{w}");
        }
        let payload = PayloadGen::new(&settings.value, &settings.key, settings.thread_number)?;
        let producer = match settings.scope {
            Scope::Thread => create_producer(&settings)?,
            Scope::Test => shared_producer(&settings)?,
        };
        let slot = Slot::new();
        let audit_id = settings.audit.then(|| {
            let (run, _) = audit::current_run();
            let pid = format!("{:x}-{}", std::process::id(), NEXT_HANDLE.fetch_add(1, Ordering::Relaxed));
            let mut s = slot.lock();
            s.acked_seqs = Some(SeqSet::default());
            s.totals.audit = Some(AuditTarget::new(&settings.client, &settings.topic, settings.audit_timeout));
            (run, pid)
        });
        let pacer = settings.target_rate.map(|rate| {
            slot.lock().totals.schedule_delay_us = Some(stats::new_histogram());
            Pacer { interval: Duration::from_secs_f64(1.0 / rate), next: None }
        });
        Ok(ProducerHandle { producer: Some(producer), settings, slot, payload, audit_id, seq: 0, pacer })
    }

    /// The slot another thread may use to interrupt a waiting `send`.
    pub fn slot(&self) -> Arc<Slot> {
        Arc::clone(&self.slot)
    }

    /// Sends one sample's messages and waits for every verdict, the deadline, or an interrupt.
    pub fn send(&mut self, jmeter_value: Option<&[u8]>) -> SampleOutcome {
        self.pace();
        let count = self.settings.messages_per_sample;
        let sample = {
            let mut s = self.slot.lock();
            s.outstanding = count;
            s.acked = 0;
            s.failed = 0;
            s.first_error = None;
            s.partition = -1;
            s.offset = -1;
            s.last_outcome = None;
            s.interrupted = false;
            s.sample
        };
        let start = Instant::now();
        let mut bytes = 0u64;
        for _ in 0..count {
            match self.enqueue(jmeter_value, sample, start) {
                Ok(n) => bytes += n as u64,
                Err(e) => self.fail_unsent(e),
            }
        }
        self.wait(start, bytes)
    }

    /// With `target.rate`: waits for this sample's intended start, or records how late it is. Samples keep their
    /// intended schedule even when late, so a slow broker shows as schedule delay instead of fewer, faster samples.
    fn pace(&mut self) {
        let Some(pacer) = &mut self.pacer else { return };
        let now = Instant::now();
        let intended = *pacer.next.get_or_insert(now);
        pacer.next = Some(intended + pacer.interval);
        if intended > now {
            // Interruptible: a stopped test does not wait out the pause.
            let s = self.slot.lock();
            let _ = self.slot.cond.wait_timeout_while(s, intended - now, |s| !s.interrupted);
        }
        let late = Instant::now().saturating_duration_since(intended);
        if let Some(h) = &mut self.slot.lock().totals.schedule_delay_us {
            h.saturating_record(late.as_micros().max(1) as u64);
        }
    }

    /// Headers of one message: the static ones, then audit and send-time headers when asked for.
    fn headers(&self, seq: u64) -> Option<OwnedHeaders> {
        if self.settings.headers.is_empty() && self.audit_id.is_none() && !self.settings.stamp_time {
            return None;
        }
        let mut h = OwnedHeaders::new_with_capacity(self.settings.headers.len() + 4);
        for (k, v) in &self.settings.headers {
            h = h.insert(Header { key: k, value: Some(v.as_bytes()) });
        }
        if let Some((run, pid)) = &self.audit_id {
            h = h
                .insert(Header { key: audit::RUN_HEADER, value: Some(run.as_bytes()) })
                .insert(Header { key: audit::PRODUCER_HEADER, value: Some(pid.as_bytes()) })
                .insert(Header { key: audit::SEQ_HEADER, value: Some(&seq.to_be_bytes()) });
        }
        if self.settings.stamp_time {
            let sent_us = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64);
            h = h.insert(Header { key: audit::SENT_US_HEADER, value: Some(&sent_us.to_be_bytes()) });
        }
        Some(h)
    }

    /// Hands one message to librdkafka, waiting for room in a full queue until `max.block.ms`.
    fn enqueue(&mut self, jmeter_value: Option<&[u8]>, sample: u64, start: Instant) -> Result<usize, EngineError> {
        let producer = self.producer.as_ref().ok_or_else(|| EngineError::new("CLOSED", "the producer is closed"))?;
        let seq = self.seq;
        self.seq += 1;
        let headers = self.headers(seq);
        let record = self.payload.next(jmeter_value)?;
        let header_bytes: usize =
            headers.as_ref().map_or(0, |h| h.iter().map(|h| h.key.len() + h.value.map_or(0, <[u8]>::len)).sum());
        let bytes = record.key.map_or(0, <[u8]>::len) + record.value.len() + header_bytes;
        let now = Instant::now();
        let ticket = Box::new(Ticket { slot: Arc::clone(&self.slot), sample, seq, sent_at: now, bytes });
        let mut message = BaseRecord::with_opaque_to(&self.settings.topic, ticket).payload(record.value);
        if let Some(key) = record.key {
            message = message.key(key);
        }
        if let Some(p) = self.settings.partition {
            message = message.partition(p);
        }
        if let Some(headers) = headers {
            message = message.headers(headers);
        }
        {
            let mut s = self.slot.lock();
            s.in_flight += 1;
            s.totals.record_send(now);
        }
        let block_until = start + self.settings.max_block;
        loop {
            match producer.inner.send(message) {
                Ok(()) => return Ok(bytes),
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back))
                    if Instant::now() < block_until =>
                {
                    // Deliveries free room; they also notify the slot, so waiting on it beats sleeping blind.
                    let s = self.slot.lock();
                    let _ = self.slot.cond.wait_timeout(s, Duration::from_millis(1));
                    message = back;
                }
                Err((e, _)) => {
                    let mut s = self.slot.lock();
                    s.in_flight -= 1;
                    let mut err = EngineError::from_kafka(&e);
                    if err.code == "QUEUE_FULL" {
                        err.message = format!(
                            "librdkafka's local queue stayed full for {} ms (max.block.ms / timeout.ms); the broker is not keeping up",
                            self.settings.max_block.as_millis()
                        );
                    }
                    return Err(err);
                }
            }
        }
    }

    /// A message that never reached librdkafka (bad payload, local refusal such as MSG_SIZE_TOO_LARGE).
    fn fail_unsent(&self, e: EngineError) {
        let mut s = self.slot.lock();
        s.totals.record_failure(&e.code);
        s.failed += 1;
        s.outstanding -= 1;
        s.last_outcome = Some(Instant::now());
        s.first_error.get_or_insert(e);
    }

    fn wait(&self, start: Instant, bytes: u64) -> SampleOutcome {
        let deadline = start + self.settings.timeout + VERDICT_GRACE;
        let mut s = self.slot.lock();
        while s.outstanding > 0 && !s.interrupted {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            s = self.slot.cond.wait_timeout(s, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
        }
        let unfinished = s.outstanding;
        let end = if unfinished == 0 { s.last_outcome.unwrap_or(start) } else { Instant::now() };
        if unfinished > 0 {
            s.failed += unfinished;
            let err = if s.interrupted {
                EngineError::new(INTERRUPTED, "the test was stopped while waiting for the broker")
            } else {
                EngineError::new(
                    MSG_TIMED_OUT,
                    format!("no acknowledgement within {} ms (timeout.ms)", self.settings.timeout.as_millis()),
                )
            };
            s.first_error.get_or_insert(err);
            s.outstanding = 0;
        }
        // Verdicts still arriving for this sample count as late from now on.
        s.sample += 1;
        SampleOutcome {
            sent: self.settings.messages_per_sample,
            acked: s.acked,
            failed: s.failed,
            elapsed: end.saturating_duration_since(start),
            bytes,
            partition: s.partition,
            offset: s.offset,
            error: s.first_error.take(),
        }
    }

    /// Waits (bounded) for messages still in flight, merges this handle's statistics into the run's,
    /// and releases the producer (the last user of a shared one flushes it). Safe to call twice.
    pub fn close(&mut self, timeout: Duration) -> String {
        let Some(producer) = self.producer.take() else {
            return "already closed".to_string();
        };
        // Waiting for this handle's own verdicts (rather than flushing) leaves other handles of a shared producer alone.
        let deadline = Instant::now() + timeout;
        let mut s = self.slot.lock();
        while s.in_flight > 0 && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            s = self.slot.cond.wait_timeout(s, left).unwrap_or_else(|p| p.into_inner()).0;
        }
        let undelivered = s.in_flight;
        for _ in 0..undelivered {
            s.totals.record_failure("UNDELIVERED_AT_CLOSE");
        }
        if let (Some((_, pid)), Some(acked)) = (&self.audit_id, s.acked_seqs.take()) {
            s.totals.acked_seqs.insert(pid.clone(), acked);
        }
        stats::merge_into_run(&s.totals);
        let report = format!(
            "closed: {} acked, {} failed, {} undelivered at close",
            s.totals.acked, s.totals.failed, undelivered
        );
        drop(s);
        drop(producer);
        report
    }
}

impl Drop for ProducerHandle {
    fn drop(&mut self) {
        if self.producer.is_some() {
            self.close(self.settings.timeout);
        }
    }
}
