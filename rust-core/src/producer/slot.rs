//! Where a handle's outcomes arrive: each message carries a [`Ticket`] through librdkafka; the delivery callback
//! ([`ProducerCtx`], guarded against panics; on the shared producer's polling thread, or on the JMeter thread that
//! serves its own producer) hands the broker's verdict to the ticket's [`Slot`], which counts it and wakes the
//! waiting JMeter thread if it sleeps.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rdkafka::message::Message;
use rdkafka::producer::{DeliveryResult, ProducerContext};

use super::stats::Totals;
use crate::audit::SeqSet;
use crate::client::context::{guarded, ClientCtx, HasClientCtx};
use crate::error::{Code, EngineError};

/// The producer's context: the client hooks every client has, and deliveries to the ticket's slot.
pub(crate) struct ProducerCtx {
    client: ClientCtx,
}

impl ProducerCtx {
    /// A context whose statistics also record the time breakdown for a producer with these settings.
    pub(crate) fn new(knobs: crate::run::breakdown::Knobs) -> ProducerCtx {
        ProducerCtx { client: ClientCtx::with_breakdown(knobs) }
    }

    /// A message that failed because the OAuth token expired and the token endpoint is down says so (the
    /// endpoint and the cause) instead of librdkafka's bare timeout or transport error.
    pub(super) fn outage(&self, e: EngineError, sent: Instant) -> EngineError {
        let unsent = ["MSG_TIMED_OUT", "TRANSPORT", "AUTHENTICATION", "SASL_AUTHENTICATION_FAILED"];
        if !unsent.contains(&e.code.as_str()) {
            return e;
        }
        match self.client.oauth_outage(sent) {
            Some(mut outage) => {
                outage.message = format!("not delivered ({}): {}", e.code, outage.message);
                outage
            }
            None => e,
        }
    }
}

impl HasClientCtx for ProducerCtx {
    fn client_ctx(&self) -> &ClientCtx {
        &self.client
    }
}

crate::client_context!(ProducerCtx);

impl ProducerContext for ProducerCtx {
    type DeliveryOpaque = Box<Ticket>;

    fn delivery(&self, result: &DeliveryResult<'_>, ticket: Box<Ticket>) {
        guarded("delivery", || {
            let verdict = match result {
                Ok(m) => Ok((m.partition(), m.offset())),
                Err((e, _)) => {
                    Err(self.outage(explain_size(EngineError::from_kafka(e), ticket.bytes, true), ticket.sent_at))
                }
            };
            ticket.slot.complete(verdict, &ticket);
        });
    }
}

/// MSG_SIZE_TOO_LARGE says neither the size nor the limit: name both, and the property to change.
pub(super) fn explain_size(mut e: EngineError, bytes: usize, from_broker: bool) -> EngineError {
    if e.code == Code::MsgSizeTooLarge {
        e.message = if from_broker {
            format!(
                "the broker refused a message of {bytes} bytes (key + value + headers) as too large: the topic's \
                 max.message.bytes (the broker's message.max.bytes, default 1048588) is smaller; lower record.size, \
                 the key or the headers, or raise max.message.bytes on the topic"
            )
        } else {
            format!(
                "a message of {bytes} bytes (key + value + headers) is larger than the producer's message.max.bytes \
                 (librdkafka's default 1000000; Java's max.request.size): lower record.size, the key or the headers, \
                 or raise message.max.bytes (and the topic's max.message.bytes)"
            )
        };
    }
    e
}

/// Why librdkafka's local queue stayed full for `max_block`. Not always a slow broker: a message larger than the
/// queue's byte bound can never enter it, and a queue bound below the batch size fills before anything is sent.
pub(super) fn explain_queue_full(client: &BTreeMap<String, String>, bytes: usize, max_block: Duration) -> String {
    // librdkafka's defaults (CONFIGURATION.md) when the plan does not set them.
    let setting = |name: &str, default: u64| client.get(name).and_then(|v| v.trim().parse().ok()).unwrap_or(default);
    let kbytes = setting("queue.buffering.max.kbytes", 1_048_576);
    let messages = setting("queue.buffering.max.messages", 100_000);
    if bytes as u64 > kbytes.saturating_mul(1024) {
        return format!(
            "a message of {bytes} bytes does not fit in librdkafka's local queue (queue.buffering.max.kbytes={kbytes}, \
             Java's buffer.memory): raise queue.buffering.max.kbytes above the message size, or lower record.size"
        );
    }
    format!(
        "librdkafka's local queue (queue.buffering.max.messages={messages}, queue.buffering.max.kbytes={kbytes}) \
         stayed full for {} ms (max.block.ms / timeout.ms): messages were enqueued faster than the brokers \
         acknowledged them, or the queue is smaller than one sample's messages; lower messages.per.sample or \
         threads, raise the queue bounds, or look at the brokers",
        max_block.as_millis()
    )
}

/// Travels with each message through librdkafka and comes back in the delivery callback.
pub(crate) struct Ticket {
    pub(super) slot: Arc<Slot>,
    pub(super) sample: u64,
    /// The message's audit sequence number within its handle.
    pub(super) seq: u64,
    pub(super) sent_at: Instant,
    pub(super) bytes: usize,
}

/// Where a handle's outcomes arrive; shared only by its JMeter thread and librdkafka's polling thread.
pub struct Slot {
    state: Mutex<SlotState>,
    pub(super) cond: Condvar,
}

#[derive(Default)]
pub(super) struct SlotState {
    /// Number of the sample being waited for; bumped when it ends, so late verdicts are told apart.
    pub(super) sample: u64,
    pub(super) outstanding: u32,
    pub(super) acked: u32,
    pub(super) failed: u32,
    pub(super) first_error: Option<EngineError>,
    pub(super) partition: i32,
    pub(super) offset: i64,
    pub(super) last_outcome: Option<Instant>,
    pub(super) interrupted: bool,
    /// Messages handed to librdkafka whose verdict has not arrived yet (across samples).
    pub(super) in_flight: u64,
    pub(super) totals: Totals,
    /// With `audit=true`: the sequence numbers the broker acknowledged (of committed transactions only, with
    /// `transactional.id.prefix`).
    pub(super) acked_seqs: Option<SeqSet>,
    /// With `audit=true` and transactions: the open transaction's acknowledged sequence numbers, moved to
    /// `acked_seqs` when it commits and dropped when it aborts (read_committed never shows them).
    pub(super) txn_seqs: Option<Vec<u64>>,
    /// The JMeter thread sleeps on the condvar (a shared producer's polling thread must wake it). A thread that
    /// serves its own producer's reports is awake by definition: notifying it would only cost a futex call.
    pub(super) sleeping: bool,
}

impl Slot {
    pub(super) fn new() -> Arc<Slot> {
        Arc::new(Slot { state: Mutex::new(SlotState::default()), cond: Condvar::new() })
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, SlotState> {
        // A panic while holding the lock cannot leave the counters half-updated in a harmful way.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes the thread waiting in `send`; its unfinished messages are reported as INTERRUPTED.
    pub fn interrupt(&self) {
        self.lock().interrupted = true;
        self.cond.notify_all();
    }

    /// One message's verdict (from the delivery callback).
    pub(super) fn complete(&self, result: Result<(i32, i64), EngineError>, ticket: &Ticket) {
        let now = Instant::now();
        let mut s = self.lock();
        s.in_flight -= 1;
        let current = ticket.sample == s.sample && s.outstanding > 0;
        match result {
            // Counted on the JTL's terms: a message acknowledged after its sample ended (timed out, or the test
            // stopped) is a failure in the JTL, so it is counted apart, not as acknowledged (nor, for the audit, as
            // an acknowledged sequence: found in the topic, it is "written although reported failed").
            Ok((partition, offset)) if current => {
                s.totals.record_ack(now - ticket.sent_at, ticket.bytes, partition, now);
                if let Some(pending) = &mut s.txn_seqs {
                    pending.push(ticket.seq);
                } else if let Some(acked) = &mut s.acked_seqs {
                    acked.insert(ticket.seq);
                }
                s.acked += 1;
                s.partition = partition;
                s.offset = offset;
            }
            Ok(_) => s.totals.acked_after_timeout += 1,
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
        if s.sleeping && (s.outstanding == 0 || s.in_flight == 0) {
            self.cond.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticket(slot: &Arc<Slot>, sample: u64, seq: u64) -> Ticket {
        Ticket { slot: Arc::clone(slot), sample, seq, sent_at: Instant::now(), bytes: 10 }
    }

    #[test]
    fn a_full_queue_names_the_bound_and_blames_the_broker_only_as_one_cause() {
        let mut client = BTreeMap::new();
        client.insert("queue.buffering.max.kbytes".to_string(), "64".to_string());
        let too_big = explain_queue_full(&client, 70_000, Duration::from_millis(500));
        assert!(too_big.starts_with("a message of 70000 bytes does not fit"), "{too_big}");
        assert!(too_big.contains("queue.buffering.max.kbytes=64"), "{too_big}");
        let full = explain_queue_full(&client, 1_000, Duration::from_millis(500));
        assert!(full.contains("queue.buffering.max.messages=100000, queue.buffering.max.kbytes=64"), "{full}");
        assert!(
            full.contains("stayed full for 500 ms") && full.contains("smaller than one sample's messages"),
            "{full}"
        );
    }

    #[test]
    fn an_ack_after_the_sample_ended_is_counted_apart_on_the_jtl_terms() {
        let slot = Slot::new();
        {
            let mut s = slot.lock();
            s.acked_seqs = Some(SeqSet::default());
            s.in_flight = 2;
            s.outstanding = 1;
        }
        // Sample 0 waits for seq 0; seq 1 belonged to an earlier sample that already ended (timed out, stopped).
        slot.complete(Ok((0, 5)), &ticket(&slot, 0, 0));
        slot.lock().sample = 1;
        slot.complete(Ok((0, 6)), &ticket(&slot, 0, 1));
        let s = slot.lock();
        assert_eq!((s.totals.acked, s.totals.acked_after_timeout, s.totals.latency_us.len()), (1, 1, 1));
        let acked = s.acked_seqs.as_ref().unwrap();
        assert!(acked.contains(0) && !acked.contains(1), "a late ack is not an acknowledged sequence for the audit");
        assert!(s.totals.late_line().unwrap().starts_with("1 more record(s) acknowledged after their sample"));
    }
}
