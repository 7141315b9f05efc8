//! The producer engine: one message (or a batch) sent synchronously, the sample ending at the broker's ack.
//!
//! Flow of one sample: [`ProducerHandle::send`] generates key and value in native memory ([`payload`]) and
//! enqueues `messages.per.sample` records into librdkafka, each carrying a ticket (which sample it belongs to,
//! when it was sent); the delivery callback ([`slot`]) gets the broker's verdict and the ticket's [`Slot`] counts it;
//! `send` returns once every message of the sample has an outcome, or the deadline passed. With a producer of its
//! own (`producer.scope=thread`) the waiting JMeter thread serves the delivery reports itself; a shared producer's
//! polling thread serves them and wakes the thread ([`shared`]).
//!
//! Nothing here is shared between JMeter threads on the per-message path except the librdkafka producer
//! itself when `producer.scope=test`: each handle has its own slot, payload generator and statistics ([`stats`]).

pub mod pacer;
pub mod payload;
pub mod policy;
pub mod settings;
pub mod shared;
pub mod slot;
pub mod stats;
pub mod transaction;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rdkafka::error::KafkaError;
use rdkafka::message::{Header, Headers, OwnedHeaders};
use rdkafka::producer::BaseRecord;
use rdkafka::types::RDKafkaErrorCode;

use crate::audit::{self, AuditTarget, SeqSet};
use crate::error::{Code, EngineError};
use crate::run::report::Run;
use pacer::Pacer;
use payload::PayloadGen;
pub use payload::SampleInput;
use settings::ProducerSettings;
use shared::KafkaProducer;
pub use slot::Slot;
use slot::Ticket;
use transaction::{Txn, TxnEnd};

/// librdkafka reports a message timeout up to about a second after `message.timeout.ms`
/// (it scans for expired messages once per second), so a sample waits that much longer
/// to receive librdkafka's own verdict instead of guessing.
const VERDICT_GRACE: Duration = Duration::from_millis(1200);

/// What one sample did: the numbers a JMeter `SampleResult` needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleOutcome {
    /// Messages of the sample.
    pub sent: u32,
    /// Messages the broker acknowledged within the sample.
    pub acked: u32,
    /// Messages that failed, timed out or were interrupted.
    pub failed: u32,
    /// First send to last outcome (all acked), or to the moment the sample gave up.
    pub elapsed: Duration,
    /// Key + value + header bytes of all messages of the sample.
    pub bytes: u64,
    /// Partition and offset of the last acknowledged message, -1 if none.
    pub partition: i32,
    /// See `partition`.
    pub offset: i64,
    /// The first failure of the sample, if any.
    pub error: Option<EngineError>,
    /// With `transactional.id.prefix`: how the sample's transaction ended (committed, aborted on purpose, open).
    pub transaction: TxnEnd,
}

impl SampleOutcome {
    /// A sample of `count` messages that sent none of them: all failed with `e`.
    pub fn unsent(count: u32, e: EngineError) -> SampleOutcome {
        SampleOutcome {
            sent: count,
            acked: 0,
            failed: count,
            elapsed: Duration::ZERO,
            bytes: 0,
            partition: -1,
            offset: -1,
            error: Some(e),
            transaction: TxnEnd::None,
        }
    }
}

/// One JMeter thread's producer: owns its slot, payload generator and statistics.
pub struct ProducerHandle {
    producer: Option<Arc<KafkaProducer>>,
    settings: ProducerSettings,
    slot: Arc<Slot>,
    payload: PayloadGen,
    /// The headers every message carries: the `headers` setting, or as the last sample that passed it had it.
    headers: Vec<(String, String)>,
    /// The `headers` text `headers` was last parsed from (None: the thread's setting, not yet compared).
    headers_text: Option<String>,
    /// Audit identity: (run id, producer id), with `audit=true`.
    audit_id: Option<(String, String)>,
    /// Sequence number of the next message (audit header).
    seq: u64,
    pacer: Option<Pacer>,
    /// When the previous sample ended (its last verdict): the gap to the next sample's start is the cost per sample
    /// outside the engine ([`stats::Totals::between_samples_us`]).
    last_end: Option<Instant>,
    /// Where the statistics go at close.
    run: Arc<Run>,
    /// With `transactional.id.prefix`: the open transaction and the producer's state.
    txn: Option<Txn>,
}

/// Distinguishes the handles of one JVM in audit headers.
static NEXT_HANDLE: AtomicU64 = AtomicU64::new(0);

impl ProducerHandle {
    /// Creates (or joins, with `producer.scope=test`) the producer, after the pre-flight check; the handle's
    /// statistics go to `run` when it closes.
    pub fn open(mut settings: ProducerSettings, run: &Arc<Run>) -> Result<ProducerHandle, EngineError> {
        for w in &settings.warnings {
            log::warn!("{w}");
        }
        let payload = PayloadGen::new(&settings.value, &settings.key, settings.thread_number, &settings.topic)?;
        let producer = shared::producer_for(&settings, run)?;
        let run = Arc::clone(run);
        let slot = Slot::new();
        let audit_id = settings.audit.then(|| {
            let (run_id, _) = run.current_run();
            let pid = format!("{:x}-{}", std::process::id(), NEXT_HANDLE.fetch_add(1, Ordering::Relaxed));
            let mut s = slot.lock();
            s.acked_seqs = Some(SeqSet::default());
            let mut target = AuditTarget::new(&settings.client, &settings.topic, settings.audit_timeout);
            target.transactional = settings.transaction.is_some();
            s.totals.audit = Some(target);
            if settings.transaction.is_some() {
                s.txn_seqs = Some(Vec::new());
            }
            (run_id, pid)
        });
        let pacer = settings.target_rate.map(|rate| Pacer::new(rate, &slot));
        Ok(ProducerHandle {
            txn: settings.transaction.clone().map(Txn::new),
            producer: Some(producer),
            headers: std::mem::take(&mut settings.headers),
            headers_text: None,
            settings,
            slot,
            payload,
            audit_id,
            seq: 0,
            pacer,
            last_end: None,
            run,
        })
    }

    /// The slot another thread may use to interrupt a waiting `send`.
    pub fn slot(&self) -> Arc<Slot> {
        Arc::clone(&self.slot)
    }

    /// Sends one sample's messages and waits for every verdict, the deadline, or an interrupt; a transactional
    /// producer also begins, commits or aborts its transaction ([`transaction`]).
    pub fn send(&mut self, input: SampleInput<'_>) -> SampleOutcome {
        if self.txn.is_some() {
            return self.send_in_transaction(input);
        }
        self.send_messages(input)
    }

    fn send_messages(&mut self, input: SampleInput<'_>) -> SampleOutcome {
        // Taken before the pacer's wait, which is no cost of the bridge.
        let gap = self.last_end.map(|end| end.elapsed());
        if let Some(pacer) = &mut self.pacer {
            pacer.pace(&self.slot);
        }
        let count = self.settings.messages_per_sample;
        let sample = {
            let mut s = self.slot.lock();
            if s.interrupted {
                // A stop that came while the sample waited for its target.rate slot, or between two samples: the
                // sample ends at once instead of sending (the flag used to be cleared here, which lost the stop).
                s.interrupted = false;
                return SampleOutcome::unsent(
                    count,
                    EngineError::new(Code::Interrupted, "the test was stopped before the sample was sent"),
                );
            }
            if let (Some(gap), None) = (gap, &self.pacer) {
                s.totals.between_samples_us.saturating_record(gap.as_micros().max(1) as u64);
            }
            s.outstanding = count;
            s.acked = 0;
            s.failed = 0;
            s.first_error = None;
            s.partition = -1;
            s.offset = -1;
            s.last_outcome = None;
            s.sample
        };
        let start = Instant::now();
        let mut bytes = 0u64;
        // A key or headers field that does not parse fails the sample's messages, as a bad value does.
        let taken = self.take_fields(&input);
        for _ in 0..count {
            let sent = match &taken {
                Ok(()) => self.enqueue(input.value, sample, start),
                Err(e) => Err(e.clone()),
            };
            match sent {
                Ok(n) => bytes += n as u64,
                Err(e) => self.fail_unsent(e),
            }
        }
        let outcome = self.wait(start, bytes);
        self.last_end = Some(start + outcome.elapsed);
        outcome
    }

    /// The sample's key and headers fields, where JMeter passed them; parsed only when their text changed.
    /// A sample whose key or headers fail to parse changes neither.
    fn take_fields(&mut self, input: &SampleInput<'_>) -> Result<(), EngineError> {
        let headers = match input.headers {
            Some(text) if self.headers_text.as_deref() != Some(text) => Some((settings::parse_headers(text)?, text)),
            _ => None,
        };
        if let Some(key) = input.key {
            self.payload.set_key(key)?;
        }
        if let Some((headers, text)) = headers {
            self.headers = headers;
            self.headers_text = Some(text.to_owned());
        }
        Ok(())
    }

    /// Headers of one message: the static ones, then audit and send-time headers when asked for.
    fn headers(&self, seq: u64) -> Option<OwnedHeaders> {
        if self.headers.is_empty() && self.audit_id.is_none() && !self.settings.stamp_time {
            return None;
        }
        let mut h = OwnedHeaders::new_with_capacity(self.headers.len() + 4);
        for (k, v) in &self.headers {
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
        let producer =
            self.producer.as_ref().ok_or_else(|| EngineError::new(Code::Closed, "the producer is closed"))?;
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
            match producer.send(message) {
                Ok(()) => return Ok(bytes),
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back))
                    if Instant::now() < block_until =>
                {
                    // Deliveries free room and arrive as news on the slot: waiting for them beats sleeping blind.
                    drop(await_news(producer, &self.slot, self.slot.lock(), Duration::from_millis(1)));
                    message = back;
                }
                Err((e, _)) => {
                    let mut s = self.slot.lock();
                    s.in_flight -= 1;
                    let mut err = slot::explain_size(EngineError::from_kafka(&e), bytes, false);
                    err = producer.explain_unsent(err, now);
                    if err.code == Code::QueueFull {
                        err.message = slot::explain_queue_full(&self.settings.client, bytes, self.settings.max_block);
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
            s = match &self.producer {
                Some(producer) => await_news(producer, &self.slot, s, deadline - now),
                None => break,
            };
        }
        let unfinished = s.outstanding;
        let end = if unfinished == 0 { s.last_outcome.unwrap_or(start) } else { Instant::now() };
        if unfinished > 0 {
            s.failed += unfinished;
            let err = if s.interrupted {
                // The stop is used up by the sample it ended; one that comes after the verdicts stays set for the
                // next sample.
                s.interrupted = false;
                EngineError::new(Code::Interrupted, "the test was stopped while waiting for the broker")
            } else {
                let timeout = EngineError::new(
                    Code::MsgTimedOut,
                    format!("no acknowledgement within {} ms (timeout.ms)", self.settings.timeout.as_millis()),
                );
                match &self.producer {
                    Some(producer) => producer.explain_unsent(timeout, start),
                    None => timeout,
                }
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
            transaction: TxnEnd::None,
        }
    }

    /// Waits (bounded) for messages still in flight, merges this handle's statistics into the run's,
    /// and releases the producer (the last user of a shared one flushes it). Safe to call twice.
    pub fn close(&mut self, timeout: Duration) -> String {
        let Some(producer) = self.producer.take() else {
            return "already closed".to_string();
        };
        if timeout.is_zero() {
            // The caller's way of saying the test was stopped: the report must not wait on the brokers either.
            self.run.note_stopped();
        }
        self.producer = Some(producer);
        self.end_open_transaction(timeout.is_zero());
        let Some(producer) = self.producer.take() else {
            return "already closed".to_string();
        };
        // Messages still in flight get librdkafka's verdict within the sample timeout (message.timeout.ms), so a
        // normal close waits that long whatever the caller thought the timeout was; 0 (a stopped test) stays 0.
        let timeout = if timeout.is_zero() { timeout } else { timeout.max(self.settings.timeout + VERDICT_GRACE) };
        // Waiting for this handle's own verdicts (rather than flushing) leaves other handles of a shared producer alone.
        let deadline = Instant::now() + timeout;
        let mut s = self.slot.lock();
        while s.in_flight > 0 && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            s = await_news(&producer, &self.slot, s, left);
        }
        let undelivered = s.in_flight;
        // A stopped test's in-flight messages belong to the samples it interrupted, which the JTL marks INTERRUPTED:
        // the summary names them the same. After a normal end they are messages that outlived their sample.
        let code = if timeout.is_zero() { Code::Interrupted } else { Code::UndeliveredAtClose };
        for _ in 0..undelivered {
            s.totals.record_failure(code.as_str());
        }
        if let (Some((_, pid)), Some(acked)) = (&self.audit_id, s.acked_seqs.take()) {
            s.totals.acked_seqs.insert(pid.clone(), acked);
        }
        self.run.merge_producer(&s.totals);
        let report = format!(
            "closed: {} acked, {} failed, {} undelivered at close",
            s.totals.acked, s.totals.failed, undelivered
        );
        drop(s);
        drop(producer);
        report
    }
}

/// Longest stretch a thread serving its own producer's events goes without looking at its slot: bounds how long
/// an interrupt (test stopped), which only sets a flag there, takes to be seen.
const SERVE_SLICE: Duration = Duration::from_millis(50);

/// Waits up to `timeout` for news on the slot (verdicts, an interrupt) and returns its lock again. A thread with its
/// own producer (`producer.scope=thread`) serves that producer's events itself, so a delivery report wakes no other
/// thread on its way; otherwise the shared producer's polling thread delivers and wakes this one through the condvar.
fn await_news<'a>(
    producer: &KafkaProducer,
    slot: &'a Slot,
    mut s: MutexGuard<'a, slot::SlotState>,
    timeout: Duration,
) -> MutexGuard<'a, slot::SlotState> {
    if producer.serves_on_caller() {
        drop(s);
        producer.serve(timeout.min(SERVE_SLICE));
        return slot.lock();
    }
    s.sleeping = true;
    let mut s = slot.cond.wait_timeout(s, timeout).unwrap_or_else(|p| p.into_inner()).0;
    s.sleeping = false;
    s
}

impl Drop for ProducerHandle {
    fn drop(&mut self) {
        if self.producer.is_some() {
            self.close(self.settings.timeout);
        }
    }
}
