//! The consumer engine: one sample = one poll of up to `max.records` records, on the JMeter thread.
//!
//! Flow of one sample ([`ConsumerHandle::poll`]): wait up to `poll.timeout.ms` for the first record, then take
//! whatever librdkafka has already fetched, up to `max.records`, without waiting again (Java's `poll` semantics);
//! every record is measured (size, produce→consume latency from the `kn.sent.us` header or the Kafka timestamp)
//! and optionally checked ([`verdict`]: the audit sequence, `check.regex`); with `commit=sync` the offsets are committed
//! before the sample ends. The sample's whole verdict (EMPTY, SEQUENCE_ERROR, CONTENT_MISMATCH, stop.on.empty) is
//! decided here, in the engine.
//!
//! Partitions are assigned statically by default (`assignment=all` or a list, split across the JMeter threads by
//! thread number), so that starting or stopping threads never triggers a rebalance; `assignment=subscribe` joins
//! the group instead, and every rebalance is logged with its duration ([`ConsumerCtx`]).

pub mod settings;
pub mod stats;
pub mod verdict;

use std::collections::HashMap;
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
use crate::report::Run;
use crate::schema::RecordDecoder;
use settings::{Assignment, Commit, ConsumerSettings};
use stats::{ConsumerTotals, LatencySource};
use verdict::{check_content, check_schema, check_sequence, SampleAcc};
/// Longest wait inside librdkafka between two checks for an interrupt.
const INTERRUPT_CHECK: Duration = Duration::from_millis(100);

/// What one sample did: the numbers a JMeter `SampleResult` needs.
#[derive(Debug, Clone, PartialEq)]
pub struct PollOutcome {
    pub records: u32,
    /// Key + value + header bytes of the records.
    pub bytes: u64,
    /// Start of the poll to the last record (or to the end of the wait when nothing came), commit included.
    pub elapsed: Duration,
    /// Mean and largest produce→consume latency of the sample's records, if any had a send time.
    pub e2e_mean_us: Option<i64>,
    pub e2e_max_us: Option<i64>,
    /// Partition and offset of the last record, -1 if none.
    pub partition: i32,
    pub offset: i64,
    /// Records that failed `check.sequence` or their schema decoding (`value.decode`, `key.decode`).
    pub check_failures: u32,
    /// Rebalances this consumer has gone through so far, and the partitions it holds now.
    pub rebalances: u64,
    pub assigned: u32,
    /// Why the sample failed: a Kafka error, a failed check, EMPTY with `fail.on.empty`, INTERRUPTED.
    pub error: Option<EngineError>,
    /// `stop.on.empty`: this thread's partitions are drained, the JMeter thread should stop.
    pub stop_thread: bool,
}

/// Rebalance bookkeeping, written by librdkafka's rebalance callback (on the thread that polls).
#[derive(Debug, Default)]
struct RebalanceState {
    /// When the current rebalance began: the subscription, or the revocation of the previous assignment.
    started: Option<Instant>,
    count: u64,
    total: Duration,
    assigned: Vec<i32>,
}

/// The consumer's context: the client hooks every client has, and rebalances timed and logged.
pub struct ConsumerCtx {
    client: ClientCtx,
    label: String,
    rebalance: Mutex<RebalanceState>,
}

impl ConsumerCtx {
    fn state(&self) -> std::sync::MutexGuard<'_, RebalanceState> {
        self.rebalance.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn revoked(&self, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(tpl) = rebalance {
            let mut s = self.state();
            s.started.get_or_insert_with(Instant::now);
            log::info!("{}: rebalance: partitions {:?} revoked", self.label, partitions_of(tpl));
        }
    }

    fn rebalanced(&self, rebalance: &Rebalance<'_>) {
        match rebalance {
            Rebalance::Assign(tpl) => {
                let mut s = self.state();
                let took = s.started.take().map_or(Duration::ZERO, |t| t.elapsed());
                s.count += 1;
                s.total += took;
                s.assigned = partitions_of(tpl);
                log::info!(
                    "{}: rebalance #{} took {} ms: partitions {:?} assigned",
                    self.label,
                    s.count,
                    took.as_millis(),
                    s.assigned
                );
            }
            Rebalance::Revoke(_) => self.state().assigned.clear(),
            Rebalance::Error(e) => log::warn!("{}: rebalance failed: {e}", self.label),
        }
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
    consumer: Option<BaseConsumer<ConsumerCtx>>,
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
        let ctx = ConsumerCtx { client: ClientCtx::default(), label: label.clone(), rebalance: Mutex::default() };
        let consumer: BaseConsumer<ConsumerCtx> = config::create(&settings.client, ctx, "consumer")?;
        let partitions = topic_partitions(&consumer, &settings)?;
        let mut static_partitions = Vec::new();
        let mut totals = ConsumerTotals::default();
        match &settings.assignment {
            Assignment::Subscribe => {
                consumer.context().state().started = Some(Instant::now());
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
                Some(Err(e)) => {
                    end = Instant::now();
                    error = Some(consumer_error(&e, &self.settings));
                    break;
                }
                None if sample.records > 0 => break,
                None => {
                    end = Instant::now();
                    if end >= deadline {
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
                if let Err(e) = self.commit() {
                    error.get_or_insert(e);
                }
                end = Instant::now();
            }
        }
        self.outcome(start, end, sample, error)
    }

    /// Commits the offsets of the records returned so far (commit=sync), waiting for the broker.
    fn commit(&mut self) -> Result<(), EngineError> {
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
                let mut err = EngineError::from_kafka(&e);
                err.message =
                    format!("committing the offsets to group '{}' failed: {}", self.settings.group, err.message);
                Err(err)
            }
        }
    }

    fn outcome(&mut self, start: Instant, end: Instant, sample: SampleAcc, error: Option<EngineError>) -> PollOutcome {
        let (error, stop_thread) = verdict::decide(&self.settings, &sample, error);
        self.totals.samples += 1;
        if sample.records == 0 {
            self.totals.empty_samples += 1;
        }
        self.totals.check_failures += sample.check_failures as u64;
        if let Some(e) = &error {
            self.totals.failed_samples += 1;
            self.totals.record_error(&e.code);
        }
        let (rebalances, assigned) = match (&self.consumer, &self.settings.assignment) {
            (Some(c), Assignment::Subscribe) => {
                let s = c.context().state();
                (s.count, s.assigned.len() as u32)
            }
            _ => (0, self.static_partitions.len() as u32),
        };
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
            error,
            stop_thread,
        }
    }

    /// Commits what is left (commit=sync), merges this handle's statistics into the run's and closes the consumer
    /// (librdkafka commits the last offsets itself with commit=auto). Safe to call twice.
    pub fn close(&mut self) -> String {
        if self.consumer.is_none() {
            return "already closed".to_string();
        }
        let mut commit_note = String::new();
        if self.settings.commit == Commit::Sync && self.uncommitted {
            if let Err(e) = self.commit() {
                commit_note = format!(", final commit failed: {e}");
            }
        }
        let consumer = self.consumer.take().expect("checked above");
        {
            let s = consumer.context().state();
            self.totals.rebalances = s.count;
            self.totals.rebalance_time = s.total;
        }
        // Leaves the group (subscribe) and commits the last offsets (commit=auto) before returning.
        drop(consumer);
        self.run.merge_consumer(&self.totals);
        format!(
            "closed: {} records in {} samples ({} empty, {} failed), {} rebalance(s) taking {} ms{commit_note}",
            self.totals.records,
            self.totals.samples,
            self.totals.empty_samples,
            self.totals.failed_samples,
            self.totals.rebalances,
            self.totals.rebalance_time.as_millis()
        )
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
    totals.record(m.partition(), bytes, e2e, at);
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
            crate::client::limits::clip(&settings.group),
            settings.topic,
            settings.timeout.as_millis(),
            err.message
        );
        err
    })?;
    if attempts > 1 {
        log::info!(
            "group '{}': committed offsets read after {attempts} attempts (the coordinator was not ready yet)",
            crate::client::limits::clip(&settings.group)
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
