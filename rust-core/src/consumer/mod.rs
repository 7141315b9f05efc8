//! The consumer engine: one sample = one poll of up to `max.records` records, on the JMeter thread.
//!
//! Flow of one sample ([`ConsumerHandle::poll`]): wait up to `poll.timeout.ms` for the first record, then take
//! whatever librdkafka has already fetched, up to `max.records`, without waiting again (Java's `poll` semantics);
//! every record is measured (size, produce→consume latency from the `kn.sent.us` header or the Kafka timestamp)
//! and optionally checked ([`outcome`]: the audit sequence, `check.regex`); with `commit=sync` the offsets are committed
//! before the sample ends. The sample's whole outcome (EMPTY, SEQUENCE_ERROR, CONTENT_MISMATCH, stop.on.empty) is
//! decided here, in the engine.
//!
//! Partitions are assigned statically by default (`assignment=all` or a list, split across the JMeter threads by
//! thread number), so that starting or stopping threads never triggers a rebalance; `assignment=subscribe` joins
//! the group instead, and every rebalance is counted and logged, its pause timed to the first record after the new
//! assignment (`RebalanceState`) and the poll that ended it marked ([`PollOutcome::rebalance_ended`]).

pub mod outcome;
pub mod settings;
pub mod stats;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::error::KafkaError;
use rdkafka::message::{BorrowedMessage, Headers, Message};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{Offset, TopicPartitionList};

use crate::audit::SENT_US_HEADER;
use crate::client::config;
use crate::client::context::{guarded, ClientCtx, HasClientCtx};
use crate::client::metadata::{self, Fetch};
use crate::client::retry;
use crate::client::settings::servers;
use crate::error::{Code, EngineError};
use crate::run::report::Run;
use crate::schema::RecordDecoder;
use outcome::{check_content, check_schema, check_sequence, SampleAcc};
use settings::{Assignment, Commit, ConsumerSettings};
use stats::{ConsumerTotals, LatencySource, ReadTo, ThreadRebalances};
/// Longest wait inside librdkafka between two checks for an interrupt.
const INTERRUPT_CHECK: Duration = Duration::from_millis(100);
/// How long closing a group member may keep the JMeter thread: leaving the group, the last commit. librdkafka's
/// close has no bound of its own (a cooperative-sticky member leaving while the group rebalances was seen waiting
/// for minutes, so JMeter never ended); past this the close goes on in a thread of its own and the test ends.
const CLOSE_BOUND: Duration = Duration::from_secs(15);

/// What one sample did: the numbers a JMeter `SampleResult` needs.
#[derive(Debug, Clone, PartialEq)]
pub struct PollOutcome {
    /// Records the sample read.
    pub records: u32,
    /// Key + value + header bytes of the records.
    pub bytes: u64,
    /// Start of the poll to the last record (or to the end of the wait when nothing came), commit included.
    pub elapsed: Duration,
    /// Mean and largest produce→consume latency of the sample's records, if any had a send time.
    pub e2e_mean_us: Option<i64>,
    /// Largest produce→consume latency of the sample's records.
    pub e2e_max_us: Option<i64>,
    /// Partition and offset of the last record, -1 if none.
    pub partition: i32,
    /// Offset of the last record, -1 if none.
    pub offset: i64,
    /// Records that failed `check.sequence` or their schema decoding (`value.decode`, `key.decode`).
    pub check_failures: u32,
    /// Rebalances this consumer has gone through so far, and the partitions it holds now.
    pub rebalances: u64,
    /// Partitions this consumer holds now.
    pub assigned: u32,
    /// A rebalance pause that ended in this sample (its first record after the new assignment, or an assignment
    /// of no partition): the rebalance's number and the pause.
    pub rebalance_ended: Option<(u64, Duration)>,
    /// Why the sample failed: a Kafka error, a failed check, EMPTY with `fail.on.empty`, INTERRUPTED.
    pub error: Option<EngineError>,
    /// `stop.on.empty`: this thread's partitions are drained, the JMeter thread should stop.
    pub stop_thread: bool,
}

/// Rebalance bookkeeping, written by librdkafka's rebalance callback (on the thread that polls) and by the poll that
/// gets the first record after an assignment.
///
/// A rebalance begins at the subscription or at a revocation (eager protocols revoke everything, cooperative-sticky
/// and the consumer protocol only what moves) and is counted at the assignment that follows; its pause runs on to
/// the first record after that assignment. An assignment with nothing revoked before it (an incremental protocol
/// giving this thread more partitions) is counted with a pause of 0: the thread did not stop reading. A pause that
/// no record ends (the new partitions hold nothing to read, another rebalance begins first, or the thread ends) is
/// timed to its assignment; one whose assignment leaves the thread no partition ends there.
#[derive(Debug, Default)]
struct RebalanceState {
    /// The rebalance under way: when it began, and the partitions held then.
    started: Option<(Instant, BTreeSet<i32>)>,
    /// The counted rebalance whose pause waits for a record: its number, its start and its assignment.
    awaiting: Option<Awaiting>,
    /// Partitions held now.
    held: BTreeSet<i32>,
    count: u64,
    total: Duration,
    max: Duration,
    gained: u64,
    lost: u64,
    /// The last pause that ended, not yet reported by a sample: its rebalance's number and its length.
    ended: Option<(u64, Duration)>,
}

#[derive(Debug, Clone, Copy)]
struct Awaiting {
    number: u64,
    since: Instant,
    assigned: Instant,
}

impl RebalanceState {
    /// The subscription: the thread's first rebalance (its join) begins.
    fn subscribed(&mut self, at: Instant) {
        self.started = Some((at, self.held.clone()));
    }

    /// Partitions revoked (before librdkafka gives them up): a rebalance begins, unless one already has.
    fn revoking(&mut self, at: Instant) {
        // The last pause got no record before this rebalance: timed to its assignment, and no sample marked.
        if let Some(a) = self.awaiting.take() {
            self.end_pause(a.number, a.assigned - a.since, false);
        }
        if self.started.is_none() {
            self.started = Some((at, self.held.clone()));
        }
    }

    fn revoked(&mut self, partitions: &[i32]) {
        for p in partitions {
            self.held.remove(p);
        }
    }

    /// Partitions assigned (eager protocols: all the thread holds; incremental ones: those added). Returns the
    /// rebalance's number, its time so far and the partitions gained and lost, or None when nothing changed (an
    /// incremental protocol assigning no partition to a thread that gave up none).
    fn assigned(&mut self, partitions: &[i32], at: Instant) -> Option<Counted> {
        let (since, was) = match self.started.take() {
            Some(started) => started,
            None if partitions.iter().all(|p| self.held.contains(p)) => return None,
            None => (at, self.held.clone()),
        };
        self.held.extend(partitions.iter().copied());
        let gained = self.held.difference(&was).count() as u64;
        let lost = was.difference(&self.held).count() as u64;
        self.count += 1;
        self.gained += gained;
        self.lost += lost;
        if self.held.is_empty() || since == at {
            self.end_pause(self.count, at - since, true);
        } else {
            self.awaiting = Some(Awaiting { number: self.count, since, assigned: at });
        }
        Some(Counted { number: self.count, took: at - since, gained, lost })
    }

    /// A record arrived: the pause that waited for it ends. Returns the rebalance's number and pause.
    fn record_arrived(&mut self, at: Instant) -> Option<(u64, Duration)> {
        let a = self.awaiting.take()?;
        let pause = at.saturating_duration_since(a.since);
        self.end_pause(a.number, pause, true);
        Some((a.number, pause))
    }

    /// The thread ends: a pause still waiting for a record is timed to its assignment.
    fn closing(&mut self) -> Option<(u64, Duration)> {
        let a = self.awaiting.take()?;
        self.end_pause(a.number, a.assigned - a.since, false);
        Some((a.number, a.assigned - a.since))
    }

    /// Adds a pause to the totals; `mark`: the sample under way reports it (a record or the assignment ended it).
    fn end_pause(&mut self, number: u64, pause: Duration, mark: bool) {
        self.total += pause;
        self.max = self.max.max(pause);
        if mark {
            self.ended = Some((number, pause));
        }
    }
}

/// A rebalance counted at its assignment.
#[derive(Debug, PartialEq)]
struct Counted {
    number: u64,
    took: Duration,
    gained: u64,
    lost: u64,
}

/// The consumer's context: the client hooks every client has, and rebalances timed and logged.
pub struct ConsumerCtx {
    client: ClientCtx,
    label: String,
    rebalance: Mutex<RebalanceState>,
    /// A pause waits for the next record: the poll checks this flag per record and takes the lock only when set.
    awaiting_record: AtomicBool,
}

impl ConsumerCtx {
    fn new(label: String) -> ConsumerCtx {
        ConsumerCtx {
            client: ClientCtx::default(),
            label,
            rebalance: Mutex::default(),
            awaiting_record: AtomicBool::new(false),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, RebalanceState> {
        self.rebalance.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn revoked(&self, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(tpl) = rebalance {
            let mut s = self.state();
            s.revoking(Instant::now());
            self.awaiting_record.store(false, Ordering::Relaxed);
            log::info!("{}: rebalance: partitions {:?} revoked", self.label, partitions_of(tpl));
        }
    }

    fn rebalanced(&self, rebalance: &Rebalance<'_>) {
        match rebalance {
            Rebalance::Assign(tpl) => {
                let mut s = self.state();
                let assigned = partitions_of(tpl);
                let Some(c) = s.assigned(&assigned, Instant::now()) else { return };
                self.awaiting_record.store(s.awaiting.is_some(), Ordering::Relaxed);
                log::info!(
                    "{}: rebalance #{}: partitions {assigned:?} assigned {} ms after it began ({} gained, {} lost; \
                     holds {:?})",
                    self.label,
                    c.number,
                    c.took.as_millis(),
                    c.gained,
                    c.lost,
                    s.held
                );
                if s.awaiting.is_none() {
                    let why =
                        if s.held.is_empty() { ": no partition to read" } else { ": it gave up none and read on" };
                    self.log_pause(c.number, c.took, why);
                }
            }
            Rebalance::Revoke(tpl) => self.state().revoked(&partitions_of(tpl)),
            Rebalance::Error(e) => log::warn!("{}: rebalance failed: {e}", self.label),
        }
    }

    /// A record arrived at `at`: ends the pause that waited for it, if one did.
    fn record_arrived(&self, at: Instant) {
        self.awaiting_record.store(false, Ordering::Relaxed);
        if let Some((number, pause)) = self.state().record_arrived(at) {
            self.log_pause(number, pause, " to the first record after the new assignment");
        }
    }

    fn log_pause(&self, number: u64, pause: Duration, to: &str) {
        log::info!("{}: rebalance #{number} took {} ms{to}", self.label, pause.as_millis());
    }
}

impl HasClientCtx for ConsumerCtx {
    fn client_ctx(&self) -> &ClientCtx {
        &self.client
    }
}

crate::client_context!(ConsumerCtx);

impl ConsumerContext for ConsumerCtx {
    fn pre_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        guarded("rebalance", || self.revoked(rebalance));
    }

    fn post_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        guarded("rebalance", || self.rebalanced(rebalance));
    }
}

fn partitions_of(tpl: &TopicPartitionList) -> Vec<i32> {
    tpl.elements().iter().map(|e| e.partition()).collect()
}

/// One JMeter thread's consumer: owns its librdkafka consumer, its checks and its statistics.
pub struct ConsumerHandle {
    consumer: Option<config::Created<BaseConsumer<ConsumerCtx>>>,
    settings: ConsumerSettings,
    /// Where the statistics go at close.
    run: Arc<Run>,
    interrupted: Arc<AtomicBool>,
    totals: ConsumerTotals,
    /// `check.sequence`: the last `kn.seq` seen per (`kn.run`/`kn.pid`, partition).
    last_seq: HashMap<(Vec<u8>, i32), u64>,
    /// Reused buffer for the sequence key, so that checking allocates only for a new producer.
    seq_key: Vec<u8>,
    /// Records returned since the last commit (commit=sync).
    uncommitted: bool,
    /// Partitions held with static assignment.
    static_partitions: Vec<i32>,
    /// `value.decode` / `key.decode`: this thread's decoders (schemas by id are cached in them).
    value_decoder: Option<RecordDecoder>,
    key_decoder: Option<RecordDecoder>,
    label: String,
    /// The current run of transient errors (a broker connection lost, a leader or coordinator moving).
    outage: Outage,
    /// An error that came after records in the same poll: the records are returned, the error fails the next sample.
    pending_error: Option<EngineError>,
    /// The last empty poll found a partition short of its end: logged once until the thread drains or reads on.
    not_drained_logged: bool,
    /// What closing said, when the consumer left the group as soon as it was drained (`stop.on.empty`).
    closed_note: Option<String>,
}

/// A run of transient errors, from the first until a record arrives or the brokers answer again.
#[derive(Debug, Default)]
struct Outage {
    since: Option<Instant>,
    errors: u64,
    first: Option<EngineError>,
}

impl ConsumerHandle {
    /// Creates the consumer, checks that the topic exists, and assigns or subscribes; the handle's statistics go
    /// to `run` when it closes.
    pub fn open(settings: ConsumerSettings, run: &Arc<Run>) -> Result<ConsumerHandle, EngineError> {
        for w in &settings.warnings {
            log::warn!("{w}");
        }
        let label = format!(
            "consumer {}/{} of group '{}' on '{}'",
            settings.thread_number, settings.thread_count, settings.group, settings.topic
        );
        let value_decoder = settings.value_decode.as_ref().map(RecordDecoder::new).transpose()?;
        let key_decoder = settings.key_decode.as_ref().map(RecordDecoder::new).transpose()?;
        let ctx = ConsumerCtx::new(label.clone());
        let consumer: config::Created<BaseConsumer<ConsumerCtx>> = config::create(&settings.client, ctx, "consumer")?;
        let partitions = topic_partitions(&consumer, &settings)?;
        let mut static_partitions = Vec::new();
        let mut totals = ConsumerTotals::default();
        match &settings.assignment {
            Assignment::Subscribe => {
                consumer.context().state().subscribed(Instant::now());
                consumer.subscribe(&[&settings.topic]).map_err(|e| EngineError::from_kafka(&e))?;
                log::info!("{label}: subscribed; the group coordinator assigns the partitions");
            }
            Assignment::Static(list) => {
                let wanted = match list {
                    None => partitions.clone(),
                    Some(list) => {
                        if let Some(p) = list.iter().find(|p| !partitions.contains(p)) {
                            return Err(EngineError::config(format!(
                                "assignment: partition {p} does not exist; topic '{}' has {} partition(s) (0-{})",
                                settings.topic,
                                partitions.len(),
                                partitions.len().saturating_sub(1)
                            )));
                        }
                        list.clone()
                    }
                };
                static_partitions = settings::split_for_thread(&wanted, settings.thread_number, settings.thread_count);
                // The engine reads the committed offsets itself (librdkafka's own fetch for an assignment gives up on
                // the first NOT_COORDINATOR of a fresh broker, leaving the partitions unread), then assigns exact offsets.
                let starts = start_offsets(&consumer, &settings, &static_partitions)?;
                let mut tpl = TopicPartitionList::new();
                for (p, start) in &starts {
                    tpl.add_partition_offset(&settings.topic, *p, start.offset)
                        .map_err(|e| EngineError::from_kafka(&e))?;
                    totals.record_start(*p, start.first, start.end);
                }
                consumer.assign(&tpl).map_err(|e| EngineError::from_kafka(&e))?;
                if static_partitions.is_empty() {
                    log::warn!(
                        "{label}: no partition left for this thread ({} partition(s) for {} threads): its samples will \
                         be EMPTY; use at most as many consumer threads as partitions",
                        wanted.len(),
                        settings.thread_count
                    );
                } else {
                    log::info!("{label}: static assignment of partitions {static_partitions:?} (no group membership, no rebalance)");
                }
            }
        }
        Ok(ConsumerHandle {
            consumer: Some(consumer),
            settings,
            run: Arc::clone(run),
            interrupted: Arc::new(AtomicBool::new(false)),
            totals,
            last_seq: HashMap::new(),
            seq_key: Vec::new(),
            uncommitted: false,
            static_partitions,
            value_decoder,
            key_decoder,
            label,
            outage: Outage::default(),
            pending_error: None,
            not_drained_logged: false,
            closed_note: None,
        })
    }

    /// The flag another thread sets to end a waiting poll (JMeter stopping the test).
    pub fn interrupter(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.interrupted)
    }

    /// One sample: up to `max.records` records within `poll.timeout.ms`.
    pub fn poll(&mut self) -> PollOutcome {
        // The stop flag is not cleared here: a stop that arrived between two samples (or just before this one)
        // would be lost, and the sample would wait out poll.timeout.ms. It is used up by the sample it ends.
        let start = Instant::now();
        let deadline = start + self.settings.poll_timeout;
        let mut sample = SampleAcc::default();
        let Some(consumer) = self.consumer.as_ref() else {
            return self.outcome(start, start, sample, Some(EngineError::new(Code::Closed, "the consumer is closed")));
        };
        self.totals.record_poll_start(start);
        if let Some(e) = self.pending_error.take() {
            return self.outcome(start, start, sample, Some(e));
        }
        let mut error = None;
        let mut end = start;
        while sample.records < self.settings.max_records {
            let wait = if sample.records > 0 {
                Duration::ZERO
            } else {
                deadline.saturating_duration_since(Instant::now()).min(INTERRUPT_CHECK)
            };
            match consumer.poll(wait) {
                Some(Ok(m)) => {
                    end = Instant::now();
                    if consumer.context().awaiting_record.load(Ordering::Relaxed) {
                        consumer.context().record_arrived(end);
                    }
                    end_outage(&mut self.outage, &self.label, "a record arrived");
                    record(&m, end, &self.settings, &mut self.totals, &mut sample);
                    if self.settings.check_sequence {
                        check_sequence(&m, &mut self.last_seq, &mut self.seq_key, &mut sample);
                    }
                    if let Some(decoder) = self.value_decoder.as_mut() {
                        check_schema(decoder, m.payload().unwrap_or_default(), "value", &m, &mut sample);
                    }
                    if let Some(decoder) = self.key_decoder.as_mut() {
                        check_schema(decoder, m.key().unwrap_or_default(), "key", &m, &mut sample);
                    }
                }
                Some(Err(KafkaError::PartitionEOF(_))) => {}
                Some(Err(e)) if is_transient(&e) => {
                    let e = consumer_error(&e, &self.settings);
                    // librdkafka reconnects and finds the new leader by itself: counted and logged, not a failure,
                    // unless the outage outlasts timeout.ms.
                    if let Some(failed) =
                        note_transient(&mut self.outage, &mut self.totals, &self.settings, &self.label, e)
                    {
                        if sample.records == 0 {
                            end = Instant::now();
                            error = Some(failed);
                            break;
                        }
                        self.pending_error = Some(failed);
                    }
                    if sample.records > 0 {
                        break;
                    }
                }
                Some(Err(e)) => {
                    let e = consumer_error(&e, &self.settings);
                    if sample.records > 0 {
                        // The records are real: this sample returns them, the error fails the next one.
                        self.pending_error = Some(e);
                        break;
                    }
                    end = Instant::now();
                    error = Some(e);
                    break;
                }
                None if sample.records > 0 => break,
                None => {
                    end = Instant::now();
                    if end >= deadline {
                        if let Some(failed) = self.outage_outlasted() {
                            error = Some(failed);
                        }
                        break;
                    }
                    if self.interrupted.swap(false, Ordering::AcqRel) {
                        error =
                            Some(EngineError::new(Code::Interrupted, "the test was stopped while waiting for records"));
                        break;
                    }
                }
            }
        }
        if sample.records > 0 {
            self.uncommitted = true;
            if self.settings.commit == Commit::Sync {
                match self.commit() {
                    Ok(()) => {}
                    // The coordinator is moving: the offsets stay uncommitted and go with the next commit.
                    Err((e, true)) => {
                        if let Some(failed) =
                            note_transient(&mut self.outage, &mut self.totals, &self.settings, &self.label, e)
                        {
                            self.pending_error = Some(failed);
                        }
                    }
                    // The records are real: this sample returns them, the failed commit fails the next one.
                    Err((e, false)) => self.pending_error = Some(e),
                }
                end = Instant::now();
            }
        }
        self.outcome(start, end, sample, error)
    }

    /// Commits the offsets of the records returned so far (commit=sync), waiting for the broker; an error says
    /// whether it is transient (the coordinator moving, a connection lost).
    fn commit(&mut self) -> Result<(), (EngineError, bool)> {
        let Some(consumer) = self.consumer.as_ref() else { return Ok(()) };
        match consumer.commit_consumer_state(CommitMode::Sync) {
            Ok(()) => {
                self.uncommitted = false;
                Ok(())
            }
            // Nothing new to commit (e.g. all offsets already committed).
            Err(KafkaError::ConsumerCommit(RDKafkaErrorCode::NoOffset)) => {
                self.uncommitted = false;
                Ok(())
            }
            Err(e) => {
                let transient = e.rdkafka_error_code().is_some_and(retry::transient);
                let mut err = EngineError::from_kafka(&e);
                err.message =
                    format!("committing the offsets to group '{}' failed: {}", self.settings.group, err.message);
                Err((err, transient))
            }
        }
    }

    fn outcome(&mut self, start: Instant, end: Instant, sample: SampleAcc, error: Option<EngineError>) -> PollOutcome {
        let (error, mut stop_thread) = outcome::decide(&self.settings, &sample, error);
        if sample.records > 0 {
            self.not_drained_logged = false;
        }
        // An empty poll proves nothing while a leader or the coordinator moves: the thread stops only when every
        // partition it holds is read to its end offset, asked of the broker.
        if stop_thread {
            stop_thread = self.drained();
        }
        self.totals.samples += 1;
        if sample.records == 0 {
            self.totals.empty_samples += 1;
        }
        self.totals.check_failures += sample.check_failures as u64;
        if let Some(e) = &error {
            self.totals.failed_samples += 1;
            self.totals.record_error(&e.code);
        }
        let (rebalances, assigned, rebalance_ended) = match (&self.consumer, &self.settings.assignment) {
            (Some(c), Assignment::Subscribe) => {
                let mut s = c.context().state();
                (s.count, s.held.len() as u32, s.ended.take())
            }
            _ => (0, self.static_partitions.len() as u32, None),
        };
        if stop_thread && self.settings.assignment == Assignment::Subscribe && self.consumer.is_some() {
            // A drained member that stays in the group keeps its partitions from the others until the test ends
            // (with the KIP-848 protocol they are never moved while it no longer polls): it leaves now.
            let note = self.close();
            log::info!(
                "{}: read to the end: it leaves the group so that its partitions go to the others; {note}",
                self.label
            );
            self.closed_note = Some(note);
        }
        PollOutcome {
            records: sample.records,
            bytes: sample.bytes,
            elapsed: end.saturating_duration_since(start),
            e2e_mean_us: (sample.e2e_count > 0).then(|| sample.e2e_sum / sample.e2e_count as i64),
            e2e_max_us: (sample.e2e_count > 0).then_some(sample.e2e_max),
            partition: sample.partition,
            offset: sample.offset,
            check_failures: sample.check_failures,
            rebalances,
            assigned,
            rebalance_ended,
            error,
            stop_thread,
        }
    }

    /// Commits what is left (commit=sync), merges this handle's statistics into the run's and closes the consumer
    /// (librdkafka commits the last offsets itself with commit=auto). Safe to call twice.
    pub fn close(&mut self) -> String {
        if self.consumer.is_none() {
            return self.closed_note.clone().unwrap_or_else(|| "already closed".to_string());
        }
        let mut commit_note = String::new();
        if self.settings.commit == Commit::Sync && self.uncommitted {
            if let Err((e, _)) = self.commit() {
                commit_note = format!(", final commit failed: {e}");
            }
        }
        self.record_ends();
        let consumer = self.consumer.take().expect("checked above");
        if self.settings.assignment == Assignment::Subscribe {
            let mut s = consumer.context().state();
            if let Some((number, pause)) = s.closing() {
                log::info!(
                    "{}: rebalance #{number} took {} ms to its assignment: no record came after it",
                    self.label,
                    pause.as_millis()
                );
            }
            self.totals.record_rebalances(ThreadRebalances {
                thread: format!("{}/{}", self.settings.thread_number, self.settings.thread_count),
                count: s.count,
                total: s.total,
                max: s.max,
                partitions_gained: s.gained,
                partitions_lost: s.lost,
            });
        }
        // Leaves the group (subscribe) and commits the last offsets (commit=auto) before returning.
        let close_note = close_bounded(consumer, self.settings.assignment == Assignment::Subscribe, &self.label);
        self.run.merge_consumer(&self.totals);
        let transient: u64 = self.totals.transient_errors.values().sum();
        let transient_note = if transient > 0 {
            format!(", {transient} transient error(s) recovered from {:?}", self.totals.transient_errors)
        } else {
            String::new()
        };
        let rebalance_note = match self.totals.threads.first() {
            Some(t) => format!(
                ", {} rebalance(s) pausing {} ms in all, at most {} ms, {} partition(s) gained, {} lost",
                t.count,
                t.total.as_millis(),
                t.max.as_millis(),
                t.partitions_gained,
                t.partitions_lost
            ),
            None => String::new(),
        };
        format!(
            "closed: {} records in {} samples ({} empty, {} failed){rebalance_note}{transient_note}{commit_note}{close_note}",
            self.totals.records,
            self.totals.samples,
            self.totals.empty_samples,
            self.totals.failed_samples,
        )
    }

    /// The partitions this thread holds now: its static share, or what the group assigned (None: not joined yet).
    fn held(&self) -> Option<Vec<i32>> {
        match (&self.settings.assignment, &self.consumer) {
            (Assignment::Subscribe, Some(c)) => {
                let s = c.context().state();
                (s.count > 0).then(|| s.held.iter().copied().collect())
            }
            _ => Some(self.static_partitions.clone()),
        }
    }

    /// How far partition `p` was read: the offset after the last record this thread got, librdkafka's position
    /// (which a record fetched before a rebalance may have moved), the start of a static assignment, the group's
    /// committed offset, or else where `auto.offset.reset` starts (`low`/`high`: the partition's watermarks).
    fn read_offset(&self, consumer: &BaseConsumer<ConsumerCtx>, p: i32, low: i64, high: i64, left: Duration) -> i64 {
        let own = self.totals.next_offset.get(&p).copied();
        let librdkafka = consumer
            .position()
            .ok()
            .and_then(|tpl| tpl.find_partition(&self.settings.topic, p).map(|e| e.offset()))
            .and_then(|o| o.to_raw())
            .filter(|o| *o >= 0);
        if let Some(o) = own.max(librdkafka) {
            return o;
        }
        if let Some((first, _)) = self.totals.at_start.get(&p) {
            return *first;
        }
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition(&self.settings.topic, p);
        let committed = consumer
            .committed_offsets(tpl, left)
            .ok()
            .and_then(|l| l.find_partition(&self.settings.topic, p).and_then(|e| e.offset().to_raw()))
            .filter(|o| *o >= 0);
        committed.unwrap_or_else(|| match self.settings.client.get("auto.offset.reset").map(String::as_str) {
            Some("latest" | "largest" | "end") => high,
            _ => low,
        })
    }

    /// `stop.on.empty`: every partition this thread holds is read to its end offset, queried from its leader now.
    /// A query that fails (the leader is moving) means "not drained": the thread reads on.
    fn drained(&mut self) -> bool {
        let Some(consumer) = self.consumer.as_ref() else { return true };
        let deadline = Instant::now() + self.settings.timeout;
        let Some(held) = self.held() else {
            // A member the group gives no partition (more threads than partitions) may never see an assignment
            // with the KIP-848 protocol: it is done when the group has committed every partition to its end.
            if self.group_read_to_end(consumer, deadline) {
                log::info!(
                    "{}: holds no partition and the group has read the topic to its end: the thread stops",
                    self.label
                );
                return true;
            }
            self.log_not_drained(format_args!("it holds no partition yet"));
            return false;
        };
        for p in held {
            let left = deadline.saturating_duration_since(Instant::now());
            match consumer.fetch_watermarks(&self.settings.topic, p, left) {
                Ok((low, high)) => {
                    let read = self.read_offset(consumer, p, low, high, left);
                    if read < high {
                        self.log_not_drained(format_args!(
                            "partition {p} is read to offset {read} of {high} ({} left)",
                            high - read
                        ));
                        return false;
                    }
                }
                Err(e) => {
                    let e = EngineError::from_kafka(&e);
                    self.log_not_drained(format_args!("the end of partition {p} could not be read ({e})"));
                    return false;
                }
            }
        }
        if self.not_drained_logged {
            log::info!("{}: all partitions read to their end offsets: the thread stops (stop.on.empty)", self.label);
        }
        true
    }

    /// Every partition of the topic has the group's committed offset at its end offset (asked of the brokers).
    fn group_read_to_end(&self, consumer: &BaseConsumer<ConsumerCtx>, deadline: Instant) -> bool {
        let topic = &self.settings.topic;
        let left = || deadline.saturating_duration_since(Instant::now());
        let Ok(metadata) = consumer.fetch_metadata(Some(topic), left()) else { return false };
        let Some(partitions) =
            metadata.topics().first().map(|t| t.partitions().iter().map(|p| p.id()).collect::<Vec<_>>())
        else {
            return false;
        };
        let mut tpl = TopicPartitionList::new();
        for p in &partitions {
            tpl.add_partition(topic, *p);
        }
        let Ok(committed) = consumer.committed_offsets(tpl, left()) else { return false };
        !partitions.is_empty()
            && partitions.iter().all(|p| {
                let at = committed.find_partition(topic, *p).and_then(|e| e.offset().to_raw());
                match (at, consumer.fetch_watermarks(topic, *p, left())) {
                    (Some(at), Ok((_, high))) => at >= high,
                    // Nothing committed: done only if the partition holds nothing to read.
                    (None, Ok((low, high))) => low >= high,
                    (_, Err(_)) => false,
                }
            })
    }

    fn log_not_drained(&mut self, why: std::fmt::Arguments<'_>) {
        if !self.not_drained_logged {
            log::info!("{}: an empty poll, but {why}: reading on (stop.on.empty stops at the end offsets)", self.label);
            self.not_drained_logged = true;
        }
    }

    /// An outage that has lasted past `timeout.ms` with no record since: unless the brokers answer now (the
    /// partitions may simply be drained), it fails the sample.
    fn outage_outlasted(&mut self) -> Option<EngineError> {
        let since = self.outage.since?;
        if since.elapsed() < self.settings.timeout {
            return None;
        }
        let consumer = self.consumer.as_ref()?;
        let p = self.held().and_then(|h| h.first().copied())?;
        let answer = consumer.fetch_watermarks(&self.settings.topic, p, Duration::from_secs(1));
        if answer.is_ok() {
            end_outage(&mut self.outage, &self.label, "the brokers answer again");
            return None;
        }
        Some(outlasted(&mut self.outage, &self.settings))
    }

    /// At close: how far each held partition was read against its end offset, asked of the brokers (within
    /// timeout.ms; the end known from the start and the records read, when they do not answer); a
    /// partition not read to its end is logged at WARN and named in the summary.
    fn record_ends(&mut self) {
        let Some(consumer) = self.consumer.as_ref() else { return };
        let Some(held) = self.held() else { return };
        let deadline = Instant::now() + self.settings.timeout;
        let topic = self.settings.topic.clone();
        let mut unread = Vec::new();
        let mut stable_ends = Vec::new();
        for p in held {
            let left = deadline.saturating_duration_since(Instant::now());
            let queried = if left.is_zero() { None } else { consumer.fetch_watermarks(&topic, p, left).ok() };
            // The brokers do not answer: the end is at least what was there at the start and what was read.
            let known = || {
                let start = self.totals.at_start.get(&p).copied();
                let read = self.totals.next_offset.get(&p).copied();
                let end = start.map(|(_, end)| end).max(read)?;
                Some((start.map_or(end, |(first, _)| first), end))
            };
            let Some((low, high)) = queried.or_else(|| {
                log::warn!(
                    "{}: the end offset of partition {p} could not be read at the end (within timeout.ms); the end \
                     known to this consumer is used",
                    self.label
                );
                known()
            }) else {
                continue;
            };
            stable_ends.push((p, high));
            let read_to = ReadTo { read_offset: self.read_offset(consumer, p, low, high, left), end_offset: high };
            if read_to.left() > 0 {
                unread.push(format!(
                    "{p} read to offset {} of {} ({} left)",
                    read_to.read_offset,
                    read_to.end_offset,
                    read_to.left()
                ));
            }
            self.totals.record_end(&topic, p, read_to);
        }
        if !unread.is_empty() {
            log::warn!(
                "{}: ended with {} partition(s) not read to their end: {}; those records were not consumed (the \
                 test's duration ended first, or see the errors above)",
                self.label,
                unread.len(),
                unread.join(", ")
            );
        }
        self.log_held_back(&stable_ends, deadline);
    }

    /// With `isolation.level=read_committed` (librdkafka's default) the end offsets above are last-stable offsets: records behind an open
    /// transaction are neither read nor counted as unread. Compared with the high watermarks (a read_uncommitted
    /// query), the partitions where an open transaction holds records back are logged at WARN, so that a consumer
    /// that stopped short of the topic's end is explained.
    fn log_held_back(&self, stable_ends: &[(i32, i64)], deadline: Instant) {
        // (librdkafka's default isolation level is read_committed.)
        if stable_ends.is_empty()
            || self.settings.client.get("isolation.level").is_some_and(|level| level != "read_committed")
        {
            return;
        }
        let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_secs(1));
        let connection = crate::client::settings::connection_properties(&self.settings.client);
        let Ok(high) = crate::client::admin::end_offsets(&connection, &self.settings.topic, left) else { return };
        let held: Vec<String> = stable_ends
            .iter()
            .filter_map(|&(p, stable)| {
                let high = *high.get(usize::try_from(p).ok()?)?;
                (high > stable)
                    .then(|| format!("{p} at {stable} while its high watermark is {high} ({} held)", high - stable))
            })
            .collect();
        if !held.is_empty() {
            log::warn!(
                "{}: isolation.level=read_committed read to the last-stable offset, and an open transaction holds \
                 records behind it in {} partition(s): {}; no read_committed consumer can read them until that \
                 transaction commits or aborts (a producer that died within one: after its transaction.timeout.ms)",
                self.label,
                held.len(),
                held.join(", ")
            );
        }
    }
}

/// librdkafka's errors that it recovers from by itself: a dropped broker connection, all brokers down for a
/// moment, a broker handle replaced, a leader or coordinator being elected.
fn is_transient(e: &KafkaError) -> bool {
    matches!(e, KafkaError::MessageConsumption(_))
        && e.rdkafka_error_code().is_some_and(|c| retry::transient(c) || c == RDKafkaErrorCode::BrokerDestroy)
}

/// Counts and logs a transient error; returns the error to fail the sample with when the outage has lasted past
/// `timeout.ms`.
fn note_transient(
    outage: &mut Outage,
    totals: &mut ConsumerTotals,
    settings: &ConsumerSettings,
    label: &str,
    e: EngineError,
) -> Option<EngineError> {
    totals.record_transient(&e.code);
    outage.errors += 1;
    let since = *outage.since.get_or_insert_with(Instant::now);
    if outage.first.is_none() {
        log::warn!(
            "{label}: {e}; librdkafka reconnects by itself: counted as a transient error, not a failed sample, \
             unless it lasts past timeout.ms ({} ms)",
            settings.timeout.as_millis()
        );
        outage.first = Some(e);
    }
    (since.elapsed() >= settings.timeout).then(|| outlasted(outage, settings))
}

/// The failure of an outage that outlasted `timeout.ms`; the next sample starts a new outage.
fn outlasted(outage: &mut Outage, settings: &ConsumerSettings) -> EngineError {
    let took = outage.since.map_or(Duration::ZERO, |s| s.elapsed());
    let mut e = outage.first.take().unwrap_or_else(|| EngineError::new(Code::Transport, "the brokers do not answer"));
    e.message = format!(
        "{} ({} error(s) in {} ms without a record, longer than timeout.ms {} ms): check that the brokers are up",
        e.message,
        outage.errors,
        took.as_millis(),
        settings.timeout.as_millis()
    );
    *outage = Outage::default();
    e
}

/// Closes a consumer: a group member leaves its group within [`CLOSE_BOUND`] or is left to finish closing in a
/// thread of its own (the returned note says so); a consumer of static partitions closes at once.
fn close_bounded(consumer: config::Created<BaseConsumer<ConsumerCtx>>, in_group: bool, label: &str) -> String {
    if !in_group {
        return String::new();
    }
    if let Err(e) = consumer.close_queue() {
        log::warn!("{label}: leaving the group failed to start: {e}");
        return String::new();
    }
    let start = Instant::now();
    // Serves the rebalance callbacks the close needs (the revoke of what this member holds) until it is done.
    while !consumer.closed() && start.elapsed() < CLOSE_BOUND {
        let _ = consumer.poll(INTERRUPT_CHECK);
    }
    if consumer.closed() {
        return String::new();
    }
    log::warn!(
        "{label}: the consumer had not left its group after {} s (a rebalance still running?); it goes on closing \
         in the background and the test ends",
        CLOSE_BOUND.as_secs()
    );
    let spawned = std::thread::Builder::new().name("kafka-consumer-close".into()).spawn(move || drop(consumer));
    if spawned.is_err() {
        log::warn!("{label}: no thread for the background close: it was finished here");
    }
    format!(", left its group in the background (not closed within {} s)", CLOSE_BOUND.as_secs())
}

/// Ends an outage: logs how long it lasted.
fn end_outage(outage: &mut Outage, label: &str, how: &str) {
    if let Some(since) = outage.since.take() {
        log::info!(
            "{label}: recovered after {} ms and {} transient error(s): {how}",
            since.elapsed().as_millis(),
            outage.errors
        );
        *outage = Outage::default();
    }
}

impl Drop for ConsumerHandle {
    fn drop(&mut self) {
        if self.consumer.is_some() {
            self.close();
        }
    }
}

/// Measures one record: its size and its produce→consume latency.
fn record(
    m: &BorrowedMessage<'_>,
    at: Instant,
    settings: &ConsumerSettings,
    totals: &mut ConsumerTotals,
    sample: &mut SampleAcc,
) {
    let now_us = stats::epoch_micros();
    let mut bytes = m.key().map_or(0, <[u8]>::len) + m.payload().map_or(0, <[u8]>::len);
    let mut sent_us = None;
    if let Some(headers) = m.headers() {
        for h in headers.iter() {
            let value = h.value.unwrap_or_default();
            bytes += h.key.len() + value.len();
            if h.key == SENT_US_HEADER {
                if let Ok(b) = <[u8; 8]>::try_from(value) {
                    sent_us = Some(i64::from_be_bytes(b));
                }
            }
        }
    }
    let e2e = match (sent_us, m.timestamp().to_millis()) {
        (Some(sent), _) => Some((now_us - sent, LatencySource::Header)),
        (None, Some(ms)) if ms > 0 => Some((now_us - ms * 1000, LatencySource::Timestamp)),
        _ => None,
    };
    totals.record(m.partition(), m.offset(), bytes, e2e, at);
    sample.records += 1;
    sample.bytes += bytes as u64;
    sample.partition = m.partition();
    sample.offset = m.offset();
    if let Some((us, _)) = e2e {
        sample.e2e_sum += us;
        sample.e2e_count += 1;
        sample.e2e_max = sample.e2e_max.max(us);
    }
    if let Some(regex) = &settings.check_regex {
        check_content(regex, m.payload().unwrap_or_default(), sample);
    }
}

/// The topic's partitions, waiting a little for a topic created a moment ago (by the producers of the same test).
/// Where a statically assigned partition starts: the offset to assign, and (for the summary) the first offset that
/// will be read and the partition's end offset at that moment.
struct Start {
    offset: Offset,
    first: i64,
    end: i64,
}

/// The group's committed offsets of `partitions`, retried while the coordinator is not ready, within `timeout.ms`;
/// a partition without a committed offset starts at `auto.offset.reset` (earliest by default).
fn start_offsets(
    consumer: &BaseConsumer<ConsumerCtx>,
    settings: &ConsumerSettings,
    partitions: &[i32],
) -> Result<Vec<(i32, Start)>, EngineError> {
    if partitions.is_empty() {
        return Ok(Vec::new());
    }
    let mut tpl = TopicPartitionList::new();
    for p in partitions {
        tpl.add_partition(&settings.topic, *p);
    }
    let deadline = Instant::now() + settings.timeout;
    let (committed, attempts) = retry::until_answered(deadline, |left| {
        consumer.committed_offsets(tpl.clone(), left).and_then(|list| {
            // The request may succeed while single partitions carry the coordinator's error.
            match list.elements().iter().find_map(|e| e.error().err()) {
                Some(e) => Err(e),
                None => Ok(list),
            }
        })
    })
    .map_err(|(e, attempts)| {
        let mut err = EngineError::from_kafka(&e);
        err.message = format!(
            "the committed offsets of group '{}' for topic '{}' could not be read within {} ms (timeout.ms, \
             {attempts} attempt(s)): {}; check that the broker's group coordinator is up",
            crate::echo::clip(&settings.group),
            settings.topic,
            settings.timeout.as_millis(),
            err.message
        );
        err
    })?;
    if attempts > 1 {
        log::info!(
            "group '{}': committed offsets read after {attempts} attempts (the coordinator was not ready yet)",
            crate::echo::clip(&settings.group)
        );
    }
    let reset = settings.client.get("auto.offset.reset").map(String::as_str).unwrap_or("earliest");
    let mut starts = Vec::with_capacity(partitions.len());
    for p in partitions {
        // A topic created a moment ago (topic.create=true on the producers) may not have elected its leaders yet.
        let (low, high) = retry::until_answered(deadline.max(Instant::now() + Duration::from_secs(1)), |left| {
            consumer.fetch_watermarks(&settings.topic, *p, left)
        })
        .map(|(offsets, _)| offsets)
        .map_err(|(e, attempts)| {
            let mut err = EngineError::from_kafka(&e);
            err.message = format!(
                "the offsets of partition {p} of topic '{}' could not be read ({attempts} attempt(s)): {}",
                settings.topic, err.message
            );
            err
        })?;
        let start = match committed.find_partition(&settings.topic, *p).map(|e| e.offset()) {
            Some(Offset::Offset(n)) if n >= 0 => Start { offset: Offset::Offset(n), first: n.max(low), end: high },
            _ => match reset {
                "latest" | "largest" | "end" => Start { offset: Offset::End, first: high, end: high },
                "earliest" | "smallest" | "beginning" => Start { offset: Offset::Beginning, first: low, end: high },
                // auto.offset.reset=error: librdkafka reports the missing offset on the first poll.
                _ => Start { offset: Offset::Stored, first: low, end: high },
            },
        };
        starts.push((*p, start));
    }
    Ok(starts)
}

fn topic_partitions(
    consumer: &BaseConsumer<ConsumerCtx>,
    settings: &ConsumerSettings,
) -> Result<Vec<i32>, EngineError> {
    let servers = servers(&settings.client);
    let advice = "; check bootstrap.servers and that the broker is running";
    let fetch = Fetch { servers, timeout: settings.timeout, advice };
    metadata::topic_partitions(consumer, &settings.topic, settings.timeout, fetch)?.ok_or_else(|| {
        EngineError::new(
            Code::UnknownTopicOrPart,
            format!(
                "topic '{}' does not exist on {servers} (waited {} ms, timeout.ms); create it or start the \
                     producers first (topic.create=true)",
                settings.topic,
                settings.timeout.as_millis()
            ),
        )
    })
}

fn consumer_error(e: &KafkaError, settings: &ConsumerSettings) -> EngineError {
    let mut err = EngineError::from_kafka(e);
    if err.code == Code::UnknownTopicOrPart {
        err.message = format!("topic '{}': {}", settings.topic, err.message);
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn an_eager_rebalance_pauses_from_the_revocation_to_the_first_record() {
        let t0 = Instant::now();
        let mut s = RebalanceState::default();
        // The join: subscription at t0, assignment at 300 ms, first record at 450 ms.
        s.subscribed(t0);
        let join = s.assigned(&[0, 1, 2, 3], t0 + ms(300)).unwrap();
        assert_eq!(join, Counted { number: 1, took: ms(300), gained: 4, lost: 0 });
        assert_eq!(s.ended, None, "the pause runs on until a record");
        assert_eq!(s.record_arrived(t0 + ms(450)), Some((1, ms(450))));
        assert_eq!(s.record_arrived(t0 + ms(460)), None, "only the first record ends it");
        // Eager: everything revoked at 1 s, 2 of 4 assigned back at 1.8 s, a record at 2.845 s.
        s.revoking(t0 + ms(1000));
        s.revoked(&[0, 1, 2, 3]);
        let moved = s.assigned(&[0, 2], t0 + ms(1800)).unwrap();
        assert_eq!(moved, Counted { number: 2, took: ms(800), gained: 0, lost: 2 });
        assert_eq!(s.record_arrived(t0 + ms(2845)), Some((2, ms(1845))));
        assert_eq!((s.count, s.total, s.max), (2, ms(2295), ms(1845)));
        assert_eq!((s.gained, s.lost), (4, 2));
        assert_eq!(s.ended, Some((2, ms(1845))), "the sample that got the record reports it");
        assert_eq!(s.held.iter().copied().collect::<Vec<_>>(), vec![0, 2]);
    }

    #[test]
    fn an_incremental_protocol_counts_what_changes() {
        let t0 = Instant::now();
        let mut s = RebalanceState::default();
        s.subscribed(t0);
        s.assigned(&[0, 1, 2], t0 + ms(100)).unwrap();
        s.record_arrived(t0 + ms(120));
        // Cooperative: only partition 2 is revoked; the follow-on assignment adds nothing.
        s.revoking(t0 + ms(1000));
        s.revoked(&[2]);
        assert_eq!(s.assigned(&[], t0 + ms(1005)), Some(Counted { number: 2, took: ms(5), gained: 0, lost: 1 }));
        assert_eq!(s.record_arrived(t0 + ms(1010)), Some((2, ms(10))));
        // An assignment of nothing new with nothing revoked is no rebalance of this thread.
        assert_eq!(s.assigned(&[], t0 + ms(2000)), None);
        assert_eq!(s.assigned(&[1], t0 + ms(2000)), None);
        // Gaining a partition without giving any up: counted, no pause, the sample marked at once.
        assert_eq!(s.assigned(&[5], t0 + ms(3000)), Some(Counted { number: 3, took: ms(0), gained: 1, lost: 0 }));
        assert_eq!(s.ended, Some((3, ms(0))));
        assert!(s.awaiting.is_none());
        assert_eq!((s.count, s.total, s.max, s.gained, s.lost), (3, ms(130), ms(120), 4, 1));
    }

    #[test]
    fn a_pause_no_record_ends_is_timed_to_its_assignment() {
        let t0 = Instant::now();
        let mut s = RebalanceState::default();
        s.subscribed(t0);
        s.assigned(&[0], t0 + ms(200)).unwrap();
        // Another rebalance before any record: the first pause ends at its assignment, no sample marked.
        s.revoking(t0 + ms(5000));
        assert_eq!((s.total, s.ended), (ms(200), None));
        s.revoked(&[0]);
        // Assigned nothing: nothing to wait for, the pause ends there and the sample is marked.
        assert_eq!(s.assigned(&[], t0 + ms(5300)), Some(Counted { number: 2, took: ms(300), gained: 0, lost: 1 }));
        assert_eq!(s.ended, Some((2, ms(300))));
        s.ended = None;
        // Assigned again, then the thread ends with no record: timed to the assignment.
        s.revoking(t0 + ms(6000));
        s.assigned(&[1], t0 + ms(6400)).unwrap();
        assert_eq!(s.closing(), Some((3, ms(400))));
        assert_eq!((s.count, s.total, s.max, s.ended), (3, ms(900), ms(400), None));
    }
}
