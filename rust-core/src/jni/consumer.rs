//! Native methods of `io.kafkanative.jmeter.NativeConsumer`.
//!
//! A handle is a [`super::Native`] around a [`ConsumerHandle`]; its interrupt only sets an atomic flag, so it may
//! run while `poll` holds the handle's mutex.

use std::sync::atomic::Ordering;

use jni::objects::{JLongArray, JObject, JObjectArray, JString};
use jni::sys::jlong;

use super::{close, closed_text, engine_error, interrupt, sample};
use crate::consumer::{settings, ConsumerHandle, PollOutcome};
use crate::layout;
use crate::logsink;

const WHAT: &str = "Kafka consumer";

layout!(LAYOUT, slots(o: PollOutcome) {
    records => o.records,
    bytes => o.bytes,
    elapsed_micros => o.elapsed.as_micros(),
    e2e_mean_micros => o.e2e_mean_us.unwrap_or(-1),
    e2e_max_micros => o.e2e_max_us.unwrap_or(-1),
    partition => o.partition,
    offset => o.offset,
    check_failures => o.check_failures,
    rebalances => o.rebalances,
    assigned_partitions => o.assigned,
    log_lines_waiting => logsink::pending(),
    stop_thread => o.stop_thread,
    // The sample that ended a rebalance's pause: its number (0: none) and the pause, so that Java marks the sample.
    rebalance_ended => o.rebalance_ended.map_or(0, |(n, _)| n),
    rebalance_pause_micros => o.rebalance_ended.map_or(-1, |(_, d)| d.as_micros() as i64),
});

static_native! {
    fn Java_io_kafkanative_jmeter_NativeConsumer_open(env, config: JObjectArray<'l, JString<'l>>) -> jlong {
        super::open(env, config, |pairs| {
            let handle = ConsumerHandle::open(settings::parse_consumer(pairs)?, &super::RUN)?;
            let interrupted = handle.interrupter();
            Ok((handle, Box::new(move || interrupted.store(true, Ordering::Release))))
        })
    }
}

static_native! {
    fn Java_io_kafkanative_jmeter_NativeConsumer_poll(env, handle: jlong, out: JLongArray<'l>) -> JObject<'l> {
        let poll = |_: &mut _, c: &mut ConsumerHandle| Ok(c.poll());
        // SAFETY: handles come from `open` above and stay valid until `close` (see `super::borrow`).
        unsafe { sample(env, handle, WHAT, out, poll, slots, |env, o| engine_error(env, o.error.as_ref())) }
    }
}

static_native! {
    fn Java_io_kafkanative_jmeter_NativeConsumer_interrupt(env, handle: jlong) {
        // SAFETY: as for `poll`.
        super::void(env, || unsafe { interrupt::<ConsumerHandle>(handle) })
    }
}

static_native! {
    fn Java_io_kafkanative_jmeter_NativeConsumer_close(env, handle: jlong) -> JString<'l> {
        // SAFETY: `handle` came from `open` and Java calls close exactly once per handle.
        super::text(env, |_| closed_text(unsafe { close(handle, |mut c: ConsumerHandle| c.close()) }))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_array_follows_the_layout() {
        let o = PollOutcome {
            records: 1,
            bytes: 2,
            elapsed: Duration::from_micros(3),
            e2e_mean_us: Some(4),
            e2e_max_us: None,
            partition: 6,
            offset: 7,
            check_failures: 8,
            rebalances: 9,
            assigned: 10,
            rebalance_ended: Some((3, Duration::from_micros(845_000))),
            error: None,
            stop_thread: true,
        };
        super::super::assert_layout(
            LAYOUT,
            &slots(&o),
            &[
                ("records", 1),
                ("bytes", 2),
                ("elapsed_micros", 3),
                ("e2e_mean_micros", 4),
                ("e2e_max_micros", -1),
                ("partition", 6),
                ("offset", 7),
                ("check_failures", 8),
                ("rebalances", 9),
                ("assigned_partitions", 10),
                ("stop_thread", 1),
                ("rebalance_ended", 3),
                ("rebalance_pause_micros", 845_000),
            ],
        );
        assert_eq!(LAYOUT[10], "log_lines_waiting");
    }
}
