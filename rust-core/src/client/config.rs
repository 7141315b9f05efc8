//! `ClientConfig` from a property map, once for every client, and librdkafka's own verdict on each property,
//! so the engine never keeps its own (soon outdated) list of librdkafka's properties.

use std::collections::BTreeMap;
use std::os::raw::c_char;
use std::sync::{Arc, LazyLock};

use rdkafka::bindings as rd;
use rdkafka::client::ClientContext;
use rdkafka::config::FromClientConfigAndContext;
use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaConfRes;
use rdkafka::ClientConfig;

use super::context::HasClientCtx;
use super::oauth::NativeClient;
use super::settings::{is_secret, shown};
use crate::echo::{clip, ECHO};
use crate::error::{redact_kafka, EngineError};

/// Every property name librdkafka documents, aliases included (`linger.ms` is an alias, absent from a
/// configuration dump), read once from its own CONFIGURATION table.
pub fn property_names() -> Vec<String> {
    static NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
        properties_table()
            .lines()
            .filter_map(|line| line.split('|').next())
            .map(str::trim)
            .filter(|name| {
                !name.is_empty()
                    && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'_')
            })
            .map(str::to_string)
            .collect()
    });
    NAMES.clone()
}

/// The Markdown table `rd_kafka_conf_properties_show` prints, captured in memory.
fn properties_table() -> String {
    let mut buf: *mut c_char = std::ptr::null_mut();
    let mut len: libc::size_t = 0;
    // SAFETY: open_memstream gives a FILE* writing into a malloc'ed buffer that we read after fclose and free.
    unsafe {
        let file = libc::open_memstream(&mut buf, &mut len);
        if file.is_null() {
            return String::new();
        }
        rd::rd_kafka_conf_properties_show(file);
        libc::fclose(file);
        let bytes = std::slice::from_raw_parts(buf as *const u8, len);
        let text = String::from_utf8_lossy(bytes).into_owned();
        libc::free(buf as *mut libc::c_void);
        text
    }
}

/// Asks librdkafka (through rdkafka's `create_native_config`) about each property in turn, so the first refusal
/// in name order is reported: an unknown name gets the closest valid one suggested, a bad value librdkafka's reason.
pub fn validate(props: &BTreeMap<String, String>, candidates: &[String]) -> Result<(), EngineError> {
    // Sizes first: librdkafka accepts values that later corrupt its memory or its requests.
    super::limits::check_client(props)?;
    super::mock_cluster::check(props, super::mock_cluster::allowed_by_environment())?;
    // OIDC settings are the engine's (client/oauth.rs), not librdkafka's: checked there.
    let (props, _) = super::oauth::split(props)?;
    props.iter().try_for_each(|(key, value)| {
        let one: ClientConfig = [(key.clone(), value.clone())].into_iter().collect();
        match one.create_native_config() {
            Ok(_) => Ok(()),
            Err(KafkaError::ClientConfig(RDKafkaConfRes::RD_KAFKA_CONF_UNKNOWN, ..)) => {
                let hint = match closest(key, candidates) {
                    Some(name) => format!("did you mean {name}?"),
                    None => "see librdkafka's CONFIGURATION.md for the names it accepts".to_string(),
                };
                Err(EngineError::config(format!("{}: unknown property; {hint}", clip(key))))
            }
            Err(KafkaError::ClientConfig(_, why, ..)) => {
                // librdkafka's explanation quotes the value: leave it out for secrets.
                // (librdkafka ends some explanations with a newline, which would break the JTL's line.)
                let why = if is_secret(key) { "refused by librdkafka".to_string() } else { why.trim_end().to_string() };
                Err(EngineError::config(format!("{key}: {} is not valid; {why}", shown(key, value))))
            }
            Err(_) => {
                Err(EngineError::config(format!("{}: contains a NUL character", clip(&key.replace('\0', "\\0")))))
            }
        }
    })
}

/// The one place a librdkafka configuration is built from a property map.
pub fn client_config(props: &BTreeMap<String, String>) -> ClientConfig {
    props.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// A librdkafka client as [`create`] made it, used as the client itself (it dereferences to it). With OIDC it
/// also holds the client's place in its token source's refreshes, which it gives up before the client is
/// destroyed.
pub struct Created<T> {
    // Declared first, so dropped first: the refresher lets go of the client before librdkafka destroys it.
    _tokens: Option<super::oauth::Attachment>,
    client: T,
}

impl<T> std::ops::Deref for Created<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.client
    }
}

/// Creates a client of any kind (`what` names it in the error) with the given context; the properties were
/// validated before, so a failure here is rare, and its text never quotes a value.
/// With OAUTHBEARER/OIDC the first token is fetched before the client exists (a wrong secret or an unreachable
/// provider fails here, within seconds) and handed to the new client at once; the source's refresher hands it the
/// later ones.
pub fn create<C, T>(props: &BTreeMap<String, String>, context: C, what: &str) -> Result<Created<T>, EngineError>
where
    C: ClientContext + HasClientCtx,
    T: FromClientConfigAndContext<C> + NativeClient,
{
    let (props, oidc) = super::oauth::split(props)?;
    if let Some(files) = super::tls::Files::of(&props) {
        files.check_dates()?;
        context.client_ctx().set_tls(files);
    }
    let first = match oidc {
        Some(oidc) => {
            let source = super::oauth::source(&oidc);
            let token = source.token()?;
            context.client_ctx().set_oauth(Arc::clone(&source));
            Some((source, token))
        }
        None => None,
    };
    let client: T = client_config(&props).create_with_context(context).map_err(|e| {
        let why = redact_kafka(&e);
        EngineError::config(format!("the {what} could not be created: {why}{}", tls_hint(&why)))
    })?;
    let tokens = match first {
        Some((source, token)) => Some(source.attach(&client, &token)?),
        None => None,
    };
    Ok(Created { _tokens: tokens, client })
}

/// What OpenSSL's words mean for the client's TLS files (librdkafka loads them when the client is created).
fn tls_hint(why: &str) -> &'static str {
    if why.contains("key values mismatch") {
        "; the client key (ssl.key.location) does not match the client certificate (ssl.certificate.location)"
    } else if why.contains("ssl.key.location") {
        // OpenSSL says "PEM lib" or "bad decrypt" both for a wrong password and for a file that is no key
        "; the client key could not be read: ssl.key.location must be a PEM private key and, when it is encrypted, ssl.key.password its password (wrong or missing)"
    } else if why.contains("ssl.ca.location") {
        "; ssl.ca.location must be a PEM file of CA certificates (-----BEGIN CERTIFICATE-----)"
    } else if why.contains("ssl.certificate.location") {
        "; ssl.certificate.location must be a PEM file with the client's certificate"
    } else {
        ""
    }
}

/// The candidate closest to `key` by edit distance, if it is close enough to be a likely typo.
fn closest<'a>(key: &str, candidates: &'a [String]) -> Option<&'a str> {
    // No property name is this long, and the edit distance of a 1 MB key to every name would take minutes.
    if key.len() > ECHO {
        return None;
    }
    candidates
        .iter()
        .map(|c| (strsim::levenshtein(key, c), c))
        .filter(|(d, _)| *d <= 3.max(key.len() / 5))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_librdkafka_names() {
        let names = property_names();
        assert!(names.iter().any(|n| n == "linger.ms"));
        assert!(names.iter().any(|n| n == "acks"));
        assert!(names.iter().any(|n| n == "queue.buffering.max.ms"));
    }

    #[test]
    fn unknown_names_and_bad_values_are_told_apart() {
        let props = |k: &str, v: &str| BTreeMap::from([(k.to_string(), v.to_string())]);
        let names = property_names();
        let m = validate(&props("linger.mss", "5"), &names).unwrap_err().message;
        assert_eq!(m, "linger.mss: unknown property; did you mean linger.ms?");
        let m = validate(&props("acks", "banana"), &names).unwrap_err().message;
        assert!(m.starts_with("acks: 'banana' is not valid; "), "{m}");
        let m = validate(&props("client.id", "a\0b"), &names).unwrap_err().message;
        assert_eq!(m, "client.id: contains a NUL character");
        assert!(validate(&props("acks", "all"), &names).is_ok());
    }

    #[test]
    fn suggests_near_names_only() {
        let c = vec!["linger.ms".to_string(), "batch.size".to_string()];
        assert_eq!(closest("linger.mss", &c), Some("linger.ms"));
        assert_eq!(closest("completely.different.thing", &c), None);
    }
}
