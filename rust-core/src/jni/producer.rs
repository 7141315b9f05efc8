//! Native methods of `io.kafkanative.jmeter.NativeProducer`.
//!
//! A handle is a [`super::Native`] around a [`ProducerHandle`]; its interrupt goes through the handle's slot, which
//! `send` does not hold while waiting.

use std::time::Duration;

use jni::objects::{JClass, JLongArray, JObject, JObjectArray, JString};
use jni::sys::jlong;
use jni::EnvUnowned;

use super::{borrow, close, config_pairs, engine_error, interrupt, new_string, opt_string, BridgeError, ThrowPolicy};
use crate::layout;
use crate::logsink;
use crate::producer::{settings, ProducerHandle, SampleOutcome};

const WHAT: &str = "Kafka producer";

layout!(LAYOUT, slots(o: SampleOutcome) {
    sent => o.sent,
    acked => o.acked,
    failed => o.failed,
    elapsed_micros => o.elapsed.as_micros(),
    bytes_sent => o.bytes,
    partition => o.partition,
    offset => o.offset,
    log_lines_waiting => logsink::pending(),
});

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeProducer_open<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    config: JObjectArray<'l, JString<'l>>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, BridgeError> {
        logsink::install();
        let handle = ProducerHandle::open(settings::parse(&config_pairs(env, &config)?)?, &super::RUN)?;
        let slot = handle.slot();
        Ok(super::open(handle, move || slot.interrupt()))
    })
    .resolve::<ThrowPolicy>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeProducer_send<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    value: JString<'l>,
    out: JLongArray<'l>,
) -> JObject<'l> {
    env.with_env(|env| -> Result<JObject<'l>, BridgeError> {
        // value.mode=jmeter: the JVM's modified UTF-8, decoded (copied only when it is not plain UTF-8).
        let chars = if value.is_null() { None } else { Some(value.mutf8_chars(env)?) };
        let text = chars.as_ref().map(|c| c.to_str());
        // SAFETY: handles come from `open` above and stay valid until `close` (see `super::borrow`).
        let outcome =
            unsafe { borrow(handle, WHAT, |p: &mut ProducerHandle| p.send(text.as_deref().map(str::as_bytes)))? };
        out.set_region(env, 0, &slots(&outcome))?;
        engine_error(env, outcome.error.as_ref())
    })
    .resolve::<ThrowPolicy>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeProducer_interrupt<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), BridgeError> {
        // SAFETY: as for `send`.
        unsafe { interrupt::<ProducerHandle>(handle) };
        Ok(())
    })
    .resolve::<ThrowPolicy>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeProducer_close<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    timeout_ms: jlong,
) -> JString<'l> {
    env.with_env(|env| -> Result<JString<'l>, BridgeError> {
        let timeout = Duration::from_millis(timeout_ms.max(0) as u64);
        // SAFETY: `handle` came from `open` and Java calls close exactly once per handle.
        let report = unsafe { close(handle, |mut p: ProducerHandle| p.close(timeout)) };
        new_string(env, Some(report.unwrap_or_else(|| "already closed".into())))
    })
    .resolve::<ThrowPolicy>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeProducer_report<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    summary_path: JString<'l>,
) -> JString<'l> {
    env.with_env(|env| -> Result<JString<'l>, BridgeError> {
        let path = opt_string(env, &summary_path)?;
        let line = super::RUN.producer_report(path.as_deref())?;
        new_string(env, line)
    })
    .resolve::<ThrowPolicy>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::EngineError;

    #[test]
    fn the_array_follows_the_layout() {
        let o = SampleOutcome {
            sent: 1,
            acked: 2,
            failed: 3,
            elapsed: Duration::from_micros(4),
            bytes: 5,
            partition: 6,
            offset: 7,
            error: Some(EngineError::new("X", "y")),
        };
        let s = slots(&o);
        let at = |name: &str| s[LAYOUT.iter().position(|n| *n == name).unwrap()];
        let expected = [
            ("sent", 1),
            ("acked", 2),
            ("failed", 3),
            ("elapsed_micros", 4),
            ("bytes_sent", 5),
            ("partition", 6),
            ("offset", 7),
        ];
        for (name, value) in expected {
            assert_eq!(at(name), value, "{name}");
        }
        assert_eq!(LAYOUT.len(), 8);
        assert_eq!(LAYOUT[7], "log_lines_waiting");
    }
}
