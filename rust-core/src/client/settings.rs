//! What every client's parameters share: splitting the sampler's own keys from client properties, reading
//! flags and numbers, the bootstrap check, the Java security names translated, and secrets kept out of messages.

use std::collections::{BTreeMap, HashSet};
use std::sync::{LazyLock, Mutex};

use crate::error::EngineError;

/// Java security names every client accepts (see [`translate_security`]).
pub const JAVA_SECURITY_KEYS: &[&str] =
    &["sasl.jaas.config", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.type"];

/// The sampler's own keys, and the client properties (from the table and from `extra.properties`), trimmed.
pub struct Split<'a> {
    /// The sampler's own keys (`topic`, `acks`, ...), not handed to librdkafka.
    pub sampler: BTreeMap<&'a str, &'a str>,
    /// The client properties, in the order given, for librdkafka.
    pub explicit: Vec<(String, String)>,
}

/// Test input: the `base` settings a parse needs, then `items`, as the Java side passes them (in order).
#[cfg(test)]
pub(crate) fn test_pairs(base: &[(&str, &str)], items: &[(&str, &str)]) -> Vec<(String, String)> {
    base.iter().chain(items).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// Separates `keys` (the sampler's own) from client properties; blank values are skipped.
pub fn split<'a>(pairs: &'a [(String, String)], keys: &[&str]) -> Result<Split<'a>, EngineError> {
    let mut sampler = BTreeMap::new();
    let mut explicit = Vec::new();
    for (key, value) in pairs {
        let key = key.trim();
        if value.trim().is_empty() {
            continue;
        }
        let value = untrimmed_if_secret(key, value);
        if keys.contains(&key) {
            sampler.insert(key, value);
        } else {
            explicit.push((key.to_string(), value.to_string()));
        }
    }
    if let Some(extra) = sampler.get("extra.properties") {
        let listed = parse_property_list(extra, "extra.properties")?;
        refuse_conflicts(&explicit, &listed)?;
        explicit.extend(listed);
    }
    Ok(Split { sampler, explicit })
}

/// A property set both as a parameter and in `extra.properties` with another value: which one wins is not obvious
/// (a `bootstrap.servers` silently overridden there sends the test to another cluster), so it is refused.
fn refuse_conflicts(parameters: &[(String, String)], extra: &[(String, String)]) -> Result<(), EngineError> {
    for (k, v) in extra {
        if let Some((_, first)) = parameters.iter().find(|(pk, pv)| pk == k && pv != v) {
            return Err(EngineError::config(format!(
                "{k}: set twice with different values, {} as a parameter and {} in extra.properties; keep one",
                shown(k, first),
                shown(k, v)
            )));
        }
    }
    Ok(())
}

/// Every client needs brokers: refuse early, with an example.
pub fn require_bootstrap(explicit: &[(String, String)]) -> Result<(), EngineError> {
    if explicit.iter().any(|(k, _)| k == "bootstrap.servers") {
        return Ok(());
    }
    Err(EngineError::config(
        "bootstrap.servers: missing; set the brokers to connect to, e.g. 127.0.0.1:9092 (host:port, comma-separated)",
    ))
}

/// The brokers as named in messages.
pub fn servers(client: &BTreeMap<String, String>) -> &str {
    client.get("bootstrap.servers").map(String::as_str).unwrap_or("(bootstrap.servers not set)")
}

/// The properties any client needs to reach the cluster (brokers and security), without producer or consumer
/// settings: for the admin client, the audit's consumer and the like.
pub fn connection_properties(client: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    client
        .iter()
        .filter(|(k, _)| {
            k.as_str() == "bootstrap.servers"
                || ["security.", "sasl.", "ssl.", "broker.address"].iter().any(|prefix| k.starts_with(prefix))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Logs `text` at WARN once per JVM for `key` (a setting, a topic), not once per JMeter thread.
pub fn warn_once(key: &str, text: &str) {
    static WARNED: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(|| Mutex::new(HashSet::new()));
    if WARNED.lock().unwrap_or_else(|p| p.into_inner()).insert(key.to_string()) {
        log::warn!("{text}");
    }
}

/// True for properties whose value must never appear in a message or a log.
pub fn is_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.contains("password") || key.contains("secret") || key.contains("jaas") || key.ends_with("key.pem")
}

/// Shows a value in a message, or `***` when the key is secret.
pub fn shown(key: &str, value: &str) -> String {
    if is_secret(key) {
        "***".to_string()
    } else {
        format!("'{}'", crate::echo::clip(value))
    }
}

/// `value` trimmed, except a secret's: a password may end with a space, and a trimmed one authenticates as another.
fn untrimmed_if_secret<'a>(key: &str, value: &'a str) -> &'a str {
    if is_secret(key) {
        value
    } else {
        value.trim()
    }
}

/// Parses `k=v` items separated by `;` or newlines (the items are trimmed, a secret's value is not).
pub fn parse_property_list(text: &str, what: &str) -> Result<Vec<(String, String)>, EngineError> {
    text.split([';', '\n'])
        .filter(|item| !item.trim().is_empty())
        .map(|item| match item.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), untrimmed_if_secret(k.trim(), v).to_string()))
            }
            _ => Err(EngineError::config(format!(
                "{what}: '{}' is not of the form key=value (items are separated by ';' or new lines)",
                if is_secret(item) { "***".to_string() } else { crate::echo::clip(item.trim()) }
            ))),
        })
        .collect()
}

/// `true` / `false` (absent = false).
pub fn flag(map: &BTreeMap<&str, &str>, key: &str) -> Result<bool, EngineError> {
    match map.get(key).copied() {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(EngineError::config(format!("{key}: '{other}' is not valid; use true or false"))),
    }
}

/// A whole number from `min` to `max`, or `default` when absent.
pub fn number<T>(map: &BTreeMap<&str, &str>, key: &str, default: T, min: i64, max: i64) -> Result<T, EngineError>
where
    T: TryFrom<i64>,
{
    match map.get(key) {
        None => Ok(default),
        Some(raw) => parse_number(raw, key, min, max),
    }
}

/// `raw` as a whole number from `min` to `max`; the error names the key (and hides a secret value).
pub fn parse_number<T: TryFrom<i64>>(raw: &str, key: &str, min: i64, max: i64) -> Result<T, EngineError> {
    raw.parse::<i64>().ok().filter(|n| (min..=max).contains(n)).and_then(|n| T::try_from(n).ok()).ok_or_else(|| {
        let raw = if is_secret(key) { "***" } else { raw };
        EngineError::config(format!("{key}: '{raw}' is not valid; use a whole number from {min} to {max}"))
    })
}

/// A required sampler key.
pub fn required(map: &BTreeMap<&str, &str>, key: &str, hint: &str) -> Result<String, EngineError> {
    map.get(key).map(|v| v.to_string()).ok_or_else(|| EngineError::config(format!("{key}: missing; {hint}")))
}

/// The Java security settings, which mean the same for every client, mapped onto librdkafka's; None for any
/// other key.
pub fn translate_security(key: &str, value: &str) -> Option<Result<Vec<(String, String)>, EngineError>> {
    match key {
        "sasl.jaas.config" => Some(jaas_to_properties(value)),
        "ssl.truststore.location" | "ssl.truststore.type" | "ssl.truststore.password" => {
            Some(Err(EngineError::config(format!(
                "{key}: Java trust stores are not read by librdkafka; export the CA certificate as PEM and set ssl.ca.location to its path"
            ))))
        }
        _ => None,
    }
}

/// `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`
/// becomes `sasl.username` and `sasl.password`. Only the username ever appears in an error.
fn jaas_to_properties(jaas: &str) -> Result<Vec<(String, String)>, EngineError> {
    match (jaas_field(jaas, "username"), jaas_field(jaas, "password")) {
        (Some(user), Some(password)) => {
            Ok(vec![("sasl.username".to_string(), user), ("sasl.password".to_string(), password)])
        }
        _ => Err(EngineError::config(
            "sasl.jaas.config: no username=\"...\" password=\"...\" found; librdkafka has no JAAS, so set sasl.username and sasl.password instead",
        )),
    }
}

/// The quoted value of option `name` in a JAAS line, as Java's parser reads it: spaces allowed around `=`,
/// `\"` and `\\` escaped inside the quotes.
fn jaas_field(jaas: &str, name: &str) -> Option<String> {
    let mut rest = jaas;
    loop {
        let at = rest.find(name)?;
        let before_ok = rest[..at].chars().next_back().is_none_or(|c| c.is_whitespace() || c == ';');
        let after = rest[at + name.len()..].trim_start();
        rest = &rest[at + name.len()..];
        let Some(value) = after.strip_prefix('=').map(str::trim_start).and_then(|v| v.strip_prefix('"')) else {
            continue;
        };
        if !before_ok {
            continue;
        }
        let mut out = String::new();
        let mut chars = value.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.push(chars.next()?),
                '"' => return Some(out),
                c => out.push(c),
            }
        }
        return None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_hidden() {
        assert_eq!(shown("sasl.password", "hunter2"), "***");
        assert_eq!(shown("ssl.key.password", "hunter2"), "***");
        assert_eq!(shown("acks", "1"), "'1'");
        let m = parse_property_list("sasl.password hunter2", "extra.properties").unwrap_err().message;
        assert!(!m.contains("hunter2"), "{m}");
    }

    #[test]
    fn secrets_are_not_trimmed() {
        let listed = parse_property_list(" sasl.password = pw ; acks = 1 ", "extra.properties").unwrap();
        assert_eq!(listed, [("sasl.password".into(), " pw ".into()), ("acks".into(), "1".into())]);
        let pairs = test_pairs(&[("sasl.password", "pw "), (" linger.ms ", " 5 "), ("ssl.key.password", "  ")], &[]);
        let split = split(&pairs, &[]).unwrap();
        assert_eq!(split.explicit, [("sasl.password".into(), "pw ".into()), ("linger.ms".into(), "5".into())]);
    }

    #[test]
    fn jaas_lines_become_username_and_password() {
        let props = translate_security(
            "sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p\";",
        )
        .unwrap()
        .unwrap();
        assert_eq!(props, [("sasl.username".into(), "u".into()), ("sasl.password".into(), "p".into())]);
        assert!(translate_security("acks", "1").is_none());
    }

    #[test]
    fn jaas_accepts_spacing_and_escaped_quotes() {
        let spaced = "ScramLoginModule required username = \"u\"  password =\"p;q\";";
        assert_eq!(jaas_field(spaced, "username").as_deref(), Some("u"));
        assert_eq!(jaas_field(spaced, "password").as_deref(), Some("p;q"));
        let escaped = r#"PlainLoginModule required username="u" password="a\"b\\c";"#;
        assert_eq!(jaas_field(escaped, "password").as_deref(), Some(r#"a"b\c"#));
        assert_eq!(jaas_field("x myusername=\"no\"", "username"), None);
    }

    #[test]
    fn connection_properties_keep_brokers_and_security_only() {
        let client: BTreeMap<String, String> =
            [("bootstrap.servers", "b:1"), ("sasl.username", "u"), ("acks", "all"), ("linger.ms", "5")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        assert_eq!(connection_properties(&client).keys().collect::<Vec<_>>(), ["bootstrap.servers", "sasl.username"]);
    }
}
