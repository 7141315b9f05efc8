//! A blocking client for the Confluent-compatible schema registry API (`/subjects`, `/schemas/ids`), which
//! Confluent Schema Registry and Apicurio Registry (`/apis/ccompat/v7`) both serve.
//!
//! Lookups happen when a generator or decoder is set up, never per record, and their answers are kept in a
//! process-wide cache: N JMeter threads with the same schema cost one request, not N.
//! Errors name the registry's URL without any user or password.
//!
//! Authentication: basic (`schema.registry.username` / `.password`), or with `schema.registry.auth=oauthbearer`
//! a bearer token of the Kafka connection's OIDC client (client credentials), from the same token source as the
//! Kafka clients ([`crate::client::oauth::source`]): one fetch shared by every client and thread, a new one
//! fetched when the token is past half its life. mTLS: `schema.registry.ssl.certificate.location` and
//! `.key.location` (PEM; an encrypted key with `.key.password`), checked when the client is set up.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use base64::Engine as _;

use serde_json::{json, Value as Json};

use super::Format;
use crate::client::oauth::{Oidc, Source};
use crate::echo::clip;
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
    /// The client certificate (PEM, optionally followed by its chain), for mTLS.
    pub certificate: Option<String>,
    /// The client certificate's private key (PEM; PKCS#8, PKCS#1 or SEC1, optionally encrypted).
    pub key: Option<String>,
    /// The password of an encrypted key (never shown in errors or logs).
    pub key_password: Option<String>,
    /// A bearer token of this OIDC client instead of basic authentication (`schema.registry.auth=oauthbearer`).
    pub oauth: Option<Oidc>,
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
            .field("certificate", &self.certificate)
            .field("key", &self.key)
            .field("key_password", &self.key_password.as_ref().map(|_| "***"))
            .field("oauth", &self.oauth)
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
    /// With `schema.registry.auth=oauthbearer`: where the bearer tokens come from.
    tokens: Option<(Arc<Source>, Oidc)>,
    /// A client certificate is presented (mTLS).
    client_certificate: bool,
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
        let client_certificate = config.certificate.is_some() && config.key.is_some();
        let client_cert = match (config.certificate.as_deref(), config.key.as_deref()) {
            (Some(cert), Some(key)) => Some(client_cert(cert, key, config.key_password.as_deref())?),
            _ => None,
        };
        builder = builder.tls_config(
            ureq::tls::TlsConfig::builder()
                .provider(ureq::tls::TlsProvider::NativeTls)
                .root_certs(roots)
                .client_cert(client_cert)
                .build(),
        );
        let user = config.username.clone().filter(|u| !u.is_empty()).or(url_auth.as_ref().map(|(u, _)| u.clone()));
        if config.oauth.is_some() && user.is_some() {
            return Err(EngineError::config(format!(
                "schema.registry.url: '{shown}' has a user, and schema.registry.auth=oauthbearer sends a bearer token: \
                 take the user and password out of the URL"
            )));
        }
        let password = config.password.clone().or(url_auth.map(|(_, p)| p));
        let auth = user.map(|u| {
            let raw = format!("{u}:{}", password.unwrap_or_default());
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(raw))
        });
        let tokens = config.oauth.as_ref().map(|o| (crate::client::oauth::source(o), o.clone()));
        Ok(RegistryClient {
            agent: ureq::Agent::new_with_config(builder.build()),
            base,
            shown,
            auth,
            tokens,
            client_certificate,
        })
    }

    /// The Authorization header's value: basic, or a bearer token with life left (fetched when the shared one is
    /// old); None without authentication. A token that cannot be had fails the request with the provider's reason.
    fn authorization(&self) -> Result<Option<String>, EngineError> {
        let Some((source, oidc)) = &self.tokens else { return Ok(self.auth.clone()) };
        match source.token() {
            Ok(token) => Ok(Some(format!("Bearer {}", token.value))),
            Err(e) => Err(EngineError::named(
                e.code,
                format!(
                    "no token for the schema registry at {} (schema.registry.auth=oauthbearer, client {}): {}",
                    self.shown,
                    clip(oidc.client_id()),
                    e.message
                ),
            )),
        }
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
        let authorization = self.authorization()?;
        let result = match method {
            "GET" => {
                let mut req = self.agent.get(&url).header("Accept", "application/vnd.schemaregistry.v1+json");
                if let Some(a) = &authorization {
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
                if let Some(a) = &authorization {
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
                    match (self.base.starts_with("https://"), self.client_certificate) {
                        (false, _) => "",
                        (true, false) => {
                            " and schema.registry.ssl.ca.location (a registry that requires a client certificate \
                             ends the connection when none is sent: then set \
                             schema.registry.ssl.certificate.location and schema.registry.ssl.key.location)"
                        }
                        (true, true) => {
                            " and schema.registry.ssl.ca.location (a registry that refuses the client certificate \
                             closes the handshake: check that its trust store holds the CA of \
                             schema.registry.ssl.certificate.location)"
                        }
                    }
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
            let what = match (&self.tokens, status) {
                (None, _) => "check schema.registry.username and schema.registry.password".to_string(),
                (Some((_, oidc)), 401) => format!(
                    "the registry did not accept the bearer token of client {} from {}: check that the registry \
                     trusts that identity provider (its OIDC issuer) and the token's audience",
                    clip(oidc.client_id()),
                    oidc.shown_url()
                ),
                (Some((_, oidc)), _) => format!(
                    "the registry accepted the bearer token of client {} but does not let it do this: give the client \
                     a role that may (e.g. Apicurio's sr-developer)",
                    clip(oidc.client_id())
                ),
            };
            return Err(EngineError::new(
                Code::RegistryAuthFailed,
                format!("the schema registry at {} refused the request (HTTP {status}); {what}", self.shown),
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

/// The client certificate (and chain) and its key for mTLS, read and checked now: each error names the setting
/// and the file that is wrong, never the key password.
fn client_cert(cert_file: &str, key_file: &str, password: Option<&str>) -> Result<ureq::tls::ClientCert, EngineError> {
    use openssl::pkey::PKey;
    use openssl::x509::X509;
    const CERT: &str = "schema.registry.ssl.certificate.location";
    const KEY: &str = "schema.registry.ssl.key.location";
    let limit = files::Limit::fixed(files::MAX_CERTIFICATE);
    let pem = files::read(cert_file, CERT, limit).map_err(EngineError::config)?;
    let chain = X509::stack_from_pem(&pem).unwrap_or_default();
    let Some(leaf) = chain.first() else {
        return Err(EngineError::config(format!(
            "{CERT}: '{}' holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
            clip(cert_file)
        )));
    };
    let key_pem = files::read(key_file, KEY, limit).map_err(EngineError::config)?;
    let encrypted = key_pem.windows(9).any(|w| w == b"ENCRYPTED");
    let key = match password {
        Some(p) => PKey::private_key_from_pem_passphrase(&key_pem, p.as_bytes()),
        // an empty passphrase instead of OpenSSL's prompt on the terminal
        None => PKey::private_key_from_pem_passphrase(&key_pem, b""),
    };
    let key = key.map_err(|_| {
        EngineError::config(if encrypted {
            format!(
                "{KEY}: '{}' is an encrypted key and schema.registry.ssl.key.password its password (wrong or missing)",
                clip(key_file)
            )
        } else {
            format!("{KEY}: '{}' holds no PEM private key (-----BEGIN PRIVATE KEY-----)", clip(key_file))
        })
    })?;
    if !leaf.public_key().is_ok_and(|public| public.public_eq(&key)) {
        return Err(EngineError::config(format!(
            "{KEY}: the client key '{}' does not match the client certificate '{}' ({CERT}); use the key the \
             certificate was made for",
            clip(key_file),
            clip(cert_file)
        )));
    }
    // native-tls takes PKCS#8 only: an RSA (PKCS#1) or EC (SEC1) key, or a decrypted one, is handed over as PKCS#8
    let pkcs8 = key
        .private_key_to_pem_pkcs8()
        .map_err(|e| EngineError::config(format!("{KEY}: the key in '{}' cannot be used ({e})", clip(key_file))))?;
    let mut certs = Vec::with_capacity(chain.len());
    for c in &chain {
        let der = c.to_der().map_err(|e| {
            EngineError::config(format!("{CERT}: a certificate in '{}' cannot be used ({e})", clip(cert_file)))
        })?;
        certs.push(ureq::tls::Certificate::from_der(&der).to_owned());
    }
    let key = ureq::tls::PrivateKey::from_pem(&pkcs8)
        .map_err(|e| EngineError::config(format!("{KEY}: the key in '{}' cannot be used ({e})", clip(key_file))))?;
    Ok(ureq::tls::ClientCert::new_with_certs(&certs, key))
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
            certificate: None,
            key: None,
            key_password: None,
            oauth: None,
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

    /// A stand-in identity provider on a loopback port: every request gets this one answer; counts the requests.
    fn token_endpoint(status: &str, body: String) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/token", listener.local_addr().unwrap());
        let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = Arc::clone(&count);
        let answer = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(answer.as_bytes());
                let _ = stream.shutdown(std::net::Shutdown::Write);
                let _ = std::io::copy(&mut stream, &mut std::io::sink());
            }
        });
        (url, count)
    }

    /// The Kafka connection's OIDC settings with this token endpoint and secret, through the sampler's parse.
    fn oauth_config(registry: &str, token_url: &str, secret: &str, client_id: &str) -> RegistryConfig {
        let s: BTreeMap<&str, &str> = [
            ("schema.registry.url", registry),
            ("schema.registry.auth", "oauthbearer"),
            ("sasl.mechanism", "OAUTHBEARER"),
            ("sasl.oauthbearer.method", "oidc"),
            ("sasl.oauthbearer.token.endpoint.url", token_url),
            ("sasl.oauthbearer.client.id", client_id),
            ("sasl.oauthbearer.client.secret", secret),
        ]
        .into_iter()
        .collect();
        super::super::registry_config(&s).unwrap().unwrap()
    }

    /// A registry stand-in that answers `answers` requests, each with this status and body; returns their texts.
    fn registry(
        status: &'static str,
        body: &'static str,
        answers: usize,
    ) -> (String, std::thread::JoinHandle<Vec<String>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/apis/ccompat/v7", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let mut requests = Vec::new();
            for _ in 0..answers {
                let (mut s, _) = listener.accept().unwrap();
                let mut buf = [0u8; 8192];
                let n = s.read(&mut buf).unwrap();
                let _ = write!(
                    s,
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                requests.push(String::from_utf8_lossy(&buf[..n]).to_lowercase());
            }
            requests
        });
        (url, server)
    }

    use std::collections::BTreeMap;

    #[test]
    fn a_bearer_token_of_the_connections_oidc_client_reaches_the_registry_once_fetched() {
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"sub":"svc-registry"}"#);
        let token = format!("h.{payload}.sig");
        let (token_url, fetched) =
            token_endpoint("200 OK", format!(r#"{{"access_token":"{token}","expires_in":300}}"#));
        let (url, server) = registry("200 OK", r#"{"schema":"\"string\"","id":7}"#, 2);
        let c = oauth_config(&url, &token_url, "t0ken-s3cret", "registry-bearer");
        assert!(!format!("{c:?}").contains("t0ken-s3cret"), "{c:?}");
        let client = RegistryClient::new(&c).unwrap();
        assert_eq!(client.by_id(7).unwrap().id, 7);
        // another thread's client of the same settings: the same token source, no second fetch
        assert_eq!(RegistryClient::new(&c).unwrap().register("t-value", Format::Avro, "\"string\"").unwrap(), 7);
        let requests = server.join().unwrap();
        for r in &requests {
            assert!(r.contains(&format!("authorization: bearer {}", token.to_lowercase())), "{r}");
        }
        assert_eq!(fetched.load(std::sync::atomic::Ordering::SeqCst), 1, "one token for both requests");
    }

    #[test]
    fn a_refused_client_secret_fails_naming_the_registry_and_the_401_without_the_secret() {
        let (token_url, _) = token_endpoint(
            "401 Unauthorized",
            r#"{"error":"unauthorized_client","error_description":"Invalid client or Invalid client credentials"}"#
                .to_string(),
        );
        let c = oauth_config("http://127.0.0.1:9/apis/ccompat/v7", &token_url, "wr0ng-s3cret", "registry-wrong");
        let e = RegistryClient::new(&c).unwrap().by_id(1).unwrap_err();
        assert_eq!(e.code, "AUTHENTICATION");
        assert!(
            e.message.starts_with(
                "no token for the schema registry at http://127.0.0.1:9/apis/ccompat/v7 (schema.registry.auth=oauthbearer, client registry-wrong): the token endpoint"
            ),
            "{}",
            e.message
        );
        assert!(
            e.message.contains("(HTTP 401)") && e.message.contains("check sasl.oauthbearer.client.id"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("wr0ng-s3cret"), "{}", e.message);
    }

    #[test]
    fn a_token_the_registry_refuses_is_registry_auth_failed_naming_the_client() {
        let (token_url, _) = token_endpoint("200 OK", r#"{"access_token":"opaque","expires_in":300}"#.to_string());
        let (url, server) = registry("401 Unauthorized", "", 1);
        let c = oauth_config(&url, &token_url, "s3cret", "registry-refused");
        let e = RegistryClient::new(&c).unwrap().by_id(1).unwrap_err();
        server.join().unwrap();
        assert_eq!(e.code, Code::RegistryAuthFailed.as_str());
        assert!(
            e.message.contains("(HTTP 401); the registry did not accept the bearer token of client registry-refused"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("s3cret") && !e.message.contains("opaque"), "{}", e.message);
    }

    #[test]
    fn oauthbearer_needs_the_connections_oidc_client_and_no_basic_user() {
        let s: BTreeMap<&str, &str> =
            [("schema.registry.url", "http://r:8081"), ("schema.registry.auth", "oauthbearer")].into_iter().collect();
        let e = super::super::registry_config(&s).unwrap_err();
        assert!(
            e.message.starts_with(
                "schema.registry.auth=oauthbearer takes its token from the Kafka connection's OIDC client"
            ),
            "{}",
            e.message
        );
        let mut s2 = s.clone();
        s2.insert("schema.registry.username", "bob");
        assert!(super::super::registry_config(&s2).unwrap_err().message.contains("leave schema.registry.username"));
        let mut s3 = s.clone();
        s3.insert("schema.registry.auth", "kerberos");
        assert!(super::super::registry_config(&s3)
            .unwrap_err()
            .message
            .starts_with("schema.registry.auth: 'kerberos' is not valid"));
    }

    mod mtls {
        use super::*;
        use openssl::asn1::Asn1Time;
        use openssl::bn::BigNum;
        use openssl::ec::{EcGroup, EcKey};
        use openssl::hash::MessageDigest;
        use openssl::nid::Nid;
        use openssl::pkey::{PKey, Private};
        use openssl::ssl::{SslAcceptor, SslMethod, SslVerifyMode};
        use openssl::symm::Cipher;
        use openssl::x509::extension::{BasicConstraints, KeyUsage, SubjectAlternativeName};
        use openssl::x509::{X509Builder, X509NameBuilder, X509};

        fn key() -> PKey<Private> {
            PKey::from_ec_key(EcKey::generate(&EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap()).unwrap())
                .unwrap()
        }

        /// A certificate for `cn` signed by `issuer` (self-signed CA without one).
        fn cert(cn: &str, key: &PKey<Private>, issuer: Option<(&X509, &PKey<Private>)>) -> X509 {
            let mut name = X509NameBuilder::new().unwrap();
            name.append_entry_by_text("CN", cn).unwrap();
            let name = name.build();
            let mut b = X509Builder::new().unwrap();
            b.set_version(2).unwrap();
            b.set_serial_number(&BigNum::from_u32(fastrand::u32(1..u32::MAX >> 1)).unwrap().to_asn1_integer().unwrap())
                .unwrap();
            b.set_subject_name(&name).unwrap();
            b.set_issuer_name(issuer.map(|(c, _)| c.subject_name()).unwrap_or(&name)).unwrap();
            b.set_pubkey(key).unwrap();
            b.set_not_before(&Asn1Time::days_from_now(0).unwrap()).unwrap();
            b.set_not_after(&Asn1Time::days_from_now(2).unwrap()).unwrap();
            match issuer {
                None => {
                    b.append_extension(BasicConstraints::new().critical().ca().build().unwrap()).unwrap();
                    b.append_extension(KeyUsage::new().critical().key_cert_sign().build().unwrap()).unwrap();
                }
                Some((ca, _)) => {
                    let san = SubjectAlternativeName::new().ip("127.0.0.1").build(&b.x509v3_context(Some(ca), None));
                    b.append_extension(san.unwrap()).unwrap();
                }
            }
            b.sign(issuer.map(|(_, k)| k).unwrap_or(key), MessageDigest::sha256()).unwrap();
            b.build()
        }

        struct Pki {
            dir: std::path::PathBuf,
            ca: X509,
            ca_key: PKey<Private>,
        }

        impl Pki {
            fn new(name: &str) -> Pki {
                let dir = std::env::temp_dir().join(format!("registry-mtls-{name}-{}", std::process::id()));
                std::fs::create_dir_all(&dir).unwrap();
                let ca_key = key();
                let ca = cert("registry test CA", &ca_key, None);
                std::fs::write(dir.join("ca.pem"), ca.to_pem().unwrap()).unwrap();
                Pki { dir, ca, ca_key }
            }
            fn path(&self, f: &str) -> String {
                self.dir.join(f).to_string_lossy().into_owned()
            }
            /// A certificate and key of this CA written as NAME.pem and NAME.key (SEC1, or PKCS#8 encrypted).
            fn issue(&self, name: &str, password: Option<&str>) -> (X509, PKey<Private>) {
                let k = key();
                let c = cert(name, &k, Some((&self.ca, &self.ca_key)));
                std::fs::write(self.dir.join(format!("{name}.pem")), c.to_pem().unwrap()).unwrap();
                let key_pem = match password {
                    Some(p) => k.private_key_to_pem_pkcs8_passphrase(Cipher::aes_256_cbc(), p.as_bytes()).unwrap(),
                    None => k.private_key_to_pem_pkcs8().unwrap(),
                };
                std::fs::write(self.dir.join(format!("{name}.key")), key_pem).unwrap();
                (c, k)
            }
        }

        impl Drop for Pki {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.dir);
            }
        }

        /// An HTTPS registry stand-in that requires a client certificate of the CA; sends the client's CN per
        /// connection (None for a refused handshake).
        fn tls_registry(pki: &Pki, answers: usize) -> (String, std::sync::mpsc::Receiver<Option<String>>) {
            let (server, server_key) = pki.issue("server", None);
            let mut acceptor = SslAcceptor::mozilla_intermediate(SslMethod::tls()).unwrap();
            acceptor.set_private_key(&server_key).unwrap();
            acceptor.set_certificate(&server).unwrap();
            acceptor.cert_store_mut().add_cert(pki.ca.clone()).unwrap();
            acceptor.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
            let acceptor = acceptor.build();
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let url = format!("https://127.0.0.1:{}/apis/ccompat/v7", listener.local_addr().unwrap().port());
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                for stream in listener.incoming().take(answers).flatten() {
                    match acceptor.accept(stream) {
                        Ok(mut s) => {
                            let cn = s
                                .ssl()
                                .peer_certificate()
                                .and_then(|c| {
                                    c.subject_name()
                                        .entries_by_nid(Nid::COMMONNAME)
                                        .next()
                                        .map(|e| e.data().as_slice().to_vec())
                                })
                                .map(|d| String::from_utf8_lossy(&d).into_owned());
                            let mut buf = [0u8; 8192];
                            let _ = s.read(&mut buf);
                            let body = r#"{"schema":"\"string\"","id":3}"#;
                            let _ = write!(
                                s,
                                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                                body.len()
                            );
                            let _ = s.shutdown();
                            let _ = tx.send(cn);
                        }
                        Err(_) => {
                            let _ = tx.send(None);
                        }
                    }
                }
            });
            (url, rx)
        }

        fn mtls_config(pki: &Pki, url: &str, cert: &str, key: &str, password: Option<&str>) -> RegistryConfig {
            let mut c = config(url);
            c.ca_file = Some(pki.path("ca.pem"));
            c.certificate = Some(pki.path(cert));
            c.key = Some(pki.path(key));
            c.key_password = password.map(str::to_string);
            c
        }

        #[test]
        fn a_client_certificate_with_an_encrypted_key_is_presented_to_the_registry() {
            let pki = Pki::new("good");
            pki.issue("client", Some("k3y-pass"));
            let (url, seen) = tls_registry(&pki, 2);
            let c = mtls_config(&pki, &url, "client.pem", "client.key", Some("k3y-pass"));
            assert!(!format!("{c:?}").contains("k3y-pass"));
            assert_eq!(RegistryClient::new(&c).unwrap().by_id(3).unwrap().id, 3);
            assert_eq!(seen.recv().unwrap().as_deref(), Some("client"));
            // without a client certificate the registry refuses the handshake: the message says what to check
            let mut without = config(&url);
            without.ca_file = Some(pki.path("ca.pem"));
            let e = RegistryClient::new(&without).unwrap().by_id(4).unwrap_err();
            assert_eq!(seen.recv().unwrap(), None);
            assert_eq!(e.code, Code::RegistryUnreachable.as_str(), "{}", e.message);
        }

        #[test]
        fn each_wrong_file_is_named_at_setup_without_the_key_password() {
            let pki = Pki::new("bad");
            pki.issue("client", Some("k3y-pass"));
            pki.issue("other", None);
            let url = "https://127.0.0.1:9/x";
            let setup = |cert: &str, key: &str, password: Option<&str>| {
                let e = RegistryClient::new(&mtls_config(&pki, url, cert, key, password)).err().unwrap();
                assert_eq!(e.code, Code::ConfigError.as_str());
                assert!(!e.message.contains("k3y-pass") && !e.message.contains("wr0ng"), "{}", e.message);
                e.message
            };
            let m = setup("missing.pem", "client.key", Some("k3y-pass"));
            assert!(m.starts_with("schema.registry.ssl.certificate.location: cannot read '"), "{m}");
            assert!(m.contains("missing.pem"), "{m}");
            let m = setup("ca.pem", "missing.key", None);
            assert!(m.starts_with("schema.registry.ssl.key.location: cannot read '"), "{m}");
            let m = setup("client.key", "client.key", Some("k3y-pass"));
            assert!(m.starts_with("schema.registry.ssl.certificate.location: '"), "{m}");
            assert!(m.ends_with("client.key' holds no PEM certificate (-----BEGIN CERTIFICATE-----)"), "{m}");
            let m = setup("client.pem", "client.key", Some("wr0ng"));
            assert!(m.ends_with("client.key' is an encrypted key and schema.registry.ssl.key.password its password (wrong or missing)"), "{m}");
            let m = setup("client.pem", "client.key", None);
            assert!(m.contains("its password (wrong or missing)"), "{m}");
            let m = setup("client.pem", "client.pem", None);
            assert!(m.ends_with("client.pem' holds no PEM private key (-----BEGIN PRIVATE KEY-----)"), "{m}");
            let m = setup("client.pem", "other.key", None);
            assert!(m.starts_with("schema.registry.ssl.key.location: the client key '"), "{m}");
            assert!(m.contains("other.key' does not match the client certificate '"), "{m}");
        }
    }
}
