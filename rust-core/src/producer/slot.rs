//! Where a handle's outcomes arrive: each message carries a [`Ticket`] through librdkafka; the delivery callback
//! ([`ProducerCtx`], on librdkafka's thread, guarded against panics) hands the broker's verdict to the ticket's
//! [`Slot`], which counts it and wakes the waiting JMeter thread.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use rdkafka::message::Message;
use rdkafka::producer::{DeliveryResult, ProducerContext};

use super::stats::Totals;
use crate::audit::SeqSet;
use crate::client::context::{guarded, ClientCtx, HasClientCtx};
use crate::error::EngineError;

/// The producer's context: the client hooks every client has, and deliveries to the ticket's slot.
#[derive(Default)]
pub(crate) struct ProducerCtx {
    client: ClientCtx,
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
                Err((e, _)) => Err(EngineError::from_kafka(e)),
            };
            ticket.slot.complete(verdict, &ticket);
        });
    }
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
    /// With `audit=true`: the sequence numbers the broker acknowledged.
    pub(super) acked_seqs: Option<SeqSet>,
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
