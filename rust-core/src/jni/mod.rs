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

use std::any::Any;

use jni::errors::{Error as JniError, ErrorPolicy};
use jni::strings::JNIString;
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
            BridgeError::Engine(e) => env.throw_new(
                jni_str!("java/lang/IllegalArgumentException"),
                JNIString::new(format!("{}\t{}", e.code, e.message)),
            ),
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
