//! Native methods of `io.kafkanative.jmeter.NativeEngine`: what belongs to no single client.

use jni::objects::{JObjectArray, JString};
use jni::{Env, EnvUnowned};

use super::{opt_string, BridgeError, ThrowPolicy};
use crate::error::{Code, EngineError};
use crate::logsink;
use crate::run::report::Run;

/// The layout named `name` ("producer", "consumer", "lag", "judgement").
fn layout(name: &str) -> Option<&'static [&'static str]> {
    match name {
        "producer" => Some(super::producer::LAYOUT),
        "consumer" => Some(super::consumer::LAYOUT),
        "lag" => Some(super::lag::LAYOUT),
        "judgement" => Some(super::verdict::LAYOUT),
        _ => None,
    }
}

/// The engine's own settings of the client named `name` ("producer", "consumer", "lag"): the names it reads
/// itself, beside the librdkafka properties it passes on.
fn setting_names(name: &str) -> Option<Vec<&'static str>> {
    let (own, schema): (&[&str], &[&str]) = match name {
        "producer" => (crate::producer::settings::SAMPLER_KEYS, crate::schema::PRODUCER_KEYS),
        "consumer" => (crate::consumer::settings::CONSUMER_KEYS, crate::schema::CONSUMER_KEYS),
        "lag" => (crate::lag::LAG_KEYS, &[]),
        _ => return None,
    };
    let mut names: Vec<&str> = own.iter().chain(schema).copied().collect();
    names.sort_unstable();
    names.dedup();
    Some(names)
}

/// The engine's defaults that Java's elements also show (`name=value`), for Java's check of its copies.
fn defaults(name: &str) -> Option<Vec<String>> {
    use crate::producer::policy::Policy;
    match name {
        "producer" => Some(
            [("capacity", Policy::Capacity), ("reliability", Policy::Reliability)]
                .iter()
                .map(|(n, p)| format!("timeout.ms.{n}={}", p.default_timeout_ms()))
                .collect(),
        ),
        _ => None,
    }
}

/// A Java `String[]` of `items`.
fn string_array<'l>(
    env: &mut Env<'l>,
    items: &[impl AsRef<str>],
) -> Result<JObjectArray<'l, JString<'l>>, BridgeError> {
    let array = JObjectArray::<JString>::new(env, items.len(), JString::default())?;
    for (i, item) in items.iter().enumerate() {
        let s = env.new_string(item.as_ref())?;
        array.set_element(env, i, &s)?;
    }
    Ok(array)
}

static_native! {
    /// Log lines waiting ("LEVEL\tmessage" joined by '\n'), or null if none.
    fn Java_io_kafkanative_jmeter_NativeEngine_drainLogs(env) -> JString<'l> {
        super::text(env, |_| Ok(logsink::drain()))
    }
}

static_native! {
    /// The slot names of a result layout, in order, for Java's check of its constants.
    fn Java_io_kafkanative_jmeter_NativeEngine_layout(env, name: JString<'l>) -> JObjectArray<'l, JString<'l>> {
        names_of(env, &name, "result layout", |n| layout(n).map(<[_]>::to_vec))
    }
}

static_native! {
    /// The engine's own setting names of a client, for Java's check that its GUI elements have a field for each.
    fn Java_io_kafkanative_jmeter_NativeEngine_settingNames(env, name: JString<'l>) -> JObjectArray<'l, JString<'l>> {
        names_of(env, &name, "client", setting_names)
    }
}

static_native! {
    /// Every response code of the engine's catalogue ([`Code`]), for Java's check of its own constants.
    fn Java_io_kafkanative_jmeter_NativeEngine_codes(mut env) -> JObjectArray<'l, JString<'l>> {
        let names: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        env.with_env(|env| string_array(env, &names)).resolve::<ThrowPolicy>()
    }
}

static_native! {
    /// The engine's defaults of a client (`name=value`; "producer"), for Java's check of the values it shows.
    fn Java_io_kafkanative_jmeter_NativeEngine_defaults(env, name: JString<'l>) -> JObjectArray<'l, JString<'l>> {
        names_of(env, &name, "client", defaults)
    }
}

static_native! {
    /// The end-of-test report of the run's producers or consumers (`kind`), its JSON summary written to the path
    /// when not null.
    fn Java_io_kafkanative_jmeter_NativeEngine_report(env, kind: JString<'l>, summary_path: JString<'l>) -> JString<'l> {
        super::text(env, |env| {
            let report = match opt_string(env, &kind)?.as_deref() {
                Some("producer") => Run::producer_report,
                Some("consumer") => Run::consumer_report,
                other => return Err(EngineError::new(Code::InternalError, format!("no report of a {other:?} client")).into()),
            };
            Ok(report(&super::RUN, opt_string(env, &summary_path)?.as_deref())?)
        })
    }
}

/// The names `lookup` gives for the client named `name`, as a Java String[]; an unknown name (a Java constant out of
/// step with the engine) is an INTERNAL_ERROR naming `what` was asked for.
fn names_of<'l, S: AsRef<str>>(
    mut env: EnvUnowned<'l>,
    name: &JString<'l>,
    what: &str,
    lookup: impl FnOnce(&str) -> Option<Vec<S>>,
) -> JObjectArray<'l, JString<'l>> {
    env.with_env(|env| -> Result<JObjectArray<'l, JString<'l>>, BridgeError> {
        let name = opt_string(env, name)?.unwrap_or_default();
        let names = lookup(&name).ok_or_else(|| {
            EngineError::new(Code::InternalError, format!("no {what} named '{name}'; use producer, consumer or lag"))
        })?;
        string_array(env, &names)
    })
    .resolve::<ThrowPolicy>()
}

#[cfg(test)]
mod tests {
    use super::{layout, setting_names};

    #[test]
    fn every_layout_is_known_by_name_and_ends_with_the_log_count() {
        for name in ["producer", "consumer", "lag"] {
            let slots = layout(name).unwrap();
            assert!(slots.contains(&"log_lines_waiting"), "{name}: {slots:?}");
            assert!(slots.iter().all(|s| s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')));
        }
        assert!(layout("nope").is_none());
    }

    #[test]
    fn setting_names_hold_each_clients_own_and_schema_keys_once() {
        let producer = setting_names("producer").unwrap();
        assert!(producer.contains(&"messages.per.sample") && producer.contains(&"schema.registry.password"));
        let consumer = setting_names("consumer").unwrap();
        // schema.registry.url is in both of the consumer's lists: named once
        assert_eq!(consumer.iter().filter(|n| **n == "value.decode").count(), 1);
        assert!(setting_names("lag").unwrap().contains(&"lag.windows"));
        assert!(setting_names("nope").is_none());
    }
}
