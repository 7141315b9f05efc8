//! The JNI bridge: conversion and error mapping only, no engine logic.
//!
//! Every exported function runs its body inside `EnvUnowned::with_env`, which catches panics;
//! [`ThrowPolicy`] turns a [`BridgeError`] or a panic into a Java exception, so nothing unwinds into
//! the JVM. Errors are mapped to Java here, once:
//! - invalid configuration → `IllegalArgumentException` ("CODE\tmessage"),
//! - use of a closed handle → `IllegalStateException`,
//! - a panic or JNI failure → `RuntimeException` naming the panic.

pub mod consumer;
pub mod lag;
pub mod producer;
pub mod verdict;

use std::any::Any;

use jni::errors::{Error as JniError, ErrorPolicy};
use jni::objects::{JObjectArray, JString};
use jni::strings::JNIString;
use jni::sys::jlong;
use jni::{jni_str, Env};

use crate::error::EngineError;

#[derive(Debug)]
pub enum BridgeError {
    /// The engine refused the input; becomes `IllegalArgumentException("CODE\tmessage")`.
    Engine(EngineError),
    /// A handle used after close (or a null one); becomes `IllegalStateException`.
    State(String),
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

/// Throws the Java exception matching the error or panic and returns the type's default (0 / null).
pub struct ThrowPolicy;

impl<T: Default> ErrorPolicy<T, BridgeError> for ThrowPolicy {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut (),
        err: BridgeError,
    ) -> jni::errors::Result<T> {
        let thrown = match err {
            // A Java exception is already pending: let it propagate as is.
            BridgeError::Jni(JniError::JavaException) => Ok(()),
            BridgeError::Engine(e) => {
                env.throw_new(jni_str!("java/lang/IllegalArgumentException"), JNIString::new(error_text(e)))
            }
            BridgeError::State(m) => env.throw_new(jni_str!("java/lang/IllegalStateException"), JNIString::new(m)),
            BridgeError::Jni(e) => env.throw_new(
                jni_str!("java/lang/RuntimeException"),
                JNIString::new(format!("kafka-native JNI error: {e}")),
            ),
        };
        thrown_or_default(thrown)
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut (),
        payload: Box<dyn Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        thrown_or_default(env.throw_new(
            jni_str!("java/lang/RuntimeException"),
            JNIString::new(format!(
                "internal error in the kafka-native engine (please report): {}",
                panic_text(&*payload)
            )),
        ))
    }
}

/// `throw_new` reports success as `Err(JavaException)` ("an exception is now pending"): both mean thrown.
fn thrown_or_default<T: Default>(thrown: jni::errors::Result<()>) -> jni::errors::Result<T> {
    match thrown {
        Ok(()) | Err(JniError::JavaException) => Ok(T::default()),
        Err(e) => Err(e),
    }
}

/// The object behind a `long` handle from an `open` call; `what` names it in the error for a closed (0) handle.
///
/// # Safety
/// `handle` must be 0 or a pointer from `Box::into_raw(Box<T>)` that has not been freed yet. The Java classes
/// guarantee this: they zero their handle field before calling `close`, under the same lock as the calls that use it.
pub(crate) unsafe fn borrow_handle<'a, T>(handle: jlong, what: &str) -> Result<&'a T, BridgeError> {
    if handle == 0 {
        return Err(BridgeError::State(format!("the {what} is closed")));
    }
    Ok(&*(handle as *const T))
}

/// `[k0, v0, k1, v1, ...]` from Java into pairs (a null becomes an empty string, which the parsers skip).
pub(crate) fn config_pairs(
    env: &mut Env,
    config: &JObjectArray<JString>,
) -> Result<Vec<(String, String)>, BridgeError> {
    let len = config.len(env)?;
    let mut pairs = Vec::with_capacity(len / 2);
    for i in (0..len.saturating_sub(1)).step_by(2) {
        let k = config.get_element(env, i)?;
        let v = config.get_element(env, i + 1)?;
        let k = if k.is_null() { String::new() } else { k.try_to_string(env)? };
        let v = if v.is_null() { String::new() } else { v.try_to_string(env)? };
        pairs.push((k, v));
    }
    Ok(pairs)
}

/// A Java string, or null for None.
pub(crate) fn new_string<'l>(env: &mut Env<'l>, s: Option<String>) -> Result<JString<'l>, BridgeError> {
    Ok(match s {
        Some(s) => env.new_string(s)?,
        None => JString::default(),
    })
}

/// An engine error as the Java side reads it: `CODE\tmessage`.
pub(crate) fn error_text(e: EngineError) -> String {
    format!("{}\t{}", e.code, e.message)
}

/// The text of a panic, whether it was raised with a literal (`&str`) or with `format!` (`String`).
fn panic_text(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("non-string panic payload")
}

#[cfg(test)]
mod tests {
    use super::panic_text;

    #[test]
    fn panic_payloads_of_both_kinds_are_readable() {
        let literal = std::panic::catch_unwind(|| panic!("plain")).unwrap_err();
        assert_eq!(panic_text(&*literal), "plain");
        let n = 3;
        let formatted = std::panic::catch_unwind(move || panic!("formatted {n}")).unwrap_err();
        assert_eq!(panic_text(&*formatted), "formatted 3");
    }
}
