//! A blocking client for the Confluent-compatible schema registry API (`/subjects`, `/schemas/ids`), which
//! Confluent Schema Registry and Apicurio Registry (`/apis/ccompat/v7`) both serve.
//!
//! Lookups happen when a generator or decoder is set up, never per record, and their answers are kept in a
//! process-wide cache: N JMeter threads with the same schema cost one request, not N.
//! Errors name the registry's URL without any user or password.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use base64::Engine as _;

use serde_json::{json, Value as Json};

use super::Format;
use crate::error::{Code, EngineError};
use crate::files;

/// How to reach a registry.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RegistryConfig {
    /// Base URL of the Confluent-compatible API, e.g. `http://127.0.0.1:8081/apis/ccompat/v7`.
    pub url: String,
    /// Basic authentication user, if any.
    pub username: Option<String>,
    /// Basic authentication password (never shown in errors or logs).
    pub password: Option<String>,
    /// A PEM file with the CA certificate(s) that signed the registry's TLS certificate.
    pub ca_file: Option<String>,
    /// Timeout of each HTTP request.
    pub timeout: Duration,
}

impl std::fmt::Debug for RegistryConfig {
    // by hand: the password must never reach a log line through {:?}
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryConfig")
            .field("url", &redact_url(&self.url))
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("ca_file", &self.ca_file)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// A schema as the registry stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredSchema {
    /// Its global id (what the wire format carries).
    pub id: u32,
    /// The schema text.
    pub text: String,
    /// AVRO, JSON or PROTOBUF.
    pub format: Format,
}

/// A registry client; cheap to clone (the HTTP agent and its connections are shared).
#[derive(Clone)]
pub struct RegistryClient {
    agent: ureq::Agent,
    base: String,
    /// `base` without user:password@ — the only form that appears in errors.
    shown: String,
    auth: Option<String>,
}

/// Answers already fetched, by (registry URL, question): setup of many threads asks once.
static CACHE: LazyLock<Mutex<HashMap<(String, String), RegisteredSchema>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

impl RegistryClient {
    /// A client for `config`; reads the CA file now, so a wrong path fails at setup.
    pub fn new(config: &RegistryConfig) -> Result<RegistryClient, EngineError> {
        let shown = redact_url(config.url.trim_end_matches('/'));
        let (base, url_auth) = split_userinfo(config.url.trim_end_matches('/'));
        if !base.starts_with("http://") && !base.starts_with("https://") {
            return Err(EngineError::config(format!(
                "schema.registry.url: '{shown}' is not an http:// or https:// URL, e.g. http://127.0.0.1:8081/apis/ccompat/v7"
            )));
        }
        let mut builder = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(config.timeout))
            .user_agent("jmeter-kafka-native");
        // TLS through native-tls on the OpenSSL linked in for librdkafka. Without a CA file the system's trust store
        // is used (native-tls looks in the usual places: /etc/ssl/certs and the like).
        let mut roots = ureq::tls::RootCerts::PlatformVerifier;
        if let Some(ca) = config.ca_file.as_deref().filter(|c| !c.is_empty()) {
            let pem = files::read(ca, "schema.registry.ssl.ca.location", files::Limit::fixed(files::MAX_CERTIFICATE))
                .map_err(EngineError::config)?;
            let certs: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(&pem)
                .filter_map(|item| match item {
                    Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                    _ => None,
                })
                .collect();
            if certs.is_empty() {
                return Err(EngineError::config(format!(
                    "schema.registry.ssl.ca.location: '{ca}' holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
                )));
            }
            roots = ureq::tls::RootCerts::Specific(Arc::new(certs));
        }
        builder = builder.tls_config(
            ureq::tls::TlsConfig::builder().provider(ureq::tls::TlsProvider::NativeTls).root_certs(roots).build(),
        );
        let user = config.username.clone().filter(|u| !u.is_empty()).or(url_auth.as_ref().map(|(u, _)| u.clone()));
        let password = config.password.clone().or(url_auth.map(|(_, p)| p));
        let auth = user.map(|u| {
            let raw = format!("{u}:{}", password.unwrap_or_default());
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(raw))
        });
        Ok(RegistryClient { agent: ureq::Agent::new_with_config(builder.build()), base, shown, auth })
    }

    /// The registry's URL as shown in messages (without credentials).
    pub fn shown_url(&self) -> &str {
        &self.shown
    }

    /// Registers `text` under `subject` (or finds it registered already) and returns its id.
    /// A schema the subject's compatibility rule refuses is `SCHEMA_INCOMPATIBLE` (HTTP 409).
    pub fn register(&self, subject: &str, format: Format, text: &str) -> Result<u32, EngineError> {
        let key = format!("register\n{subject}\n{}\n{text}", format.registry_type());
        self.cached(key, || {
            let body = schema_body(format, text);
            let answer = self.request("POST", &format!("/subjects/{}/versions", encode_path(subject)), Some(body))?;
            match answer {
                (200, json) => Ok(RegisteredSchema { id: id_of(&json, &self.shown)?, text: text.to_string(), format }),
                (409, json) => Err(EngineError::new(
                    Code::SchemaIncompatible,
                    format!(
                        "the schema registry at {} refused the schema for subject '{subject}' as incompatible with its \
                         earlier versions (HTTP 409: {}); change the schema compatibly, or the subject's compatibility setting",
                        self.shown,
                        message_of(&json)
                    ),
                )),
                (422, json) => Err(EngineError::new(
                    Code::RegistryError,
                    format!(
                        "the schema registry at {} refused the schema for subject '{subject}' as invalid (HTTP 422: {})",
                        self.shown,
                        message_of(&json)
                    ),
                )),
                (status, json) => Err(self.unexpected(status, &json, &format!("registering a schema under '{subject}'"))),
            }
        })
        .map(|s| s.id)
    }

    /// The id of `text` already registered under `subject` (auto-register off). Not registered is
    /// `SCHEMA_NOT_FOUND`; no such subject is `SUBJECT_NOT_FOUND`.
    pub fn lookup(&self, subject: &str, format: Format, text: &str) -> Result<u32, EngineError> {
        let key = format!("lookup\n{subject}\n{}\n{text}", format.registry_type());
        self.cached(key, || {
            let body = schema_body(format, text);
            match self.request("POST", &format!("/subjects/{}", encode_path(subject)), Some(body))? {
                (200, json) => Ok(RegisteredSchema { id: id_of(&json, &self.shown)?, text: text.to_string(), format }),
                (404, json) if error_code(&json) == Some(40401) => Err(self.subject_missing(subject)),
                (404, json) => Err(EngineError::new(
                    Code::SchemaNotFound,
                    format!(
                        "the schema is not registered under subject '{subject}' at {} ({}); register it, or set \
                         auto.register.schemas=true",
                        self.shown,
                        message_of(&json)
                    ),
                )),
                (status, json) => Err(self.unexpected(status, &json, &format!("looking up the schema of '{subject}'"))),
            }
        })
        .map(|s| s.id)
    }

    /// The schema registered as `version` (a number or `latest`) of `subject`.
    pub fn version(&self, subject: &str, version: &str) -> Result<RegisteredSchema, EngineError> {
        let key = format!("version\n{subject}\n{version}");
        // `latest` may change during a test run; it is still asked once per process, like Confluent's
        // serializers with use.latest.version do within their cache's lifetime.
        self.cached(key, || {
            let path = format!("/subjects/{}/versions/{}", encode_path(subject), encode_path(version));
            match self.request("GET", &path, None)? {
                (200, json) => {
                    let text = json.get("schema").and_then(Json::as_str).unwrap_or_default().to_string();
                    let format = Format::from_registry_type(json.get("schemaType").and_then(Json::as_str))?;
                    Ok(RegisteredSchema { id: id_of(&json, &self.shown)?, text, format })
                }
                (404, json) if error_code(&json) == Some(40402) => Err(EngineError::new(
                    Code::SubjectNotFound,
                    format!(
                        "subject '{subject}' has no version '{version}' at {}; use a version it has, or latest",
                        self.shown
                    ),
                )),
                (404, _) => Err(self.subject_missing(subject)),
                (status, json) => {
                    Err(self.unexpected(status, &json, &format!("reading version {version} of subject '{subject}'")))
                }
            }
        })
    }

    /// The schema with this id (what a consumer reads in a record's header).
    pub fn by_id(&self, id: u32) -> Result<RegisteredSchema, EngineError> {
        self.cached(format!("id\n{id}"), || match self.request("GET", &format!("/schemas/ids/{id}"), None)? {
            (200, json) => {
                let text = json.get("schema").and_then(Json::as_str).unwrap_or_default().to_string();
                let format = Format::from_registry_type(json.get("schemaType").and_then(Json::as_str))?;
                Ok(RegisteredSchema { id, text, format })
            }
            (404, _) => Err(EngineError::new(
                Code::SchemaNotFound,
                format!("the record's schema id {id} is unknown to the schema registry at {}", self.shown),
            )),
            (status, json) => Err(self.unexpected(status, &json, &format!("reading schema id {id}"))),
        })
    }

    fn cached(
        &self,
        question: String,
        ask: impl FnOnce() -> Result<RegisteredSchema, EngineError>,
    ) -> Result<RegisteredSchema, EngineError> {
        let key = (self.base.clone(), question);
        if let Some(hit) = CACHE.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(hit.clone());
        }
        // Not holding the lock during the request: a slow registry must not stall other threads' lookups.
        let answer = ask()?;
        CACHE.lock().unwrap_or_else(|p| p.into_inner()).insert(key, answer.clone());
        Ok(answer)
    }

    /// One HTTP exchange: (status, JSON body). Transport failures are `REGISTRY_UNREACHABLE`.
    fn request(&self, method: &str, path: &str, body: Option<Json>) -> Result<(u16, Json), EngineError> {
        let url = format!("{}{path}", self.base);
        let result = match method {
            "GET" => {
                let mut req = self.agent.get(&url).header("Accept", "application/vnd.schemaregistry.v1+json");
                if let Some(a) = &self.auth {
                    req = req.header("Authorization", a);
                }
                req.call()
            }
            _ => {
                let mut req = self
                    .agent
                    .post(&url)
                    .header("Accept", "application/vnd.schemaregistry.v1+json")
                    .header("Content-Type", "application/vnd.schemaregistry.v1+json");
                if let Some(a) = &self.auth {
                    req = req.header("Authorization", a);
                }
                req.send(body.unwrap_or(Json::Null).to_string())
            }
        };
        let mut response = result.map_err(|e| {
            EngineError::new(
                Code::RegistryUnreachable,
                format!(
                    "cannot reach the schema registry at {}: {}; check schema.registry.url{}",
                    self.shown,
                    describe_transport_error(&e),
                    if self.base.starts_with("https://") { " and schema.registry.ssl.ca.location" } else { "" }
                ),
            )
        })?;
        let status = response.status().as_u16();
        // A registry's answer is a schema and a few ids: 16 MB is far above any real one.
        const MAX_ANSWER: u64 = 16 * 1024 * 1024;
        let text = response.body_mut().with_config().limit(MAX_ANSWER).read_to_string().map_err(|e| {
            let why = match e {
                ureq::Error::BodyExceedsLimit(_) => format!("more than {MAX_ANSWER} bytes"),
                e => format!("an answer that could not be read ({e})"),
            };
            EngineError::new(
                Code::RegistryError,
                format!("the schema registry at {} sent {why} (HTTP {status}); check schema.registry.url", self.shown),
            )
        })?;
        let json = serde_json::from_str(&text).unwrap_or(Json::String(text));
        if status == 401 || status == 403 {
            return Err(EngineError::new(
                Code::RegistryAuthFailed,
                format!(
                    "the schema registry at {} refused the request (HTTP {status}); check schema.registry.username and \
                     schema.registry.password",
                    self.shown
                ),
            ));
        }
        Ok((status, json))
    }

    fn subject_missing(&self, subject: &str) -> EngineError {
        EngineError::new(
            Code::SubjectNotFound,
            format!(
                "subject '{subject}' does not exist in the schema registry at {}; register a schema under it first, \
                 or set auto.register.schemas=true",
                self.shown
            ),
        )
    }

    fn unexpected(&self, status: u16, json: &Json, doing: &str) -> EngineError {
        EngineError::new(
            Code::RegistryError,
            format!("the schema registry at {} answered HTTP {status} when {doing}: {}", self.shown, message_of(json)),
        )
    }
}

fn schema_body(format: Format, text: &str) -> Json {
    match format {
        // AVRO is the default type: Confluent's serializers leave it out, and so do we.
        Format::Avro => json!({ "schema": text }),
        other => json!({ "schema": text, "schemaType": other.registry_type() }),
    }
}

fn id_of(json: &Json, shown: &str) -> Result<u32, EngineError> {
    json.get("id").and_then(Json::as_u64).and_then(|id| u32::try_from(id).ok()).ok_or_else(|| {
        EngineError::new(
            Code::RegistryError,
            format!("the schema registry at {shown} answered without a schema id: {json}"),
        )
    })
}

fn error_code(json: &Json) -> Option<i64> {
    json.get("error_code").and_then(Json::as_i64)
}

fn message_of(json: &Json) -> String {
    let text = match json.get("message").and_then(Json::as_str) {
        Some(m) => m.to_string(),
        None => json.to_string(),
    };
    // an HTML error page or a stack trace would drown the sample's response message
    let mut cut: String = text.chars().take(400).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

fn describe_transport_error(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(_) => "no answer in time (timeout)".to_string(),
        ureq::Error::HostNotFound => "host not found".to_string(),
        ureq::Error::ConnectionFailed => "connection refused or failed".to_string(),
        ureq::Error::Io(io) => format!("{io}"),
        other => other.to_string(),
    }
}

/// Percent-encodes a path segment (subjects may contain `/`, `:` or spaces).
fn encode_path(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `http://user:pw@host/x` → (`http://host/x`, Some((user, pw))).
fn split_userinfo(url: &str) -> (String, Option<(String, String)>) {
    let Some((scheme, rest)) = url.split_once("://") else { return (url.to_string(), None) };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rsplit_once('@') {
        Some((userinfo, host)) => {
            let (u, p) = userinfo.split_once(':').unwrap_or((userinfo, ""));
            (format!("{scheme}://{host}{}", &rest[authority_end..]), Some((u.to_string(), p.to_string())))
        }
        None => (url.to_string(), None),
    }
}

/// The URL without user information, for messages.
pub fn redact_url(url: &str) -> String {
    split_userinfo(url).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    fn config(url: &str) -> RegistryConfig {
        RegistryConfig {
            url: url.to_string(),
            username: None,
            password: None,
            ca_file: None,
            timeout: Duration::from_secs(2),
        }
    }

    #[test]
    fn urls_lose_their_credentials_in_messages() {
        assert_eq!(redact_url("https://bob:s3cret@reg:8081/apis/ccompat/v7"), "https://reg:8081/apis/ccompat/v7");
        let mut c = config("http://bob:s3cret@127.0.0.1:9/x");
        c.password = Some("other-secret".into());
        assert!(!format!("{c:?}").contains("secret"), "{c:?}");
    }

    #[test]
    fn subjects_are_percent_encoded() {
        assert_eq!(encode_path("orders-value"), "orders-value");
        assert_eq!(encode_path("a/b c:d"), "a%2Fb%20c%3Ad");
    }

    #[test]
    fn an_unreachable_registry_names_the_url_but_not_the_password() {
        // port 9 on the loopback: nothing listens there in the test namespaces
        let mut c = config("http://bob:s3cret@127.0.0.1:9/apis/ccompat/v7");
        c.password = Some("s3cret".into());
        let e = RegistryClient::new(&c).unwrap().by_id(12345).unwrap_err();
        assert_eq!(e.code, Code::RegistryUnreachable);
        assert!(e.message.contains("http://127.0.0.1:9/apis/ccompat/v7"), "{}", e.message);
        assert!(!e.message.contains("s3cret") && !e.message.contains("bob"), "{}", e.message);
    }

    #[test]
    fn a_missing_ca_file_fails_at_setup() {
        let mut c = config("https://127.0.0.1:9/x");
        c.ca_file = Some("/nonexistent/ca.pem".into());
        let e = RegistryClient::new(&c).err().unwrap();
        assert!(
            e.message.starts_with("schema.registry.ssl.ca.location: cannot read '/nonexistent/ca.pem'"),
            "{}",
            e.message
        );
    }

    /// Basic authentication needs a registry with users; Apicurio's in-memory setup has none, so this one
    /// check reads the request a one-shot local listener receives.
    #[test]
    fn basic_auth_is_sent_as_an_authorization_header() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap();
            let body = "{\"error_code\":40101,\"message\":\"Unauthorized\"}";
            let _ = write!(
                s,
                "HTTP/1.1 401 Unauthorized\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            String::from_utf8_lossy(&buf[..n]).to_string()
        });
        let mut c = config(&format!("http://127.0.0.1:{port}/apis/ccompat/v7"));
        c.username = Some("alice".into());
        c.password = Some("pa55".into());
        let e = RegistryClient::new(&c).unwrap().by_id(1).unwrap_err();
        let request = server.join().unwrap();
        // base64("alice:pa55")
        assert!(
            request.contains("authorization: Basic YWxpY2U6cGE1NQ==")
                || request.contains("Authorization: Basic YWxpY2U6cGE1NQ=="),
            "{request}"
        );
        assert_eq!(e.code, Code::RegistryAuthFailed);
        assert!(!e.message.contains("pa55"), "{}", e.message);
    }
}
