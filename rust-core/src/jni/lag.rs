//! Native methods of `io.kafkanative.jmeter.NativeLag`.
//!
//! A handle is a `Box<Mutex<LagMonitor>>` turned into a `long`; the Java side calls `close` exactly once and never
//! concurrently with `sample`.

use std::sync::Mutex;

use jni::objects::{JClass, JLongArray, JObjectArray, JString};
use jni::sys::jlong;
use jni::EnvUnowned;

use super::{borrow_handle, config_pairs, new_string, BridgeError, ThrowPolicy};
use crate::lag::LagMonitor;
use crate::{consumer_config, logsink};

type Native = Mutex<LagMonitor>;

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeLag_open<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    config: JObjectArray<'l, JString<'l>>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, BridgeError> {
        logsink::install();
        let pairs = config_pairs(env, &config)?;
        let monitor = LagMonitor::open(consumer_config::parse_lag(&pairs)?)?;
        Ok(Box::into_raw(Box::new(Mutex::new(monitor))) as jlong)
    })
    .resolve::<ThrowPolicy>()
}

/// Output layout shared with `NativeLag.sample` in Java: see its Javadoc.
const OUT_LEN: usize = 7;

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeLag_sample<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
    out: JLongArray<'l>,
) -> JString<'l> {
    env.with_env(|env| -> Result<JString<'l>, BridgeError> {
        // SAFETY: handles come from `open` above and stay valid until `close` (see module docs).
        let native: &Native = unsafe { borrow_handle(handle, "lag monitor")? };
        let outcome = native.lock().unwrap_or_else(|p| p.into_inner()).sample();
        let numbers: [jlong; OUT_LEN] = [
            outcome.total,
            outcome.partitions.len() as jlong,
            outcome.elapsed.as_micros() as jlong,
            outcome.growth.unwrap_or(0),
            outcome.growing_windows as jlong,
            outcome.error.is_none() as jlong,
            logsink::pending() as jlong,
        ];
        out.set_region(env, 0, &numbers)?;
        let text = match outcome.error {
            None => outcome.partitions_text(),
            Some(ref e) => format!("{}\t{}\n{}", e.code, e.message, outcome.partitions_text()),
        };
        new_string(env, Some(text))
    })
    .resolve::<ThrowPolicy>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_kafkanative_jmeter_NativeLag_close<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), BridgeError> {
        if handle != 0 {
            // SAFETY: `handle` came from `open` and Java calls close exactly once per handle.
            drop(unsafe { Box::from_raw(handle as *mut Native) });
        }
        Ok(())
    })
    .resolve::<ThrowPolicy>()
}
