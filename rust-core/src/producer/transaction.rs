//! Transactions of a producer with `transactional.id.prefix` (Kafka's exactly-once write path, KIP-98).
//!
//! Each JMeter thread's producer gets `transactional.id = <prefix>-<thread number>`, so a test started again with
//! the same prefix fences the previous run's producers (the broker bumps the epoch; the old producer's next
//! transactional request fails with a fatal "fenced" error). `transaction.samples` samples make one transaction:
//! the last of them commits (or, for `transaction.abort.percent` of the transactions, aborts on purpose) and its
//! sample ends when the coordinator answered. A commit that gets no answer (its coordinator moving after a broker
//! died) is called again until it is answered or `transaction.timeout.ms` has passed: the coordinator may have
//! decided to commit already, and then completes the commit whatever the producer does next, so aborting it would
//! report as failed records that read_committed consumers see. Past that wait its outcome is unknown and counted
//! so (`in_doubt`). A commit refused by the coordinator is aborted so the thread can go on. When the abort
//! fails too, or librdkafka reports another fatal error, the next sample replaces the producer (same
//! transactional.id); a fenced producer stays unusable, and the thread's later samples fail at once with that cause
//! instead of hanging.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rdkafka::error::KafkaError;
use rdkafka::producer::Producer;
use rdkafka::types::RDKafkaErrorCode;
use serde::Serialize;

use super::policy::Policy;
use super::settings::Scope;
use super::shared::{transactional_id, KafkaProducer};
use super::stats::{add_counters, new_histogram};
use super::{ProducerHandle, SampleInput, SampleOutcome};
use crate::client::settings::number;
use crate::error::{error_name, Code, EngineError};

/// The transaction settings of a producer (`transactional.id.prefix` set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnSettings {
    /// `transactional.id` is `<prefix>-<thread number>`.
    pub prefix: String,
    /// Samples per transaction; the last one commits.
    pub samples: u32,
    /// Share of transactions aborted on purpose, 0-100.
    pub abort_percent: u32,
    /// `transaction.timeout.ms` (librdkafka's default when not set): named when the broker refuses it.
    pub timeout_ms: u64,
}

/// librdkafka's default `transaction.timeout.ms`.
const DEFAULT_TRANSACTION_TIMEOUT_MS: u64 = 60_000;
/// Kafka's default `transaction.max.timeout.ms`, the broker's upper bound for a producer's transaction timeout.
const BROKER_DEFAULT_MAX_TIMEOUT_MS: u64 = 900_000;

/// Reads the transaction settings; refuses a prefix on a producer that cannot be transactional (no idempotence,
/// acks other than all, a producer shared by threads) instead of silently upgrading it.
pub fn parse(
    sampler: &BTreeMap<&str, &str>,
    client: &BTreeMap<String, String>,
    origin: &BTreeMap<String, &'static str>,
    policy: Policy,
    scope: Scope,
) -> Result<Option<TxnSettings>, EngineError> {
    let samples: u32 = number(sampler, "transaction.samples", 1, 1, 1_000_000)?;
    let abort_percent: u32 = number(sampler, "transaction.abort.percent", 0, 0, 100)?;
    let Some(prefix) = sampler.get("transactional.id.prefix").map(|p| p.trim().to_string()) else {
        if sampler.contains_key("transaction.samples") || sampler.contains_key("transaction.abort.percent") {
            return Err(EngineError::config(
                "transaction.samples and transaction.abort.percent need transactional.id.prefix: set a prefix to make \
                 the producer transactional, or remove them",
            ));
        }
        return Ok(None);
    };
    if client.contains_key("transactional.id") {
        return Err(EngineError::config(
            "transactional.id: set transactional.id.prefix instead; each thread's producer needs an id of its own \
             (<prefix>-<thread number>), one id shared by all threads would fence all but one of them",
        ));
    }
    if prefix.is_empty() || prefix.len() > 200 || prefix.chars().any(char::is_control) {
        return Err(EngineError::config(
            "transactional.id.prefix: use 1 to 200 printable characters (each thread's id is <prefix>-<thread number>)",
        ));
    }
    let from = |k: &str| origin.get(k).copied().unwrap_or("default");
    let acks = client.get("acks").map_or("all", String::as_str);
    if acks != "all" && acks != "-1" {
        return Err(EngineError::config(format!(
            "transactional.id.prefix needs acks=all, but acks is {acks} ({}): transactions require an idempotent \
             producer. Use policy=reliability (acks=all, idempotence) or set acks=all",
            from("acks")
        )));
    }
    if client.get("enable.idempotence").map(String::as_str) != Some("true") {
        return Err(EngineError::config(format!(
            "transactional.id.prefix needs enable.idempotence=true, but it is {} ({}): use policy=reliability or set \
             enable.idempotence=true",
            client.get("enable.idempotence").map_or("false", String::as_str),
            if policy == Policy::Capacity && from("enable.idempotence") == "default" {
                "policy=capacity"
            } else {
                from("enable.idempotence")
            }
        )));
    }
    if scope != Scope::Thread {
        return Err(EngineError::config(
            "transactional.id.prefix needs producer.scope=thread: a transaction belongs to one producer, and the \
             threads sharing a producer (producer.scope=test) would commit and abort each other's messages",
        ));
    }
    let timeout_ms = transaction_timeout(client)?;
    Ok(Some(TxnSettings { prefix, samples, abort_percent, timeout_ms }))
}

/// `transaction.timeout.ms`, checked here so the message says what the value must be (librdkafka's range, and at least
/// the messages' wait: librdkafka refuses a transaction that would time out before its messages do).
fn transaction_timeout(client: &BTreeMap<String, String>) -> Result<u64, EngineError> {
    let Some(raw) = client.get("transaction.timeout.ms") else { return Ok(DEFAULT_TRANSACTION_TIMEOUT_MS) };
    let ms = raw.trim().parse::<u64>().ok().filter(|ms| (1000..=i32::MAX as u64).contains(ms)).ok_or_else(|| {
        EngineError::config(format!(
            "transaction.timeout.ms: '{}' is not valid; use milliseconds from 1000 to {} (librdkafka's default is \
             {DEFAULT_TRANSACTION_TIMEOUT_MS}), at most the brokers' transaction.max.timeout.ms (Kafka's default: \
             {BROKER_DEFAULT_MAX_TIMEOUT_MS})",
            crate::echo::clip(raw),
            i32::MAX
        ))
    })?;
    let message_timeout = client.get("message.timeout.ms").and_then(|v| v.parse::<u64>().ok());
    if let Some(wait) = message_timeout.filter(|wait| *wait > ms) {
        return Err(EngineError::config(format!(
            "transaction.timeout.ms: {ms} is shorter than a message's wait for its acknowledgement ({wait} ms: \
             delivery.timeout.ms, or timeout.ms when it is not set); a transaction must not time out before its \
             messages. Raise transaction.timeout.ms to at least {wait} or lower timeout.ms"
        )));
    }
    Ok(ms)
}

/// The cause of a failed `init_transactions`: a transaction timeout above the broker's limit is the test's
/// configuration, so it says which two settings disagree (with the broker's limit when it can be read: `limit`).
pub(super) fn init_failed(
    e: &KafkaError,
    settings: &TxnSettings,
    id: &str,
    timeout: Duration,
    limit: impl FnOnce() -> Result<Option<String>, EngineError>,
) -> EngineError {
    let code = match e {
        KafkaError::Transaction(t) => Some(t.code()),
        other => other.rdkafka_error_code(),
    };
    if code != Some(RDKafkaErrorCode::InvalidTransactionTimeout) {
        return explain(e, "initialising the transactions (init_transactions)", id, timeout).0;
    }
    let limit = match limit() {
        Ok(Some(max)) => format!("the broker's transaction.max.timeout.ms, {max} ms"),
        Ok(None) => format!(
            "the broker's transaction.max.timeout.ms (the broker did not report it; Kafka's default is \
             {BROKER_DEFAULT_MAX_TIMEOUT_MS} ms)"
        ),
        Err(why) => format!(
            "the broker's transaction.max.timeout.ms (it could not be read: {}; Kafka's default is \
             {BROKER_DEFAULT_MAX_TIMEOUT_MS} ms)",
            why.message
        ),
    };
    EngineError::config(format!(
        "transaction.timeout.ms is {} ms, above {limit}: the transaction coordinator refused the producer \
         '{id}' (INVALID_TRANSACTION_TIMEOUT). Lower transaction.timeout.ms to at most the broker's limit, or raise \
         transaction.max.timeout.ms on the brokers",
        settings.timeout_ms
    ))
}

/// How a sample's transaction ended, as the JTL shows it (the result layout's `transaction` slot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TxnEnd {
    /// Not a transactional producer, or the sample failed.
    #[default]
    None = 0,
    /// The sample's commit was acknowledged: responseCode OK.
    Committed = 1,
    /// Aborted on purpose (`transaction.abort.percent`): a successful sample, responseCode ABORTED.
    Aborted = 2,
    /// The transaction stays open for the next sample (`transaction.samples` > 1): its messages are acknowledged
    /// but not yet visible to read_committed consumers.
    Open = 3,
}

/// Per-handle transaction state.
pub(super) struct Txn {
    pub(super) settings: TxnSettings,
    /// A transaction was begun and not yet ended.
    pub(super) open: bool,
    /// Samples sent in the open transaction.
    pub(super) samples_in: u32,
    /// Records acknowledged in the open transaction.
    pub(super) records_in: u64,
    /// Transactions ended so far (committed, aborted or failed): the abort pattern's counter.
    ended: u64,
    /// Transactions aborted on purpose so far.
    aborted_on_purpose: u64,
    /// Fenced: the producer cannot be used any more (another one owns its transactional.id); every later sample
    /// fails with this.
    pub(super) dead: Option<EngineError>,
    /// The producer is unusable but not fenced (an abort that timed out while the coordinator moved, or a fatal
    /// error such as the broker's INVALID_TXN_STATE for it): the next sample first replaces it, as librdkafka says
    /// to after a fatal error, so the thread goes on once the coordinator answers again.
    replace_producer: bool,
}

impl Txn {
    pub(super) fn new(settings: TxnSettings) -> Txn {
        Txn {
            settings,
            open: false,
            samples_in: 0,
            records_in: 0,
            ended: 0,
            aborted_on_purpose: 0,
            dead: None,
            replace_producer: false,
        }
    }

    /// Whether the transaction ending now is aborted on purpose: spread evenly, so that after n transactions
    /// exactly floor(n * percent / 100) were aborted (50 %: every second one).
    pub(super) fn abort_next(&mut self) -> bool {
        let n = self.ended + 1;
        let abort = self.aborted_on_purpose < n * self.settings.abort_percent as u64 / 100;
        if abort {
            self.aborted_on_purpose += 1;
        }
        abort
    }

    /// After a fatal error, or an abort that failed: a fenced producer stays dead (another producer owns the
    /// transactional.id now: taking it back would fence that one), any other is replaced by the next sample.
    fn unusable(&mut self, err: &EngineError) {
        if err.code == Code::Fenced {
            self.dead = Some(err.clone());
        } else {
            self.replace_producer = true;
        }
    }

    /// Forgets the transaction that just ended.
    pub(super) fn ended(&mut self) {
        self.ended += 1;
        self.open = false;
        self.samples_in = 0;
        self.records_in = 0;
    }
}

/// A transactional call's error, named for the JTL: fenced producers say FENCED, whatever librdkafka's code
/// (its local `_FENCED`, the broker's PRODUCER_FENCED or INVALID_PRODUCER_EPOCH); a timed-out commit or abort says
/// TXN_TIMED_OUT. Whether the producer can go on is returned too.
pub(super) fn explain(e: &KafkaError, what: &str, id: &str, timeout: Duration) -> (EngineError, Fatality) {
    let (code, fatal, abortable) = match e {
        KafkaError::Transaction(t) => (t.code(), t.is_fatal(), t.txn_requires_abort()),
        other => (other.rdkafka_error_code().unwrap_or(RDKafkaErrorCode::Fail), false, false),
    };
    let fenced = matches!(
        code,
        RDKafkaErrorCode::Fenced | RDKafkaErrorCode::ProducerFenced | RDKafkaErrorCode::InvalidProducerEpoch
    );
    let err = if fenced {
        EngineError::new(
            Code::Fenced,
            format!(
                "{what}: the producer with transactional.id '{id}' was fenced: another producer (another test with \
                 the same transactional.id.prefix) took over that id; this thread's producer cannot send any more. \
                 Give each concurrent test its own transactional.id.prefix ({e})"
            ),
        )
    } else if matches!(code, RDKafkaErrorCode::OperationTimedOut | RDKafkaErrorCode::RequestTimedOut) {
        EngineError::new(
            Code::TxnTimedOut,
            format!(
                "{what} got no answer from the transaction coordinator within {} ms (timeout.ms): {e}",
                timeout.as_millis()
            ),
        )
    } else {
        EngineError::named(error_name(code), format!("{what}: {e}"))
    };
    let fatality = if fenced || fatal {
        Fatality::Fatal
    } else if abortable {
        Fatality::Abortable
    } else {
        Fatality::Retriable
    };
    (err, fatality)
}

/// What a transactional error leaves of the producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fatality {
    /// Unusable: every later sample fails.
    Fatal,
    /// The transaction must be aborted, then the producer goes on.
    Abortable,
    /// The call may be made again (librdkafka: retriable), or the transaction aborted.
    Retriable,
}

/// How a commit did not end in a commit.
pub(super) enum Commit {
    /// The coordinator (or librdkafka) answered with an error: the transaction is not committed.
    Refused(KafkaError),
    /// No answer while the commit could still complete (see [`ProducerHandle::commit`]): the sample fails with this.
    InDoubt(EngineError),
}

/// The shortest wait a commit call is given, so that the last try before `transaction.timeout.ms` is a real one.
const COMMIT_SLICE_MIN: Duration = Duration::from_millis(100);

/// The transaction counts of a handle (or of the run, merged).
#[derive(Debug, Clone)]
pub struct TxnTotals {
    /// Transactions committed.
    pub committed: u64,
    /// Transactions aborted on purpose (`transaction.abort.percent`).
    pub aborted: u64,
    /// Transactions whose commit failed (the coordinator refused it, or a message failed): none of their records
    /// is visible.
    pub failed: u64,
    /// Transactions whose commit got no answer within `transaction.timeout.ms` (or the test was stopped while it
    /// waited): the coordinator may still complete them, so their records may become visible.
    pub in_doubt: u64,
    /// Records in committed transactions.
    pub records_committed: u64,
    /// Records in aborted transactions.
    pub records_aborted: u64,
    /// Records in transactions in doubt.
    pub records_in_doubt: u64,
    /// Commit call to the coordinator's answer, in microseconds.
    pub commit_us: Histogram<u64>,
}

impl Default for TxnTotals {
    fn default() -> Self {
        TxnTotals {
            committed: 0,
            aborted: 0,
            failed: 0,
            in_doubt: 0,
            records_committed: 0,
            records_aborted: 0,
            records_in_doubt: 0,
            commit_us: new_histogram(),
        }
    }
}

impl TxnTotals {
    /// Adds another handle's counts (on close).
    pub fn merge(&mut self, other: &TxnTotals) {
        add_counters!(self, other: committed, aborted, failed, in_doubt, records_committed, records_aborted, records_in_doubt);
        let _ = self.commit_us.add(&other.commit_us);
    }

    pub(super) fn record_commit(&mut self, took: Duration, records: u64) {
        self.committed += 1;
        self.records_committed += records;
        self.commit_us.saturating_record(took.as_micros().max(1) as u64);
    }

    /// The summary JSON's `transactions` object.
    pub fn summary(&self) -> TxnSummary {
        let h = &self.commit_us;
        TxnSummary {
            committed: self.committed,
            aborted: self.aborted,
            failed: self.failed,
            in_doubt: self.in_doubt,
            records_committed: self.records_committed,
            records_aborted: self.records_aborted,
            records_in_doubt: self.records_in_doubt,
            commit_us: CommitTime { p50: h.value_at_quantile(0.50), p99: h.value_at_quantile(0.99), max: h.max() },
        }
    }

    /// The report's line about transactions.
    pub fn line(&self) -> String {
        let doubt = if self.in_doubt > 0 {
            format!(
                ", {} in doubt ({} records: the commit got no answer; read_committed consumers may see them)",
                self.in_doubt, self.records_in_doubt
            )
        } else {
            String::new()
        };
        format!(
            "transactions: {} committed ({} records), {} aborted on purpose or after a failure ({} records), {} \
             failed{doubt}; commit p50 {:.2} ms, p99 {:.2} ms",
            self.committed,
            self.records_committed,
            self.aborted,
            self.records_aborted,
            self.failed,
            self.commit_us.value_at_quantile(0.50) as f64 / 1000.0,
            self.commit_us.value_at_quantile(0.99) as f64 / 1000.0,
        )
    }
}

/// See [`TxnTotals::summary`] (field names are part of the file format).
#[derive(Serialize)]
pub struct TxnSummary {
    committed: u64,
    aborted: u64,
    failed: u64,
    in_doubt: u64,
    records_committed: u64,
    records_aborted: u64,
    records_in_doubt: u64,
    commit_us: CommitTime,
}

#[derive(Serialize)]
struct CommitTime {
    p50: u64,
    p99: u64,
    max: u64,
}

/// Times a transactional call.
pub(super) fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let r = f();
    (r, start.elapsed())
}

impl ProducerHandle {
    /// One sample of a transactional producer: begins a transaction if none is open, sends the sample's messages,
    /// and with the transaction's last sample commits (or aborts on purpose); the sample ends with the coordinator's
    /// answer. A failed message or commit aborts the transaction, so the thread goes on with the next one.
    pub(super) fn send_in_transaction(&mut self, input: SampleInput<'_>) -> SampleOutcome {
        let Some(mut txn) = self.txn.take() else { return self.send_messages(input) };
        let outcome = self.transaction_sample(&mut txn, input);
        self.txn = Some(txn);
        outcome
    }

    fn transaction_sample(&mut self, txn: &mut Txn, input: SampleInput<'_>) -> SampleOutcome {
        let count = self.settings.messages_per_sample;
        let timeout = self.settings.timeout;
        let id = transactional_id(&txn.settings.prefix, self.settings.thread_number);
        let Some(mut producer) = self.producer.clone() else {
            return SampleOutcome::unsent(count, EngineError::new(Code::Closed, "the producer is closed"));
        };
        if let Some(e) = &txn.dead {
            return SampleOutcome::unsent(count, e.clone());
        }
        if txn.replace_producer {
            // The failed transaction could not be aborted (the abort timed out while the coordinator moved; retried,
            // the new coordinator answers INVALID_TXN_STATE). A new producer with the same transactional.id
            // recovers: its init_transactions fences the old one, whose open transaction the coordinator aborts.
            // Until it starts, samples fail unsent (the summary counted the failed transaction once, when it
            // failed), with the reason in their message.
            match super::shared::producer_for(&self.settings, &self.run) {
                Ok(fresh) => {
                    log::info!("transactional.id '{id}': a new producer took over after a failed abort");
                    producer = Arc::clone(&fresh);
                    self.producer = Some(fresh); // the old one is closed here (its messages purged)
                    txn.replace_producer = false;
                }
                Err(mut err) => {
                    err.message = format!("{ABORT_PENDING}: a new producer for it did not start: {}", err.message);
                    return SampleOutcome::unsent(count, err);
                }
            }
        }
        if !txn.open {
            if let Err(e) = producer.txn(|p| p.begin_transaction()) {
                let (err, fatality) = explain(&e, "beginning a transaction", &id, timeout);
                if fatality == Fatality::Fatal {
                    txn.unusable(&err);
                }
                return SampleOutcome::unsent(count, err);
            }
            txn.open = true;
        }
        let mut outcome = self.send_messages(input);
        if outcome.error.is_some() {
            // A message of the transaction failed, so it cannot commit: abort it and go on with a new one.
            let records = txn.records_in + u64::from(outcome.acked);
            if let Some(cause) = self.abort_failed(txn, &producer, &id, records) {
                outcome.error = Some(cause);
            }
            return outcome;
        }
        txn.samples_in += 1;
        txn.records_in += u64::from(outcome.acked);
        if txn.samples_in < txn.settings.samples {
            outcome.transaction = TxnEnd::Open;
            return outcome;
        }
        let records = txn.records_in;
        if txn.abort_next() {
            let (result, took) = timed(|| producer.abort_transaction(timeout));
            outcome.elapsed += took;
            match result {
                Ok(()) => {
                    let mut s = self.slot.lock();
                    if let Some(pending) = &mut s.txn_seqs {
                        pending.clear();
                    }
                    let t = s.totals.transactions.get_or_insert_with(TxnTotals::default);
                    t.aborted += 1;
                    t.records_aborted += records;
                    outcome.transaction = TxnEnd::Aborted;
                    txn.ended();
                }
                Err(e) => {
                    let (err, _) = explain(&e, "aborting the transaction (transaction.abort.percent)", &id, timeout);
                    let cause = self.abort_failed(txn, &producer, &id, records).unwrap_or(err);
                    fail_all(&mut outcome, cause);
                }
            }
        } else {
            let (result, took) = timed(|| self.commit(&producer, txn, &id));
            outcome.elapsed += took;
            match result {
                Ok(()) => {
                    self.record_commit(took, records);
                    outcome.transaction = TxnEnd::Committed;
                    txn.ended();
                }
                Err(Commit::InDoubt(err)) => {
                    // The producer is still inside that commit: it cannot begin another transaction. Its successor
                    // (the next sample) makes the coordinator finish this one, one way or the other.
                    txn.unusable(&err);
                    self.count_in_doubt(txn, records);
                    fail_all(&mut outcome, err);
                }
                Err(Commit::Refused(e)) => {
                    let (err, fatality) = explain(&e, "committing the transaction", &id, timeout);
                    let cause = if fatality == Fatality::Fatal {
                        txn.unusable(&err);
                        self.count_failed(txn, records);
                        err
                    } else {
                        let aborted = self.abort_failed(txn, &producer, &id, records);
                        let mut err = aborted.unwrap_or(err);
                        if txn.dead.is_none() {
                            err.message += &format!("; the transaction was aborted, its {records} record(s) are not visible to read_committed consumers");
                        }
                        err
                    };
                    fail_all(&mut outcome, cause);
                }
            }
        }
        self.last_end = Some(Instant::now());
        outcome
    }

    /// Commits the open transaction. A commit that times out is called again (librdkafka resumes the same commit)
    /// until the coordinator answers, `transaction.timeout.ms` has passed since the commit began, or the test is
    /// stopped; see the module's doc for why it is not aborted instead.
    fn commit(&self, producer: &KafkaProducer, txn: &Txn, id: &str) -> Result<(), Commit> {
        let timeout = self.settings.timeout;
        let patience = Duration::from_millis(txn.settings.timeout_ms);
        let start = Instant::now();
        let mut attempts = 0u32;
        loop {
            let left = patience.saturating_sub(start.elapsed());
            let e = match producer.txn(|p| p.commit_transaction(timeout.min(left).max(COMMIT_SLICE_MIN))) {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            attempts += 1;
            let retriable = matches!(&e, KafkaError::Transaction(t) if t.is_retriable() && !t.is_fatal()
                && !t.txn_requires_abort());
            if !retriable {
                return Err(Commit::Refused(e));
            }
            let waited = start.elapsed();
            let stopped = std::mem::take(&mut self.slot.lock().interrupted);
            if stopped || waited >= patience {
                let (code, why) = if stopped {
                    (Code::Interrupted, "the test was stopped while the commit waited for an answer".to_string())
                } else {
                    (
                        Code::TxnTimedOut,
                        format!(
                            "the transaction coordinator did not answer the commit within transaction.timeout.ms \
                             ({} ms, {attempts} tries)",
                            patience.as_millis()
                        ),
                    )
                };
                return Err(Commit::InDoubt(EngineError::new(
                    code,
                    format!(
                        "committing the transaction of '{id}': {why}; its outcome is unknown: the coordinator may \
                         still complete it, and read_committed consumers may then see its {} record(s) ({e})",
                        txn.records_in
                    ),
                )));
            }
            log::info!(
                "transactional.id '{id}': the commit got no answer after {} ms; waiting on ({e})",
                waited.as_millis()
            );
        }
    }

    fn count_in_doubt(&self, txn: &mut Txn, records: u64) {
        let mut s = self.slot.lock();
        if let Some(pending) = &mut s.txn_seqs {
            pending.clear();
        }
        let t = s.totals.transactions.get_or_insert_with(TxnTotals::default);
        t.in_doubt += 1;
        t.records_in_doubt += records;
        txn.ended();
    }

    /// Aborts the open transaction after a failure; returns the cause to report when the abort itself failed (the
    /// producer is then replaced by the next sample, or, fenced, every later sample fails with it).
    fn abort_failed(&mut self, txn: &mut Txn, producer: &KafkaProducer, id: &str, records: u64) -> Option<EngineError> {
        let timeout = self.settings.timeout;
        let result = if txn.dead.is_some() { Ok(()) } else { producer.abort_transaction(timeout) };
        self.count_failed(txn, records);
        match result {
            Ok(()) => None,
            Err(e) => {
                let (err, _) = explain(&e, "aborting the failed transaction", id, timeout);
                // Fatal or not (the coordinator gone, the abort timed out), the producer cannot begin another
                // transaction: the next sample replaces it, unless it was fenced.
                txn.unusable(&err);
                Some(err)
            }
        }
    }

    /// A commit the broker acknowledged: the transaction's messages become acknowledged (for the audit) and the
    /// commit is counted with its time.
    fn record_commit(&self, took: Duration, records: u64) {
        let mut s = self.slot.lock();
        let s = &mut *s;
        if let (Some(pending), Some(acked)) = (&mut s.txn_seqs, &mut s.acked_seqs) {
            for seq in pending.drain(..) {
                acked.insert(seq);
            }
        }
        s.totals.transactions.get_or_insert_with(TxnTotals::default).record_commit(took, records);
    }

    fn count_failed(&self, txn: &mut Txn, records: u64) {
        let mut s = self.slot.lock();
        if let Some(pending) = &mut s.txn_seqs {
            pending.clear();
        }
        let t = s.totals.transactions.get_or_insert_with(TxnTotals::default);
        t.failed += 1;
        t.records_aborted += records;
        txn.ended();
    }

    /// At close: a transaction still open (the test ended within `transaction.samples`) is committed, as its
    /// samples were reported OK; a stopped test aborts it.
    pub(super) fn end_open_transaction(&mut self, stopped: bool) {
        let Some(mut txn) = self.txn.take() else { return };
        let Some(producer) = self.producer.clone() else { return };
        if txn.replace_producer && txn.dead.is_none() {
            // The failed transaction is counted already, and this producer's own abort of it failed. A new producer
            // with the same transactional.id makes the coordinator abort it now (its init_transactions fences the
            // old producer); without it the coordinator would abort it only after transaction.timeout.ms, and
            // read_committed consumers would wait for it until then.
            match super::shared::producer_for(&self.settings, &self.run) {
                Ok(fresh) => self.producer = Some(fresh), // the old one is closed here
                Err(e) => log::warn!("the last failed transaction could not be aborted at close: {e}"),
            }
            return;
        }
        if !txn.open || txn.dead.is_some() {
            return;
        }
        let records = txn.records_in;
        let timeout = self.settings.timeout;
        if stopped {
            let _ = producer.abort_transaction(timeout);
            self.count_failed(&mut txn, records);
            log::warn!("the test was stopped within a transaction: it was aborted ({records} record(s) not visible)");
            return;
        }
        let id = transactional_id(&txn.settings.prefix, self.settings.thread_number);
        let (result, took) = timed(|| self.commit(&producer, &txn, &id));
        match result {
            Ok(()) => self.record_commit(took, records),
            Err(Commit::InDoubt(err)) => {
                log::warn!("at close: {err}");
                self.count_in_doubt(&mut txn, records);
            }
            Err(Commit::Refused(e)) => {
                let (err, _) = explain(&e, "committing the last, partial transaction at close", &id, timeout);
                log::warn!("{err}");
                let _ = producer.abort_transaction(timeout);
                self.count_failed(&mut txn, records);
            }
        }
    }
}

/// How the message of a sample that began no transaction, because the failed one before it is not yet aborted,
/// starts (the JTL's failed samples that are no failed transaction of the summary).
const ABORT_PENDING: &str = "no transaction begun: the previous, failed one is not aborted yet";

/// A sample whose messages were acknowledged but whose transaction did not commit: none of them counts as written.
fn fail_all(outcome: &mut SampleOutcome, cause: EngineError) {
    outcome.failed = outcome.sent;
    outcome.acked = 0;
    outcome.error = Some(cause);
    outcome.transaction = TxnEnd::None;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txn(percent: u32) -> Txn {
        Txn::new(TxnSettings { prefix: "p".into(), samples: 1, abort_percent: percent, timeout_ms: 60_000 })
    }

    #[test]
    fn the_abort_share_is_exact_and_spread() {
        let mut t = txn(50);
        let pattern: Vec<bool> = (0..6)
            .map(|_| {
                let a = t.abort_next();
                t.ended();
                a
            })
            .collect();
        assert_eq!(pattern, [false, true, false, true, false, true]);
        for percent in [0, 1, 33, 100] {
            let mut t = txn(percent);
            let aborted = (0..1000)
                .filter(|_| {
                    let a = t.abort_next();
                    t.ended();
                    a
                })
                .count();
            assert_eq!(aborted, 10 * percent as usize, "{percent} %");
        }
    }

    fn pairs(items: &[(&'static str, &'static str)]) -> BTreeMap<&'static str, &'static str> {
        items.iter().copied().collect()
    }

    fn reliable() -> BTreeMap<String, String> {
        [("acks", "all"), ("enable.idempotence", "true")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn bad_inputs_are_refused_with_the_reason() {
        let none = BTreeMap::new();
        let err = |sampler: &[(&'static str, &'static str)], client: &BTreeMap<String, String>, scope| {
            parse(&pairs(sampler), client, &none, Policy::Reliability, scope).unwrap_err().message
        };
        let p = ("transactional.id.prefix", "t");
        for bad in ["0", "-1", "text"] {
            let m = err(&[p, ("transaction.samples", bad)], &reliable(), Scope::Thread);
            assert!(m.starts_with("transaction.samples: '") && m.contains("1 to 1000000"), "{m}");
        }
        let m = err(&[p, ("transaction.abort.percent", "101")], &reliable(), Scope::Thread);
        assert!(m.contains("0 to 100"), "{m}");
        let mut acks1 = reliable();
        acks1.insert("acks".into(), "1".into());
        assert!(err(&[p], &acks1, Scope::Thread).contains("needs acks=all, but acks is 1"));
        let mut capacity = reliable();
        capacity.insert("enable.idempotence".into(), "false".into());
        let m = parse(&pairs(&[p]), &capacity, &none, Policy::Capacity, Scope::Thread).unwrap_err().message;
        assert!(m.contains("needs enable.idempotence=true") && m.contains("policy=capacity"), "{m}");
        assert!(err(&[p], &reliable(), Scope::Test).contains("producer.scope=thread"));
        assert!(
            err(&[("transaction.samples", "5")], &reliable(), Scope::Thread).contains("need transactional.id.prefix")
        );
        let ok =
            parse(&pairs(&[p, ("transaction.samples", "10")]), &reliable(), &none, Policy::Reliability, Scope::Thread);
        assert_eq!(
            ok.unwrap(),
            Some(TxnSettings { prefix: "t".into(), samples: 10, abort_percent: 0, timeout_ms: 60_000 })
        );
    }

    #[test]
    fn the_transaction_timeout_is_checked() {
        let none = BTreeMap::new();
        let p = pairs(&[("transactional.id.prefix", "t")]);
        let with = |v: &str, wait: &str| {
            let mut client = reliable();
            client.insert("transaction.timeout.ms".into(), v.into());
            client.insert("message.timeout.ms".into(), wait.into());
            parse(&p, &client, &none, Policy::Reliability, Scope::Thread)
        };
        for bad in ["0", "999", "text", "-5", "3000000000"] {
            let m = with(bad, "1000").unwrap_err().message;
            assert!(
                m.starts_with(&format!("transaction.timeout.ms: '{bad}' is not valid; use milliseconds from 1000")),
                "{m}"
            );
        }
        let m = with("5000", "30000").unwrap_err().message;
        assert!(m.contains("5000 is shorter than a message's wait") && m.contains("30000 ms"), "{m}");
        assert_eq!(with("900001", "30000").unwrap().unwrap().timeout_ms, 900_001);
    }

    #[test]
    fn a_timeout_above_the_brokers_limit_names_both_settings() {
        let settings = TxnSettings { prefix: "t".into(), samples: 1, abort_percent: 0, timeout_ms: 900_001 };
        let refused = KafkaError::Global(RDKafkaErrorCode::InvalidTransactionTimeout);
        let t = Duration::from_secs(1);
        let e = init_failed(&refused, &settings, "t-1", t, || Ok(Some("900000".into())));
        assert_eq!(e.code, Code::ConfigError);
        assert!(
            e.message.starts_with(
                "transaction.timeout.ms is 900001 ms, above the broker's transaction.max.timeout.ms, 900000 ms"
            ),
            "{}",
            e.message
        );
        let e = init_failed(&refused, &settings, "t-1", t, || Err(EngineError::config("denied")));
        assert!(e.message.contains("it could not be read: denied; Kafka's default is 900000 ms"), "{}", e.message);
        let other = KafkaError::Global(RDKafkaErrorCode::TransactionalIdAuthorizationFailed);
        let e = init_failed(&other, &settings, "t-1", t, || panic!("the limit is only read for a refused timeout"));
        assert_ne!(e.code, Code::ConfigError);
    }
}
