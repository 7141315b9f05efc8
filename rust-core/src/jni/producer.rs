//! Native methods of `io.kafkanative.jmeter.NativeProducer`.
//!
//! A handle is a [`super::Native`] around a [`ProducerHandle`]; its interrupt goes through the handle's slot, which
//! `send` does not hold while waiting.

use std::time::Duration;

use jni::objects::{JLongArray, JObject, JObjectArray, JString};
use jni::sys::jlong;
use jni::Env;

use super::{close, closed_text, engine_error, interrupt, sample, BridgeError};
use crate::layout;
use crate::logsink;
use crate::producer::{settings, ProducerHandle, SampleInput, SampleOutcome};

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
    transaction => o.transaction as i64,
});

static_native! {
    fn Java_io_kafkanative_jmeter_NativeProducer_open(env, config: JObjectArray<'l, JString<'l>>) -> jlong {
        super::open(env, config, |pairs| {
            let handle = ProducerHandle::open(settings::parse(pairs)?, &super::RUN)?;
            let slot = handle.slot();
            Ok((handle, Box::new(move || slot.interrupt())))
        })
    }
}

static_native! {
    fn Java_io_kafkanative_jmeter_NativeProducer_send(
        env,
        handle: jlong,
        value: JString<'l>,
        key: JString<'l>,
        headers: JString<'l>,
        out: JLongArray<'l>,
    ) -> JObject<'l> {
        let send = |env: &mut Env<'l>, p: &mut ProducerHandle| -> Result<SampleOutcome, BridgeError> {
            // Each text JMeter passed (null: none): GetStringUTFChars (the JVM may copy it), turned into UTF-8 without
            // another copy unless it holds characters that modified UTF-8 encodes differently (NUL, supplementary
            // characters).
            let value = if value.is_null() { None } else { Some(value.mutf8_chars(env)?) };
            let key = if key.is_null() { None } else { Some(key.mutf8_chars(env)?) };
            let headers = if headers.is_null() { None } else { Some(headers.mutf8_chars(env)?) };
            let (value, key, headers) = (
                value.as_ref().map(|c| c.to_str()),
                key.as_ref().map(|c| c.to_str()),
                headers.as_ref().map(|c| c.to_str()),
            );
            Ok(p.send(SampleInput {
                value: value.as_deref().map(str::as_bytes),
                key: key.as_deref(),
                headers: headers.as_deref(),
            }))
        };
        // SAFETY: handles come from `open` above and stay valid until `close` (see `super::borrow`).
        unsafe { sample(env, handle, WHAT, out, send, slots, |env, o| engine_error(env, o.error.as_ref())) }
    }
}

static_native! {
    fn Java_io_kafkanative_jmeter_NativeProducer_interrupt(env, handle: jlong) {
        // SAFETY: as for `send`.
        super::void(env, || unsafe { interrupt::<ProducerHandle>(handle) })
    }
}

static_native! {
    fn Java_io_kafkanative_jmeter_NativeProducer_close(env, handle: jlong, timeout_ms: jlong) -> JString<'l> {
        let timeout = Duration::from_millis(timeout_ms.max(0) as u64);
        // SAFETY: `handle` came from `open` and Java calls close exactly once per handle.
        super::text(env, |_| closed_text(unsafe { close(handle, |mut p: ProducerHandle| p.close(timeout)) }))
    }
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
            error: Some(EngineError::named("X".into(), "y")),
            transaction: crate::producer::transaction::TxnEnd::Aborted,
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
                ("transaction", 2),
            ],
        );
        assert_eq!(LAYOUT[7], "log_lines_waiting");
    }
}
