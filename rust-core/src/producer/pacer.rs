//! `target.rate`: samples start at their intended times, and how late each one started is measured
//! (coordinated omission shows as schedule delay instead of fewer, faster samples).

use std::time::{Duration, Instant};

use super::slot::Slot;
use super::stats::new_histogram;

/// Starts samples at their intended times for `target.rate`, and measures how late each one started.
pub(super) struct Pacer {
    interval: Duration,
    next: Option<Instant>,
}

impl Pacer {
    /// A pacer for `rate` samples per second; the slot's totals get the schedule-delay histogram.
    pub(super) fn new(rate: f64, slot: &Slot) -> Pacer {
        slot.lock().totals.schedule_delay_us = Some(new_histogram());
        Pacer { interval: Duration::from_secs_f64(1.0 / rate), next: None }
    }

    /// Waits for this sample's intended start, or records how late it is. Samples keep their intended schedule
    /// even when late, so a slow broker shows as schedule delay instead of fewer, faster samples.
    pub(super) fn pace(&mut self, slot: &Slot) {
        let now = Instant::now();
        let intended = *self.next.get_or_insert(now);
        self.next = Some(intended + self.interval);
        if intended > now {
            // Interruptible: a stopped test does not wait out the pause. The flag is left set for the sample, which
            // then ends as INTERRUPTED without sending.
            let s = slot.lock();
            let _ = slot.cond.wait_timeout_while(s, intended - now, |s| !s.interrupted);
        }
        let late = Instant::now().saturating_duration_since(intended);
        if let Some(h) = &mut slot.lock().totals.schedule_delay_us {
            h.saturating_record(late.as_micros().max(1) as u64);
        }
    }
}
