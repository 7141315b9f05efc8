//! Native methods of `io.kafkanative.jmeter.NativeEngine`: what belongs to no single client.

use jni::objects::{JObjectArray, JString};

use super::{opt_string, BridgeError, ThrowPolicy};
use crate::error::EngineError;
use crate::logsink;

/// The layout named `name` ("producer", "consumer", "lag").
fn layout(name: &str) -> Option<&'static [&'static str]> {
    match name {
        "producer" => Some(super::producer::LAYOUT),
        "consumer" => Some(super::consumer::LAYOUT),
        "lag" => Some(super::lag::LAYOUT),
        _ => None,
    }
}

static_native! {
    /// Log lines waiting ("LEVEL\tmessage" joined by '\n'), or null if none.
    fn Java_io_kafkanative_jmeter_NativeEngine_drainLogs(env) -> JString<'l> {
        super::text(env, |_| Ok(logsink::drain()))
    }
}

static_native! {
    /// The slot names of a result layout, in order, for Java's check of its constants.
    fn Java_io_kafkanative_jmeter_NativeEngine_layout(mut env, name: JString<'l>) -> JObjectArray<'l, JString<'l>> {
        env.with_env(|env| -> Result<JObjectArray<'l, JString<'l>>, BridgeError> {
            let name = opt_string(env, &name)?.unwrap_or_default();
            let slots = layout(&name).ok_or_else(|| {
                EngineError::new(
                    "INTERNAL_ERROR",
                    format!("no result layout named '{name}'; use producer, consumer or lag"),
                )
            })?;
            let array = JObjectArray::<JString>::new(env, slots.len(), JString::default())?;
            for (i, slot) in slots.iter().enumerate() {
                let s = env.new_string(slot)?;
                array.set_element(env, i, &s)?;
            }
            Ok(array)
        })
        .resolve::<ThrowPolicy>()
    }
}

#[cfg(test)]
mod tests {
    use super::layout;

    #[test]
    fn every_layout_is_known_by_name_and_ends_with_the_log_count() {
        for name in ["producer", "consumer", "lag"] {
            let slots = layout(name).unwrap();
            assert!(slots.contains(&"log_lines_waiting"), "{name}: {slots:?}");
            assert!(slots.iter().all(|s| s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')));
        }
        assert!(layout("nope").is_none());
    }
}
