//! Size and character limits of what the engine hands to librdkafka and Kafka, checked before any client exists.
//!
//! librdkafka copies strings without bounds of its own in places where Kafka or librdkafka itself has one, and
//! then fails far from the cause: its statistics writer (`rd_kafka_stats_emit_all`) grows its 10 KB buffer only
//! once per line, so a `client.id` longer than about 20 KB makes it write past the buffer (heap corruption; a
//! SIGSEGV in libc from about 1 MB), and Kafka's protocol strings carry an INT16 length, so a longer `client.id`
//! or `group.id` is sent with a wrapped length that the broker cannot parse ("no broker answered"). Every
//! limit here names the property, the size found, the limit and who sets it.
//!
//! librdkafka also copies some values onto the stack of the calling thread (`alloca`): the whole
//! `bootstrap.servers` list when the client is created (on the JMeter thread, whose stack is 1 MB: a 1 MB list
//! kills the JVM without even an hs_err file), the SASL username and password on its broker threads. So every
//! property value is bounded.

use std::collections::BTreeMap;

use crate::echo::clip;
use crate::error::EngineError;
use crate::files;

/// Longest `client.id`: well below the ~20 KB at which librdkafka's statistics line overflows its buffer
/// (the line holds the id plus about 500 bytes), and below Kafka's 32,767-byte request-header limit.
pub const MAX_CLIENT_ID: usize = 16_384;
/// Kafka protocol STRING: an INT16 length.
pub const MAX_PROTOCOL_STRING: usize = i16::MAX as usize;
/// Kafka's limit on topic names (`Topic.MAX_NAME_LENGTH`).
pub const MAX_TOPIC: usize = 249;
/// librdkafka keeps a broker's `host:port` in a 256-byte buffer (`RD_KAFKA_NODENAME_SIZE`, with the NUL).
pub const MAX_BROKER_NAME: usize = 255;
/// librdkafka starts one thread per bootstrap entry; thousands take minutes to start and stop, with no output.
pub const MAX_BOOTSTRAP_ENTRIES: usize = 100;
/// Longest value of any librdkafka property (inline PEM certificates excepted): well inside a 1 MB thread stack.
pub const MAX_VALUE: usize = 65_536;
/// Inline certificates and keys (`ssl.ca.pem`, ...) are parsed from the heap; a CA bundle can be a few hundred KB.
pub const MAX_PEM: usize = 4 * 1024 * 1024;
/// `bootstrap.servers` is copied onto the calling thread's stack once per entry that is parsed.
pub const MAX_BOOTSTRAP_BYTES: usize = 16_384;

/// Properties that travel as Kafka protocol strings (INT16 length) besides `client.id`.
const PROTOCOL_STRINGS: &[&str] = &["group.id", "group.instance.id", "transactional.id", "client.rack"];

/// Checks the librdkafka properties of any client (producer, consumer, admin, audit) against the limits above.
pub fn check_client(props: &BTreeMap<String, String>) -> Result<(), EngineError> {
    if let Some(id) = props.get("client.id") {
        if id.len() > MAX_CLIENT_ID {
            return Err(EngineError::config(format!(
                "client.id: {} bytes is too long; use at most {MAX_CLIENT_ID} bytes (librdkafka's statistics overflow \
                 their buffer on ids above about 20 KB, and Kafka's request header carries at most {MAX_PROTOCOL_STRING})",
                id.len()
            )));
        }
    }
    for key in PROTOCOL_STRINGS {
        if let Some(v) = props.get(*key) {
            check_protocol_string(key, v)?;
        }
    }
    if let Some(servers) = props.get("bootstrap.servers") {
        check_bootstrap(servers)?;
    }
    check_files(props)?;
    for (key, value) in props {
        let limit = if key.ends_with(".pem") { MAX_PEM } else { MAX_VALUE };
        if value.len() > limit {
            return Err(EngineError::config(format!(
                "{}: {} bytes is too long; librdkafka takes at most {limit} bytes here (it copies values onto \
                 its threads' stacks)",
                clip(key),
                value.len()
            )));
        }
    }
    Ok(())
}

/// Files librdkafka reads when the client is created: a missing one gives OpenSSL's "BIO lib" without the path, a
/// FIFO blocks the creating thread, a file that is not PEM gives OpenSSL's text only. `ssl.ca.location` may be a
/// directory of hashed certificates (OpenSSL's CApath).
fn check_files(props: &BTreeMap<String, String>) -> Result<(), EngineError> {
    for (key, path) in props {
        let is_file = key.starts_with("ssl.") && key.ends_with(".location") || key == "sasl.kerberos.keytab";
        // "probe" asks librdkafka to look for the system's CA certificates.
        if !is_file || path == "probe" || path.is_empty() {
            continue;
        }
        let limit = files::Limit::fixed(files::MAX_CERTIFICATE);
        let file = files::check(path, key, limit, key == "ssl.ca.location").map_err(EngineError::config)?;
        if let (Some(file), Some(kind)) = (file, pem_kind(key)) {
            let mut head = Vec::new();
            let read = std::io::Read::read_to_end(&mut std::io::Read::take(file, files::MAX_CERTIFICATE), &mut head);
            if read.is_err() || !head.windows(11).any(|w| w == b"-----BEGIN ") {
                return Err(EngineError::config(format!(
                    "{key}: '{}' is not a PEM file (no '-----BEGIN' line); librdkafka reads {kind} as PEM only: \
                     convert it with openssl (x509 -inform der for a certificate, pkey -inform der for a key)",
                    clip(path)
                )));
            }
        }
    }
    Ok(())
}

/// What a PEM-only location holds, for the message; None for files of other formats (keystore, keytab, CRL ...).
fn pem_kind(key: &str) -> Option<&'static str> {
    match key {
        "ssl.ca.location" => Some("CA certificates"),
        "ssl.certificate.location" => Some("the client certificate"),
        "ssl.key.location" => Some("the private key"),
        _ => None,
    }
}

/// A value sent as a Kafka protocol STRING: at most 32,767 bytes, no NUL (librdkafka reads it as a C string).
pub fn check_protocol_string(key: &str, value: &str) -> Result<(), EngineError> {
    if value.len() > MAX_PROTOCOL_STRING {
        return Err(EngineError::config(format!(
            "{key}: {} bytes is too long; Kafka's protocol carries at most {MAX_PROTOCOL_STRING} bytes in a string \
             (INT16 length), use a shorter {key}",
            value.len()
        )));
    }
    if value.contains('\0') {
        return Err(EngineError::config(format!(
            "{key}: '{}' contains a NUL character",
            clip(&value.replace('\0', "\\0"))
        )));
    }
    Ok(())
}

/// `host:port` entries: each at most 255 bytes, at most 1,000 of them.
fn check_bootstrap(servers: &str) -> Result<(), EngineError> {
    let entries: Vec<&str> = servers.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if entries.len() > MAX_BOOTSTRAP_ENTRIES {
        return Err(EngineError::config(format!(
            "bootstrap.servers: {} entries; list at most {MAX_BOOTSTRAP_ENTRIES} (a few brokers of the cluster are \
             enough, librdkafka discovers the others; it opens one thread per entry)",
            entries.len()
        )));
    }
    if servers.len() > MAX_BOOTSTRAP_BYTES {
        return Err(EngineError::config(format!(
            "bootstrap.servers: {} bytes is too long; list at most {MAX_BOOTSTRAP_BYTES} bytes of host:port entries \
             (librdkafka copies the list onto the calling thread's stack)",
            servers.len()
        )));
    }
    if let Some(long) = entries.iter().find(|e| e.len() > MAX_BROKER_NAME) {
        return Err(EngineError::config(format!(
            "bootstrap.servers: the entry '{}' is too long; a host:port has at most {MAX_BROKER_NAME} bytes \
             (librdkafka's limit for broker names)",
            clip(long)
        )));
    }
    if let Some((entry, port)) = entries.iter().find_map(|e| bad_port(e).map(|p| (e, p))) {
        // librdkafka reads a port that is not a number as 0 and says only "Failed to resolve 'host:0'".
        return Err(EngineError::config(format!(
            "bootstrap.servers: '{}' has the port '{}', which is not a number from 1 to 65535; write host:port, \
             e.g. 127.0.0.1:9092",
            clip(entry),
            clip(port)
        )));
    }
    Ok(())
}

/// The port of a `[proto://]host:port` entry when it is not a number from 1 to 65535 (an IPv6 address without
/// brackets has no port to check).
fn bad_port(entry: &str) -> Option<&str> {
    let address = entry.split_once("://").map_or(entry, |(_, rest)| rest);
    let after_host = match address.strip_prefix('[') {
        Some(bracketed) => bracketed.split_once(']')?.1.strip_prefix(':')?,
        None if address.matches(':').count() == 1 => address.split_once(':')?.1,
        None => return None,
    };
    match after_host.parse::<u16>() {
        Ok(port) if port > 0 && after_host.bytes().all(|b| b.is_ascii_digit()) => None,
        _ => Some(after_host),
    }
}

/// A topic name as Kafka accepts it: 1 to 249 of ASCII letters, digits, '.', '_' and '-', and not "." or "..".
pub fn check_topic(topic: &str) -> Result<(), EngineError> {
    let chars = topic.chars().count();
    if chars > MAX_TOPIC {
        return Err(EngineError::config(format!(
            "topic: '{}' has {chars} characters; Kafka allows at most {MAX_TOPIC}",
            clip(topic)
        )));
    }
    if topic == "." || topic == ".." {
        return Err(EngineError::config(format!("topic: '{topic}' is not a legal topic name for Kafka")));
    }
    if let Some(bad) = topic.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))) {
        let shown = clip(&topic.replace('\0', "\\0"));
        return Err(EngineError::config(format!(
            "topic: '{shown}' contains {}, which Kafka does not allow; the legal characters are ASCII letters, \
             digits, '.', '_' and '-'",
            describe(bad)
        )));
    }
    Ok(())
}

/// A character named so that an invisible one is visible: `'!'`, `NUL`, `U+FFFD (not valid UTF-8 in the input)`.
fn describe(c: char) -> String {
    match c {
        '\0' => "a NUL character".to_string(),
        '\u{FFFD}' => "U+FFFD (bytes that were not valid UTF-8 or UTF-16, e.g. a lone surrogate)".to_string(),
        c if c.is_control() || c.is_whitespace() => format!("the character U+{:04X}", c as u32),
        c => format!("'{c}'"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(items: &[(&str, String)]) -> BTreeMap<String, String> {
        items.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn client_id_is_bounded_below_the_statistics_overflow() {
        assert!(check_client(&props(&[("client.id", "c".repeat(MAX_CLIENT_ID))])).is_ok());
        let e = check_client(&props(&[("client.id", "c".repeat(1_048_575))])).unwrap_err();
        assert_eq!(e.code, "CONFIG_ERROR");
        assert!(e.message.starts_with("client.id: 1048575 bytes is too long; use at most 16384"), "{}", e.message);
    }

    #[test]
    fn every_value_is_bounded() {
        let e = check_client(&props(&[("sasl.password", "p".repeat(MAX_VALUE + 1))])).unwrap_err();
        assert!(e.message.starts_with("sasl.password: 65537 bytes is too long"), "{}", e.message);
        assert!(!e.message.contains("ppp"), "{}", e.message);
        assert!(check_client(&props(&[("ssl.ca.pem", "p".repeat(MAX_VALUE + 1))])).is_ok());
    }

    #[test]
    fn protocol_strings_are_bounded_by_int16() {
        assert!(check_client(&props(&[("group.id", "g".repeat(32_767))])).is_ok());
        let e = check_client(&props(&[("group.id", "g".repeat(32_768))])).unwrap_err();
        assert!(e.message.contains("at most 32767"), "{}", e.message);
        assert!(e.message.len() < 300, "{}", e.message);
    }

    #[test]
    fn bootstrap_entries_are_bounded() {
        let many = (0..800).map(|i| format!("h{i}:9092")).collect::<Vec<_>>().join(",");
        let e = check_client(&props(&[("bootstrap.servers", many)])).unwrap_err();
        assert!(e.message.starts_with("bootstrap.servers: 800 entries"), "{}", e.message);
        let long = format!("{}:9092", "h".repeat(1000));
        let e = check_client(&props(&[("bootstrap.servers", long)])).unwrap_err();
        assert!(e.message.contains("at most 255") && e.message.len() < 400, "{}", e.message);
        let huge = format!("{}:9092", "h".repeat(1 << 20));
        let e = check_client(&props(&[("bootstrap.servers", huge)])).unwrap_err();
        assert!(e.message.starts_with("bootstrap.servers: 1048581 bytes is too long"), "{}", e.message);
    }

    #[test]
    fn bootstrap_ports_are_numbers() {
        for ok in ["h:9092", "h", "SASL_SSL://h:9094", "[::1]:9092", "::1", "[::1]"] {
            assert_eq!(bad_port(ok), None, "{ok}");
        }
        for (entry, port) in
            [("host:notaport", "notaport"), ("h:0", "0"), ("h:70000", "70000"), ("[::1]:x", "x"), ("h:", "")]
        {
            assert_eq!(bad_port(entry), Some(port), "{entry}");
        }
        let e = check_client(&props(&[("bootstrap.servers", "a:9092,host:notaport".into())])).unwrap_err();
        assert!(e.message.starts_with("bootstrap.servers: 'host:notaport' has the port 'notaport'"), "{}", e.message);
    }

    #[test]
    fn files_for_librdkafka_are_regular_pem_files() {
        let e = check_client(&props(&[("ssl.ca.location", "/dev/zero".into())])).unwrap_err();
        assert_eq!(e.message, "ssl.ca.location: '/dev/zero' is a device; name a regular file");
        let not_pem = std::env::temp_dir().join(format!("kn-limits-{}.der", std::process::id()));
        std::fs::write(&not_pem, [0x30u8, 0x82, 1, 2]).unwrap();
        let e = check_client(&props(&[("ssl.ca.location", not_pem.to_string_lossy().into_owned())])).unwrap_err();
        assert!(e.message.contains("is not a PEM file"), "{}", e.message);
        std::fs::remove_file(not_pem).unwrap();
        assert!(check_client(&props(&[("ssl.ca.location", "/tmp".into())])).is_ok());
    }

    #[test]
    fn topics_follow_kafkas_rules() {
        assert!(check_topic("orders_v2.eu-1").is_ok());
        assert!(check_topic(&"t".repeat(249)).is_ok());
        assert!(check_topic(&"t".repeat(250)).unwrap_err().message.contains("at most 249"));
        assert!(check_topic("bad topic").unwrap_err().message.contains("U+0020"));
        assert!(check_topic("a\0b").unwrap_err().message.contains("NUL"));
        assert!(check_topic("a\u{FFFD}").unwrap_err().message.contains("not valid UTF-8"));
        assert!(check_topic("..").is_err());
    }
}
