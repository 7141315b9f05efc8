//! Native methods of `io.kafkanative.jmeter.NativeLag`.
//!
//! A handle is a [`super::Native`] around a [`LagMonitor`] (nothing to interrupt: a sample is bounded by
//! `timeout.ms`); `sample` returns a `LagReading(partitions, note, error)`.

use jni::objects::{JLongArray, JObject, JObjectArray, JString, JValue};
use jni::sys::jlong;
use jni::{jni_sig, jni_str, Env};

use super::{close, engine_error, sample, BridgeError};
use crate::lag::{parse_lag, LagMonitor, LagOutcome};
use crate::layout;
use crate::logsink;

layout!(LAYOUT, slots(o: LagOutcome) {
    total_lag => o.total,
    partitions => o.partitions.len(),
    elapsed_micros => o.elapsed.as_micros(),
    growth => o.growth.unwrap_or(0),
    growing_windows => o.growing_windows,
    ok => o.error.is_none(),
    log_lines_waiting => logsink::pending(),
});

static_native! {
    fn Java_io_kafkanative_jmeter_NativeLag_open(env, config: JObjectArray<'l, JString<'l>>) -> jlong {
        super::open(env, config, |pairs| Ok((LagMonitor::open(parse_lag(pairs)?)?, Box::new(|| {}))))
    }
}

static_native! {
    fn Java_io_kafkanative_jmeter_NativeLag_sample(env, handle: jlong, out: JLongArray<'l>) -> JObject<'l> {
        let reading = |env: &mut Env<'l>, o: LagOutcome| -> Result<JObject<'l>, BridgeError> {
            let partitions = env.new_string(o.partitions_text())?;
            let note = match &o.note {
                Some(n) => JObject::from(env.new_string(n)?),
                None => JObject::null(),
            };
            let error = engine_error(env, o.error.as_ref())?;
            Ok(env.new_object(
                jni_str!("io/kafkanative/jmeter/LagReading"),
                jni_sig!("(Ljava/lang/String;Ljava/lang/String;Lio/kafkanative/jmeter/EngineError;)V"),
                &[JValue::from(&partitions), JValue::from(&note), JValue::from(&error)],
            )?)
        };
        let read = |_: &mut _, m: &mut LagMonitor| {
            let outcome = m.sample();
            super::RUN.judgement.remember_lag(&outcome); // the run's lag, for kafka.verdict's lag criteria
            Ok(outcome)
        };
        // SAFETY: handles come from `open` above and stay valid until `close` (see `super::borrow`).
        unsafe { sample(env, handle, "lag monitor", out, read, slots, reading) }
    }
}

static_native! {
    fn Java_io_kafkanative_jmeter_NativeLag_close(env, handle: jlong) {
        // SAFETY: `handle` came from `open` and Java calls close exactly once per handle.
        super::void(env, || {
            unsafe { close(handle, drop::<LagMonitor>) };
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_array_follows_the_layout() {
        let o = LagOutcome {
            total: 1,
            partitions: vec![],
            growth: Some(3),
            growing_windows: 4,
            elapsed: Duration::from_micros(2),
            error: None,
            note: None,
        };
        super::super::assert_layout(
            LAYOUT,
            &slots(&o),
            &[
                ("total_lag", 1),
                ("partitions", 0),
                ("elapsed_micros", 2),
                ("growth", 3),
                ("growing_windows", 4),
                ("ok", 1),
            ],
        );
        assert_eq!(LAYOUT[6], "log_lines_waiting");
    }
}
