//! The JNI bridge: conversion, typed exceptions and result layouts only, no engine logic.
//!
//! Every exported function runs its body inside `EnvUnowned::with_env`, which catches panics; [`ThrowPolicy`]
//! turns a [`BridgeError`] or a panic into an `io.kafkanative.jmeter.EngineException(code, message)`, so nothing
//! unwinds into the JVM: engine errors keep their code, a closed handle is `CLOSED`, a panic or JNI failure is
//! `INTERNAL_ERROR`. A sample's failure travels as a returned `EngineError(code, message)` object ([`engine_error`]).
//!
//! Handles are boxed [`Native`] values behind a `long` ([`open`], [`borrow`], [`close`]); each result layout is
//! defined once with [`layout!`], which gives both the slot names (asked for by Java's layout test through
//! `NativeEngine.layout`) and the function filling the `long[]`.

/// Declares a static native method of an `io.kafkanative.jmeter` class: the symbol JNI looks up
/// (`Java_io_kafkanative_jmeter_<Class>_<method>`, written out in full so that it can be searched for) taking the two
/// arguments JNI passes to every static native first (the environment, bound to the given name, and the class,
/// unused), then the method's own, all of lifetime `'l`. The body is the function's, unchanged.
macro_rules! static_native {
    ($(#[$attr:meta])* fn $symbol:ident($env:pat $(, $arg:ident: $ty:ty)* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$attr])*
        #[allow(missing_docs)] // documented on its Java `native` declaration, which a test holds against this export
        #[unsafe(no_mangle)]
        pub extern "system" fn $symbol<'l>(
            $env: jni::EnvUnowned<'l>,
            _class: jni::objects::JClass<'l>,
            $($arg: $ty),*
        ) $(-> $ret)? $body
    };
}

pub mod consumer;
pub mod engine;
pub mod lag;
pub mod producer;
pub mod verdict;

use std::any::Any;
use std::sync::{LazyLock, Mutex};

use jni::errors::{Error as JniError, ErrorPolicy};
use jni::objects::{JLongArray, JObject, JObjectArray, JString, JThrowable, JValue};
use jni::sys::jlong;
use jni::{jni_sig, jni_str, Env, EnvUnowned};

use crate::error::{panic_text, Code, EngineError};
use crate::run::report::Run;

/// The run of this JVM: every handle opened through the bridge reports to it.
pub(crate) static RUN: LazyLock<std::sync::Arc<Run>> = LazyLock::new(Run::new);

/// Why a native call could not complete normally.
#[derive(Debug)]
pub enum BridgeError {
    /// The engine refused the input; becomes `EngineException(code, message)`.
    Engine(EngineError),
    /// A handle used after close (or a null one); becomes `EngineException("CLOSED", ...)`.
    Closed(String),
    /// A JNI call failed; a pending Java exception propagates as is.
    Jni(JniError),
}

impl From<JniError> for BridgeError {
    fn from(e: JniError) -> Self {
        BridgeError::Jni(e)
    }
}

impl From<EngineError> for BridgeError {
    fn from(e: EngineError) -> Self {
        BridgeError::Engine(e)
    }
}

/// Throws the `EngineException` matching the error or panic and returns the type's default (0 / null).
pub struct ThrowPolicy;

impl<T: Default> ErrorPolicy<T, BridgeError> for ThrowPolicy {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut (),
        err: BridgeError,
    ) -> jni::errors::Result<T> {
        let error = match err {
            // A Java exception is already pending: let it propagate as is.
            BridgeError::Jni(JniError::JavaException) => return Ok(T::default()),
            BridgeError::Engine(e) => e,
            BridgeError::Closed(m) => EngineError::new(Code::Closed, m),
            BridgeError::Jni(e) => EngineError::new(Code::InternalError, format!("kafka-native JNI error: {e}")),
        };
        throw(env, &error)
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut (),
        payload: Box<dyn Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        let message = format!("internal error in the kafka-native engine (please report): {}", panic_text(&*payload));
        throw(env, &EngineError::new(Code::InternalError, message))
    }
}

/// Throws `EngineException(code, message)`; `throw` reports success as `Err(JavaException)` ("an exception is now
/// pending"): both mean thrown.
fn throw<T: Default>(env: &mut Env, error: &EngineError) -> jni::errors::Result<T> {
    let thrown = (|| -> jni::errors::Result<()> {
        let (code, message) = (env.new_string(&error.code)?, env.new_string(&error.message)?);
        let exception = env.new_object(
            jni_str!("io/kafkanative/jmeter/EngineException"),
            jni_sig!("(Ljava/lang/String;Ljava/lang/String;)V"),
            &[JValue::from(&code), JValue::from(&message)],
        )?;
        let exception = JThrowable::cast_local(env, exception)?;
        env.throw(exception)
    })();
    match thrown {
        Ok(()) | Err(JniError::JavaException) => Ok(T::default()),
        Err(e) => Err(e),
    }
}

/// A sample's failure as Java's `EngineError(code, message)` record, or null for success.
pub(crate) fn engine_error<'l>(env: &mut Env<'l>, error: Option<&EngineError>) -> Result<JObject<'l>, BridgeError> {
    let Some(error) = error else { return Ok(JObject::null()) };
    let (code, message) = (env.new_string(&error.code)?, env.new_string(&error.message)?);
    Ok(env.new_object(
        jni_str!("io/kafkanative/jmeter/EngineError"),
        jni_sig!("(Ljava/lang/String;Ljava/lang/String;)V"),
        &[JValue::from(&code), JValue::from(&message)],
    )?)
}

/// What a Java `long` handle points at: the engine object behind a mutex (taken only by the handle's own JMeter
/// thread, and by close: an uncontended lock per sample) and what `interrupt` may call while a sample waits.
pub(crate) struct Native<H> {
    handle: Mutex<H>,
    interrupt: Box<dyn Fn() + Send + Sync>,
}

/// What `make` returns to [`open`]: the engine object and what interrupts a sample waiting on it.
pub(crate) type Opened<H> = (H, Box<dyn Fn() + Send + Sync>);

/// `open`: the Java configuration pairs to an engine object behind a new `long` handle.
pub(crate) fn open<'l, H>(
    mut env: EnvUnowned<'l>,
    config: JObjectArray<'l, JString<'l>>,
    make: impl FnOnce(&[(String, String)]) -> Result<Opened<H>, EngineError>,
) -> jlong {
    env.with_env(|env| -> Result<jlong, BridgeError> {
        crate::logsink::install();
        let (handle, interrupt) = make(&config_pairs(env, &config)?)?;
        Ok(Box::into_raw(Box::new(Native { handle: Mutex::new(handle), interrupt })) as jlong)
    })
    .resolve::<ThrowPolicy>()
}

/// One sample on the handle: `run` makes the outcome, `slots` its numbers for `out`, `result` the returned object.
///
/// # Safety
/// As for [`borrow`].
pub(crate) unsafe fn sample<'l, H, O, const N: usize>(
    mut env: EnvUnowned<'l>,
    handle: jlong,
    what: &str,
    out: JLongArray<'l>,
    run: impl FnOnce(&mut Env<'l>, &mut H) -> Result<O, BridgeError>,
    slots: fn(&O) -> [jlong; N],
    result: impl FnOnce(&mut Env<'l>, O) -> Result<JObject<'l>, BridgeError>,
) -> JObject<'l> {
    env.with_env(|env| -> Result<JObject<'l>, BridgeError> {
        let outcome = borrow(handle, what, |h| run(env, h))??;
        out.set_region(env, 0, &slots(&outcome))?;
        result(env, outcome)
    })
    .resolve::<ThrowPolicy>()
}

/// Runs `f` on the engine object behind `handle`; `what` names it in the error for a closed (0) handle.
///
/// # Safety
/// `handle` must be 0 or a value from [`open`] with the same `H` that [`close`] has not been called on. The Java
/// classes guarantee this: they zero their handle field before calling `close`, under the same lock as the calls
/// that use it.
pub(crate) unsafe fn borrow<H, R>(handle: jlong, what: &str, f: impl FnOnce(&mut H) -> R) -> Result<R, BridgeError> {
    if handle == 0 {
        return Err(BridgeError::Closed(format!("the {what} is closed")));
    }
    let native = &*(handle as *const Native<H>);
    let mut guard = native.handle.lock().unwrap_or_else(|p| p.into_inner());
    Ok(f(&mut guard))
}

/// Calls the handle's interrupt (a no-op for 0), without taking its mutex: a waiting sample holds it.
///
/// # Safety
/// As for [`borrow`].
pub(crate) unsafe fn interrupt<H>(handle: jlong) {
    if handle != 0 {
        let native = &*(handle as *const Native<H>);
        (native.interrupt)();
    }
}

/// Frees the handle and hands its engine object to `f` (e.g. to close it); None for 0 (already closed).
///
/// # Safety
/// As for [`borrow`]; Java calls close exactly once per handle.
pub(crate) unsafe fn close<H, R>(handle: jlong, f: impl FnOnce(H) -> R) -> Option<R> {
    if handle == 0 {
        return None;
    }
    let native = Box::from_raw(handle as *mut Native<H>);
    Some(f(native.handle.into_inner().unwrap_or_else(|p| p.into_inner())))
}

/// `[k0, v0, k1, v1, ...]` from Java into pairs (a null becomes an empty string, which the parsers skip).
pub(crate) fn config_pairs(
    env: &mut Env,
    config: &JObjectArray<JString>,
) -> Result<Vec<(String, String)>, BridgeError> {
    let len = config.len(env)?;
    let mut pairs = Vec::with_capacity(len / 2);
    for i in (0..len.saturating_sub(1)).step_by(2) {
        let (k, v) = (config.get_element(env, i)?, config.get_element(env, i + 1)?);
        let (k, v) = (opt_string(env, &k)?.unwrap_or_default(), opt_string(env, &v)?.unwrap_or_default());
        pairs.push((k, v));
    }
    Ok(pairs)
}

/// A Rust string from Java, None for null.
pub(crate) fn opt_string(env: &Env, s: &JString) -> Result<Option<String>, BridgeError> {
    if s.is_null() {
        return Ok(None);
    }
    Ok(Some(s.try_to_string(env)?))
}

/// A Java string, or null for None.
pub(crate) fn new_string<'l>(env: &mut Env<'l>, s: Option<String>) -> Result<JString<'l>, BridgeError> {
    Ok(match s {
        Some(s) => env.new_string(s)?,
        None => JString::default(),
    })
}

/// Runs `body` under the bridge's policy; its text becomes a Java string (null for None).
pub(crate) fn text<'l>(
    mut env: EnvUnowned<'l>,
    body: impl FnOnce(&mut Env<'l>) -> Result<Option<String>, BridgeError>,
) -> JString<'l> {
    env.with_env(|env| -> Result<JString<'l>, BridgeError> {
        let text = body(env)?;
        new_string(env, text)
    })
    .resolve::<ThrowPolicy>()
}

/// Runs `body`, which returns nothing to Java, under the bridge's policy.
pub(crate) fn void(mut env: EnvUnowned<'_>, body: impl FnOnce()) {
    env.with_env(|_env| -> Result<(), BridgeError> {
        body();
        Ok(())
    })
    .resolve::<ThrowPolicy>()
}

/// The close report of a handle, or "already closed" for 0.
pub(crate) fn closed_text(report: Option<String>) -> Result<Option<String>, BridgeError> {
    Ok(Some(report.unwrap_or_else(|| "already closed".into())))
}

/// Checks a layout's table against the array its fill function made: each named slot holds the expected value.
#[cfg(test)]
pub(crate) fn assert_layout(layout: &[&str], slots: &[jlong], expected: &[(&str, jlong)]) {
    assert_eq!(layout.len(), slots.len());
    for (name, value) in expected {
        let at = layout.iter().position(|n| n == name).unwrap_or_else(|| panic!("no slot {name} in {layout:?}"));
        assert_eq!(slots[at], *value, "{name}");
    }
}

/// Defines a result layout once: `NAME` (the slot names, in order: Java's constants lower-cased) and a function
/// filling the `long[]` from an outcome, slot by slot, so names and values cannot drift apart.
#[macro_export]
macro_rules! layout {
    ($names:ident, $fill:ident($outcome:ident: $ty:ty) { $($slot:ident => $value:expr),+ $(,)? }) => {
        /// The names of the `long[]` slots, in order (see [`crate::jni::engine`]'s `layout`).
        pub const $names: &[&str] = &[$(stringify!($slot)),+];

        /// The `long[]` of one outcome, in the order of the layout.
        pub(crate) fn $fill($outcome: &$ty) -> [jni::sys::jlong; $names.len()] {
            [$(($value) as jni::sys::jlong),+]
        }
    };
}
