//! Native methods of `io.kafkanative.jmeter.NativeConsumer`.
//!
//! A handle is a `Box<Native>` turned into a `long`; the Java side guarantees that `close` is called exactly once
//! and never concurrently with `poll` or `values`, so the pointer is valid in between. `interrupt` only touches an
//! atomic flag, so it may run while `poll` holds the handle's mutex.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use jni::objects::{JClass, JLongArray, JObjectArray, JString};
use jni::sys::jlong;
use jni::EnvUnowned;

use super::{borrow_handle, config_pairs, error_text, new_string, BridgeError, ThrowPolicy};
use crate::consumer::ConsumerHandle;
use crate::{consumer_config, consumer_stats, logsink};

struct Native {
    interrupted: Arc<AtomicBool>,
    handle: Mutex<ConsumerHandle>,
}

fn native<'a>(handle: jlong) -> Result<&'a Native, BridgeError> {
    // SAFETY: handles come from `open` below and stay valid until `close` (see module docs).
    unsafe { borrow_handle(handle, "Kafka consumer") }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeConsumer_open<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    config: JObjectArray<'l, JString<'l>>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, BridgeError> {
        logsink::install();
        let pairs = config_pairs(env, &config)?;
        let settings = consumer_config::parse_consumer(&pairs)?;
        let handle = ConsumerHandle::open(settings)?;
        let native = Box::new(Native { interrupted: handle.interrupter(), handle: Mutex::new(handle) });
        Ok(Box::into_raw(native) as jlong)
    })
    .resolve::<ThrowPolicy>()
}

/// Output layout shared with `NativeConsumer.poll` in Java: see its Javadoc.
const OUT_LEN: usize = 11;

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeConsumer_poll<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    out: JLongArray<'l>,
) -> JString<'l> {
    env.with_env(|env| -> Result<JString<'l>, BridgeError> {
        let native = native(handle)?;
        let outcome = native.handle.lock().unwrap_or_else(|p| p.into_inner()).poll();
        let numbers: [jlong; OUT_LEN] = [
            outcome.records as jlong,
            outcome.bytes as jlong,
            outcome.elapsed.as_micros() as jlong,
            outcome.e2e_mean_us.unwrap_or(-1),
            outcome.e2e_max_us.unwrap_or(-1),
            outcome.partition as jlong,
            outcome.offset,
            outcome.check_failures as jlong,
            outcome.rebalances as jlong,
            outcome.assigned as jlong,
            logsink::pending() as jlong,
        ];
        out.set_region(env, 0, &numbers)?;
        new_string(env, outcome.error.map(error_text))
    })
    .resolve::<ThrowPolicy>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeConsumer_values<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JObjectArray<'l, JString<'l>> {
    env.with_env(|env| -> Result<JObjectArray<'l, JString<'l>>, BridgeError> {
        let native = native(handle)?;
        let consumer = native.handle.lock().unwrap_or_else(|p| p.into_inner());
        let values = consumer.values();
        let array = JObjectArray::<JString>::new(env, values.len(), JString::default())?;
        for (i, v) in values.iter().enumerate() {
            let s = env.new_string(v)?;
            array.set_element(env, i, &s)?;
            // Up to max.records strings: free each local reference at once instead of at the return.
            env.delete_local_ref(s);
        }
        Ok(array)
    })
    .resolve::<ThrowPolicy>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeConsumer_interrupt<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), BridgeError> {
        if handle != 0 {
            native(handle)?.interrupted.store(true, Ordering::Release);
        }
        Ok(())
    })
    .resolve::<ThrowPolicy>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeConsumer_close<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> JString<'l> {
    env.with_env(|env| -> Result<JString<'l>, BridgeError> {
        if handle == 0 {
            return new_string(env, Some("already closed".into()));
        }
        // SAFETY: `handle` came from `open` and Java calls close exactly once per handle.
        let native = unsafe { Box::from_raw(handle as *mut Native) };
        let report = native.handle.lock().unwrap_or_else(|p| p.into_inner()).close();
        new_string(env, Some(report))
    })
    .resolve::<ThrowPolicy>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeConsumer_drainLogs<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JString<'l> {
    env.with_env(|env| -> Result<JString<'l>, BridgeError> { new_string(env, logsink::drain()) })
        .resolve::<ThrowPolicy>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeConsumer_report<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    summary_path: JString<'l>,
) -> JString<'l> {
    env.with_env(|env| -> Result<JString<'l>, BridgeError> {
        let path = if summary_path.is_null() { None } else { Some(summary_path.try_to_string(env)?) };
        let report = consumer_stats::write_report(path.as_deref()).map_err(BridgeError::Engine)?;
        new_string(env, report)
    })
    .resolve::<ThrowPolicy>()
}
