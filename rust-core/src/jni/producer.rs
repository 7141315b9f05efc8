//! Native methods of `io.kafkanative.jmeter.NativeProducer`.
//!
//! A handle is a `Box<Native>` turned into a `long`; the Java side guarantees that `close` is called
//! exactly once and never concurrently with `send` or `interrupt`, so the pointer is valid in between.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jni::objects::{JClass, JLongArray, JObjectArray, JString};
use jni::sys::jlong;
use jni::{Env, EnvUnowned};

use super::{borrow_handle, config_pairs, error_text, new_string, BridgeError, ThrowPolicy};
use crate::producer::{ProducerHandle, Slot};
use crate::{config, logsink, stats};

/// What a Java `long` handle points at. The mutex is only ever taken by the handle's own JMeter
/// thread (and by close), so it costs an uncontended lock per sample; `interrupt` goes through the
/// slot, which `send` does not hold while waiting.
struct Native {
    slot: Arc<Slot>,
    handle: Mutex<ProducerHandle>,
}

fn native<'a>(handle: jlong) -> Result<&'a Native, BridgeError> {
    // SAFETY: handles come from `open` below and stay valid until `close` (see module docs).
    unsafe { borrow_handle(handle, "Kafka producer") }
}

fn opt_string(env: &Env, s: &JString) -> Result<Option<String>, BridgeError> {
    if s.is_null() {
        return Ok(None);
    }
    Ok(Some(s.try_to_string(env)?))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeProducer_open<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    config: JObjectArray<'l, JString<'l>>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, BridgeError> {
        logsink::install();
        let pairs = config_pairs(env, &config)?;
        let settings = config::parse(&pairs)?;
        let handle = ProducerHandle::open(settings)?;
        let native = Box::new(Native { slot: handle.slot(), handle: Mutex::new(handle) });
        Ok(Box::into_raw(native) as jlong)
    })
    .resolve::<ThrowPolicy>()
}

/// Output layout shared with `NativeProducer.send` in Java: see its Javadoc.
const OUT_LEN: usize = 8;

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeProducer_send<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    value: JString<'l>,
    out: JLongArray<'l>,
) -> JString<'l> {
    env.with_env(|env| -> Result<JString<'l>, BridgeError> {
        let native = native(handle)?;
        let mut producer = native.handle.lock().unwrap_or_else(|p| p.into_inner());
        let outcome = if value.is_null() {
            producer.send(None)
        } else {
            // Borrowed from the JVM without a copy when it is valid UTF-8 (the common case).
            let chars = value.mutf8_chars(env)?;
            let text = chars.to_str();
            producer.send(Some(text.as_bytes()))
        };
        drop(producer);
        let numbers: [jlong; OUT_LEN] = [
            outcome.sent as jlong,
            outcome.acked as jlong,
            outcome.failed as jlong,
            outcome.elapsed.as_micros() as jlong,
            outcome.bytes as jlong,
            outcome.partition as jlong,
            outcome.offset,
            logsink::pending() as jlong,
        ];
        out.set_region(env, 0, &numbers)?;
        new_string(env, outcome.error.map(error_text))
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
        if handle != 0 {
            native(handle)?.slot.interrupt();
        }
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
        if handle == 0 {
            return new_string(env, Some("already closed".into()));
        }
        // SAFETY: `handle` came from `open` and Java calls close exactly once per handle.
        let native = unsafe { Box::from_raw(handle as *mut Native) };
        let mut producer = native.handle.lock().unwrap_or_else(|p| p.into_inner());
        let report = producer.close(Duration::from_millis(timeout_ms.max(0) as u64));
        new_string(env, Some(report))
    })
    .resolve::<ThrowPolicy>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeProducer_drainLogs<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JString<'l> {
    env.with_env(|env| -> Result<JString<'l>, BridgeError> { new_string(env, logsink::drain()) })
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
        let line = stats::write_report(path.as_deref()).map_err(BridgeError::Engine)?;
        new_string(env, line)
    })
    .resolve::<ThrowPolicy>()
}
