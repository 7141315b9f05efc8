//! Native methods of `io.kafkanative.jmeter.NativeProducer`.
//!
//! A handle is a [`super::Native`] around a [`ProducerHandle`]; its interrupt goes through the handle's slot, which
//! `send` does not hold while waiting.

use std::time::Duration;

use jni::objects::{JClass, JLongArray, JObject, JObjectArray, JString};
use jni::sys::jlong;
use jni::EnvUnowned;

use super::{borrow, close, closed_text, config_pairs, engine_error, interrupt, opt_string, BridgeError, ThrowPolicy};
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
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    // SAFETY: as for `send`.
    super::void(env, || unsafe { interrupt::<ProducerHandle>(handle) })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeProducer_close<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    timeout_ms: jlong,
) -> JString<'l> {
    let timeout = Duration::from_millis(timeout_ms.max(0) as u64);
    // SAFETY: `handle` came from `open` and Java calls close exactly once per handle.
    super::text(env, |_| closed_text(unsafe { close(handle, |mut p: ProducerHandle| p.close(timeout)) }))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeProducer_report<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    summary_path: JString<'l>,
) -> JString<'l> {
    super::text(env, |env| Ok(super::RUN.producer_report(opt_string(env, &summary_path)?.as_deref())?))
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
        super::super::assert_layout(
            LAYOUT,
            &slots(&o),
            &[
                ("sent", 1),
                ("acked", 2),
                ("failed", 3),
                ("elapsed_micros", 4),
                ("bytes_sent", 5),
                ("partition", 6),
                ("offset", 7),
            ],
        );
        assert_eq!(LAYOUT[7], "log_lines_waiting");
    }
}
