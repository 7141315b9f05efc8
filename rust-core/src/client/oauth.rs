//! SASL/OAUTHBEARER with OIDC (KIP-768): the client-credentials grant against the identity provider's token
//! endpoint, made by the engine itself (ureq, already linked for the schema registry) instead of librdkafka's own
//! OIDC, which needs librdkafka built with libcurl. The settings keep librdkafka's and Java's names
//! (`sasl.oauthbearer.method=oidc`, `sasl.oauthbearer.token.endpoint.url`, `sasl.oauthbearer.client.id`,
//! `sasl.oauthbearer.client.secret`, `sasl.oauthbearer.scope`, `sasl.oauthbearer.extensions`); they are taken out
//! of the librdkafka configuration and the tokens handed to librdkafka by the engine: the first one right after a
//! client is created (so a wrong secret fails the setup within seconds), the later ones by the source's refresher
//! thread at 80 % of a token's life ([`Source::attach`]). The engine hands them over itself, not through rdkafka's
//! `generate_oauth_token`, because rdkafka 0.39 passes no SASL extensions to librdkafka, and clusters such as
//! Confluent Cloud's require them. One token serves every client with the same settings; the run's summary counts
//! the tokens fetched, the refreshes and the failed refreshes.

use std::collections::{BTreeMap, HashMap};
use std::ffi::CString;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use rdkafka::bindings as rd;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::producer::{BaseProducer, Producer, ProducerContext, ThreadedProducer};
use rdkafka::ClientContext;

use crate::echo::clip;
use crate::error::{Code, EngineError};

/// The settings the engine handles itself: never passed to librdkafka. The Java client's names of the client
/// credentials (Kafka 4.1) are accepted beside librdkafka's.
pub const KEYS: &[&str] = &[
    "sasl.oauthbearer.method",
    "sasl.oauthbearer.token.endpoint.url",
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.scope",
    "sasl.oauthbearer.extensions",
    "sasl.oauthbearer.client.credentials.client.id",
    "sasl.oauthbearer.client.credentials.client.secret",
];

/// A token answer is a JWT of a few KB and some fields: anything past this is not a token answer.
const MAX_ANSWER: u64 = 256 * 1024;
/// librdkafka's longest wait before it reconnects to a broker (reconnect.backoff.max.ms's default): a message sent
/// that long after the end of a token outage may still fail for it.
const RECONNECT: Duration = Duration::from_secs(10);
/// A token request that takes longer fails: a sample must say within seconds that the provider does not answer.
const TIMEOUT: Duration = Duration::from_secs(10);
/// After a failed refresh the next try comes this much later (librdkafka's own retry interval).
const RETRY: Duration = Duration::from_secs(10);
/// The least time between two refreshes, whatever lifetime the provider gives its tokens.
const MIN_REFRESH: Duration = Duration::from_secs(1);

/// Where and as whom tokens are fetched (the secret never leaves this struct but in the request).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Oidc {
    url: String,
    client_id: String,
    secret: String,
    scope: Option<String>,
    /// SASL extensions (RFC 7628 3.1), in the order given: sent to the broker with every token.
    extensions: Vec<(String, String)>,
}

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oidc")
            .field("url", &self.url)
            .field("client_id", &self.client_id)
            .field("secret", &"***")
            .field("scope", &self.scope)
            .field("extensions", &self.extensions.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>())
            .finish()
    }
}

impl Oidc {
    /// The client id (shown in messages; the secret never is).
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The token endpoint as shown in messages (without user information).
    pub fn shown_url(&self) -> String {
        shown_url(&self.url)
    }
}

/// Takes the OIDC settings out of a client's properties: the properties for librdkafka, and the OIDC settings when
/// `sasl.oauthbearer.method=oidc`. Contradictions and gaps are refused with what to set.
pub fn split(props: &BTreeMap<String, String>) -> Result<(BTreeMap<String, String>, Option<Oidc>), EngineError> {
    let get = |k: &str| props.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
    let rest: BTreeMap<String, String> =
        props.iter().filter(|(k, _)| !KEYS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    let mechanism = get("sasl.mechanism").or(get("sasl.mechanisms")).unwrap_or("");
    let method = get("sasl.oauthbearer.method").unwrap_or("default");
    let named: Vec<&str> = KEYS[1..].iter().copied().filter(|k| get(k).is_some()).collect();
    match method.to_ascii_lowercase().as_str() {
        "oidc" => {}
        // rdkafka hands librdkafka's refresh events to the engine, so librdkafka's own unsecured test tokens
        // (sasl.oauthbearer.config) never come: say what works instead of failing every sample at its timeout.
        "default" if named.is_empty() && mechanism.eq_ignore_ascii_case("OAUTHBEARER") => {
            return Err(EngineError::config(
                "sasl.mechanism=OAUTHBEARER takes its tokens from an identity provider here: set sasl.oauthbearer.method=oidc, sasl.oauthbearer.token.endpoint.url, sasl.oauthbearer.client.id and sasl.oauthbearer.client.secret (the Kafka Connection's OAuth fields)",
            ))
        }
        "default" if named.is_empty() => return Ok((rest, None)),
        "default" => {
            return Err(EngineError::config(format!(
                "{}: set, but sasl.oauthbearer.method is not oidc; add sasl.oauthbearer.method=oidc (and sasl.mechanism=OAUTHBEARER) to fetch tokens from the identity provider",
                named[0]
            )))
        }
        other => {
            return Err(EngineError::config(format!(
                "sasl.oauthbearer.method: '{}' is not valid; use oidc (tokens from the identity provider) or default",
                clip(other)
            )))
        }
    }
    if !mechanism.eq_ignore_ascii_case("OAUTHBEARER") {
        return Err(EngineError::config(format!(
            "sasl.oauthbearer.method=oidc needs sasl.mechanism=OAUTHBEARER (it is {}) and security.protocol SASL_SSL or SASL_PLAINTEXT",
            if mechanism.is_empty() { "not set".to_string() } else { format!("'{}'", clip(mechanism)) }
        )));
    }
    let url = get("sasl.oauthbearer.token.endpoint.url").ok_or_else(|| {
        EngineError::config(
            "sasl.oauthbearer.token.endpoint.url: missing; OAUTHBEARER with sasl.oauthbearer.method=oidc fetches its tokens there, e.g. https://idp.example.com/realms/kafka/protocol/openid-connect/token",
        )
    })?;
    if !url.starts_with("http://") && !url.starts_with("https://") {
        return Err(EngineError::config(format!(
            "sasl.oauthbearer.token.endpoint.url: '{}' is not an http:// or https:// URL",
            clip(&shown_url(url))
        )));
    }
    let client_id = get("sasl.oauthbearer.client.id").or(get("sasl.oauthbearer.client.credentials.client.id"));
    let client_id = client_id.ok_or_else(|| {
        EngineError::config("sasl.oauthbearer.client.id: missing; the client-credentials grant needs the client's id")
    })?;
    // The secret as typed: a trimmed secret authenticates as nobody.
    let secret = ["sasl.oauthbearer.client.secret", "sasl.oauthbearer.client.credentials.client.secret"]
        .iter()
        .find_map(|k| props.get(*k).filter(|v| !v.is_empty()))
        .ok_or_else(|| {
            EngineError::config(
                "sasl.oauthbearer.client.secret: missing; the client-credentials grant needs the client's secret",
            )
        })?;
    let oidc = Oidc {
        url: url.to_string(),
        client_id: client_id.to_string(),
        secret: secret.clone(),
        scope: get("sasl.oauthbearer.scope").map(str::to_string),
        extensions: get("sasl.oauthbearer.extensions").map(extensions).transpose()?.unwrap_or_default(),
    };
    Ok((rest, Some(oidc)))
}

/// `key=value,key=value` (librdkafka's form) as pairs, checked as RFC 7628 3.1 and librdkafka check them: a key of
/// letters only and not `auth`, a value of visible characters and spaces.
fn extensions(text: &str) -> Result<Vec<(String, String)>, EngineError> {
    let bad = |why: String| {
        EngineError::config(format!(
            "sasl.oauthbearer.extensions: {why}; give comma-separated key=value pairs, e.g. logicalCluster=lkc-abc12,identityPoolId=pool-Xyz9"
        ))
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let Some((key, value)) = item.split_once('=') else {
            return Err(bad(format!("'{}' has no '='", clip(item))));
        };
        let key = key.trim();
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(bad(format!("the key '{}' is not letters only (A-Z, a-z)", clip(key))));
        }
        if key == "auth" {
            return Err(bad("the key 'auth' is reserved for the token itself".to_string()));
        }
        if pairs.iter().any(|(k, _)| k == key) {
            return Err(bad(format!("the key '{key}' is given twice")));
        }
        if !value.bytes().all(|b| (0x20..=0x7e).contains(&b) || b == b'\t') {
            return Err(bad(format!("the value of '{key}' has a character other than visible ASCII and spaces")));
        }
        pairs.push((key.to_string(), value.to_string()));
    }
    Ok(pairs)
}

/// A URL as shown in messages: without user information.
fn shown_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@').filter(|(auth, _)| !auth.contains('/')) {
            Some((_, host)) => format!("{scheme}://***@{host}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// Tokens fetched, refreshes (a token fetched while an earlier one of the same settings existed) and refreshes
/// that failed, over every source in this JVM.
static TOKENS: AtomicU64 = AtomicU64::new(0);
static REFRESHES: AtomicU64 = AtomicU64::new(0);
static REFRESH_FAILURES: AtomicU64 = AtomicU64::new(0);

/// The run's token figures for the summary, None when no token was ever asked for.
pub fn summary() -> Option<serde_json::Value> {
    let (tokens, refreshes, failures) =
        (TOKENS.load(Ordering::Relaxed), REFRESHES.load(Ordering::Relaxed), REFRESH_FAILURES.load(Ordering::Relaxed));
    (tokens + failures > 0)
        .then(|| serde_json::json!({ "tokens_fetched": tokens, "refreshes": refreshes, "refresh_failures": failures }))
}

/// The report's line for the token figures.
pub fn summary_line() -> Option<String> {
    summary().map(|s| {
        format!(
            "oauth: {} tokens fetched, {} refreshes, {} refresh failures",
            s["tokens_fetched"], s["refreshes"], s["refresh_failures"]
        )
    })
}

/// A token as librdkafka takes it.
#[derive(Clone)]
pub struct Token {
    /// The JWT (never logged).
    pub value: String,
    /// The principal: the JWT's `sub`, else the client id.
    pub principal: String,
    /// Expiry, in ms since the epoch.
    pub expires_ms: i64,
    fetched: Instant,
    life: Duration,
}

impl Token {
    /// A token with more than half of its life left is handed out again; an older one is replaced, so that
    /// librdkafka's refresh at 80 % gets a new one and the clients of one source share it.
    fn fresh(&self) -> bool {
        self.fetched.elapsed() < self.life / 2
    }

    /// When the refresher replaces it: at 80 % of its life, as librdkafka would.
    fn due(&self) -> Instant {
        self.fetched + self.life.mul_f64(0.8)
    }
}

/// A client's place among its source's clients: dropped before the client, so that the refresher never hands a
/// token to a destroyed client ([`crate::client::config::Created`] holds both in that order).
pub struct Attachment {
    source: Arc<Source>,
    id: u64,
}

impl Drop for Attachment {
    fn drop(&mut self) {
        self.source.detach(self.id);
    }
}

/// Tells a client that its token could not be refreshed (librdkafka keeps the old token while it lives).
///
/// # Safety
/// `native` must be a live client.
unsafe fn failed(native: Native, e: &EngineError) {
    let message = CString::new(e.message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: the caller keeps the client alive; librdkafka copies the message.
    unsafe { rd::rd_kafka_oauthbearer_set_token_failure(native.0, message.as_ptr()) };
}

/// One identity provider client: the agent, and the latest token.
pub struct Source {
    oidc: Oidc,
    agent: ureq::Agent,
    latest: Mutex<Option<Token>>,
    /// A token was fetched once: every later fetch is a refresh.
    had_one: std::sync::atomic::AtomicBool,
    /// The latest token's expiry (ms since the epoch), apart from `latest`: a fetch holds that lock for up to
    /// [`TIMEOUT`], and a delivery report asking whether the token expired must not wait for it.
    expires_ms: AtomicI64,
    /// The latest run of failed refreshes; kept after it ended, for the messages sent during it.
    outage: Mutex<Option<Outage>>,
    /// The clients that take this source's tokens, and whether the refresher thread runs.
    clients: Mutex<Clients>,
    /// Wakes the refresher when a client is attached.
    attached: Condvar,
}

/// The clients a source's refresher hands tokens to.
#[derive(Default)]
struct Clients {
    next_id: u64,
    list: Vec<Attached>,
    refresher: bool,
}

/// One client: its `rd_kafka_t`, valid while it is in the list ([`Attachment`] removes it before the client is
/// destroyed), and when its token is due for a refresh.
struct Attached {
    id: u64,
    native: Native,
    due: Instant,
}

/// An `rd_kafka_t` pointer; librdkafka's token calls may be made from any thread.
#[derive(Clone, Copy)]
struct Native(*mut rd::rd_kafka_t);

// SAFETY: the pointer is only used under the source's `clients` lock while the client is alive (see `Attached`),
// and rd_kafka_oauthbearer_set_token(_failure) are thread-safe.
unsafe impl Send for Native {}

/// Refreshes that failed in a row.
struct Outage {
    failed: u64,
    /// The latest failure's error.
    cause: EngineError,
    /// When the token in use then expires (ms since the epoch).
    expires_ms: i64,
    /// When a new token ended it.
    over: Option<Instant>,
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// The source of these settings, shared by every client that uses them.
pub fn source(oidc: &Oidc) -> Arc<Source> {
    static SOURCES: LazyLock<Mutex<HashMap<Oidc, Arc<Source>>>> = LazyLock::new(|| Mutex::new(HashMap::new()));
    let mut sources = SOURCES.lock().unwrap_or_else(|p| p.into_inner());
    sources
        .entry(oidc.clone())
        .or_insert_with(|| {
            let config = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(TIMEOUT))
                .user_agent("jmeter-kafka-native")
                .tls_config(ureq::tls::TlsConfig::builder().provider(ureq::tls::TlsProvider::NativeTls).build())
                .build();
            Arc::new(Source {
                oidc: oidc.clone(),
                agent: ureq::Agent::new_with_config(config),
                latest: Mutex::new(None),
                had_one: Default::default(),
                expires_ms: AtomicI64::new(i64::MAX),
                outage: Mutex::new(None),
                clients: Mutex::default(),
                attached: Condvar::new(),
            })
        })
        .clone()
}

impl Source {
    /// Gives a new client its first token at once (a client that is never polled, a metadata request or an admin
    /// call, needs no event to get it) and adds it to the refresher's clients until the returned attachment drops.
    pub fn attach(self: &Arc<Self>, client: &impl NativeClient, token: &Token) -> Result<Attachment, EngineError> {
        let native = Native(client.native());
        // SAFETY: the client is alive (borrowed).
        unsafe { self.hand_over(native, token) }?;
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        let id = clients.next_id;
        clients.next_id += 1;
        clients.list.push(Attached { id, native, due: token.due() });
        if !clients.refresher {
            let source = Arc::clone(self);
            let started = std::thread::Builder::new().name("oauth-refresh".into()).spawn(move || source.refresh());
            match started {
                Ok(_) => clients.refresher = true,
                Err(e) => {
                    clients.list.retain(|c| c.id != id);
                    return Err(token_error(format!("the token refresher could not be started: {e}")));
                }
            }
        }
        self.attached.notify_all();
        Ok(Attachment { source: Arc::clone(self), id })
    }

    /// The refresher: one thread per source for the life of the process. It waits until the earliest client's
    /// token is at 80 % of its life, fetches (or reuses a fresh) token and hands it to every client; when the fetch
    /// fails it tells the clients (librdkafka raises an authentication error event, as for its own refreshes) and
    /// tries again after [`RETRY`].
    fn refresh(self: Arc<Self>) {
        let mut retry_at: Option<Instant> = None;
        loop {
            let clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
            let due = match (retry_at, clients.list.iter().map(|c| c.due).min()) {
                (_, None) => {
                    // no client: wait for one (its token is new)
                    drop(self.attached.wait(clients).unwrap_or_else(|p| p.into_inner()));
                    retry_at = None;
                    continue;
                }
                (Some(at), Some(_)) => at,
                (None, Some(due)) => due,
            };
            let now = Instant::now();
            if now < due {
                drop(self.attached.wait_timeout(clients, due - now).unwrap_or_else(|p| p.into_inner()));
                continue;
            }
            drop(clients);
            let fetched = super::context::guarded("oauth refresh", || self.token()).unwrap_or_else(|| {
                Err(token_error("internal error while refreshing the OAuth token (please report)".into()))
            });
            let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
            match fetched {
                Ok(token) => {
                    retry_at = None;
                    let due = token.due().max(Instant::now() + MIN_REFRESH);
                    for c in clients.list.iter_mut() {
                        // SAFETY: a listed client is alive (Attachment::drop takes the lock to remove it first).
                        if let Err(e) = unsafe { self.hand_over(c.native, &token) } {
                            log::warn!("oauth: {e}");
                            // SAFETY: as above.
                            unsafe { failed(c.native, &e) };
                        }
                        c.due = due;
                    }
                }
                Err(e) => {
                    retry_at = Some(Instant::now() + RETRY);
                    for c in clients.list.iter() {
                        // SAFETY: as above.
                        unsafe { failed(c.native, &e) };
                    }
                }
            }
        }
    }

    /// Hands `token` to librdkafka with the source's SASL extensions.
    ///
    /// # Safety
    /// `native` must be a live client.
    unsafe fn hand_over(&self, native: Native, token: &Token) -> Result<(), EngineError> {
        let nul = || token_error("the identity provider's token contains a NUL character".to_string());
        let value = CString::new(token.value.as_str()).map_err(|_| nul())?;
        let principal = CString::new(token.principal.as_str()).map_err(|_| nul())?;
        // checked in split(): no NUL in a key or value
        let strings: Vec<CString> = self
            .oidc
            .extensions
            .iter()
            .flat_map(|(k, v)| [k, v])
            .filter_map(|s| CString::new(s.as_str()).ok())
            .collect();
        let mut pointers: Vec<*const std::os::raw::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        let mut err = [0 as std::os::raw::c_char; 512];
        // SAFETY: the caller keeps the client alive; the strings outlive the call, which copies them.
        let code = unsafe {
            rd::rd_kafka_oauthbearer_set_token(
                native.0,
                value.as_ptr(),
                token.expires_ms,
                principal.as_ptr(),
                if pointers.is_empty() { std::ptr::null_mut() } else { pointers.as_mut_ptr() },
                pointers.len(),
                err.as_mut_ptr(),
                err.len(),
            )
        };
        if code == rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            return Ok(());
        }
        // SAFETY: librdkafka wrote a NUL-terminated message into err (or left it zeroed).
        let why = unsafe { std::ffi::CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
        Err(token_error(format!("librdkafka did not take the token: {}", clip(&why))))
    }

    fn detach(&self, id: u64) {
        self.clients.lock().unwrap_or_else(|p| p.into_inner()).list.retain(|c| c.id != id);
    }

    /// A token with life left, fetched when the latest is old. One fetch at a time: the threads of a test that
    /// start together make one request, not one each.
    pub fn token(&self) -> Result<Token, EngineError> {
        let mut latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = latest.as_ref().filter(|t| t.fresh()) {
            return Ok(t.clone());
        }
        let refresh = self.had_one.load(Ordering::Relaxed);
        match self.fetch() {
            Ok(token) => {
                TOKENS.fetch_add(1, Ordering::Relaxed);
                if refresh {
                    REFRESHES.fetch_add(1, Ordering::Relaxed);
                    log::info!(
                        "oauth: new token for client {} from {} (valid {} s)",
                        self.oidc.client_id,
                        shown_url(&self.oidc.url),
                        token.life.as_secs()
                    );
                }
                self.had_one.store(true, Ordering::Relaxed);
                self.expires_ms.store(token.expires_ms, Ordering::Relaxed);
                if let Some(o) =
                    self.outage.lock().unwrap_or_else(|p| p.into_inner()).as_mut().filter(|o| o.over.is_none())
                {
                    o.over = Some(Instant::now());
                    log::warn!(
                        "oauth: the token endpoint {} answers again: a new token after {} failed refreshes",
                        shown_url(&self.oidc.url),
                        o.failed
                    );
                }
                *latest = Some(token.clone());
                Ok(token)
            }
            Err(e) => {
                if refresh {
                    REFRESH_FAILURES.fetch_add(1, Ordering::Relaxed);
                    let mut outage = self.outage.lock().unwrap_or_else(|p| p.into_inner());
                    match outage.as_mut().filter(|o| o.over.is_none()) {
                        Some(o) => {
                            o.failed += 1;
                            o.cause = e.clone();
                        }
                        None => {
                            let expires_ms = self.expires_ms.load(Ordering::Relaxed);
                            *outage = Some(Outage { failed: 1, cause: e.clone(), expires_ms, over: None });
                        }
                    }
                }
                log::warn!("oauth: {e}");
                Err(e)
            }
        }
    }

    /// Why a message sent at `sent` could not be delivered while the token endpoint was down: the token in use
    /// had expired and the refreshes since failed. Also for a message sent shortly after a new token came: the
    /// client is still reconnecting to the broker then ([`RECONNECT`]). None while the token lives and otherwise.
    /// Such a message says so, with the endpoint and the cause, instead of librdkafka's bare timeout.
    pub fn outage(&self, sent: Instant) -> Option<EngineError> {
        let outage = self.outage.lock().unwrap_or_else(|p| p.into_inner());
        let o = outage.as_ref().filter(|o| o.over.is_none_or(|over| sent < over + RECONNECT))?;
        let expired_for = now_ms() - o.expires_ms;
        if expired_for < 0 {
            return None;
        }
        let what = match o.over {
            None => format!("the OAuth token expired {} s ago and {} refresh(es) since failed", expired_for / 1000, o.failed),
            Some(over) => format!(
                "the OAuth token expired and {} refresh(es) failed before a new token came {} s ago (the client reconnects to the broker with it)",
                o.failed,
                over.elapsed().as_secs()
            ),
        };
        Some(token_error(format!("{what}: {}", o.cause.message)))
    }

    /// One client-credentials request (RFC 6749 4.4): the client authenticates with HTTP Basic, as librdkafka's
    /// and Java's clients do.
    fn fetch(&self) -> Result<Token, EngineError> {
        let o = &self.oidc;
        let url = shown_url(&o.url);
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", o.client_id, o.secret));
        let mut form = vec![("grant_type", "client_credentials")];
        if let Some(scope) = &o.scope {
            form.push(("scope", scope.as_str()));
        }
        let mut response = self
            .agent
            .post(&o.url)
            .header("Authorization", &format!("Basic {basic}"))
            .header("Accept", "application/json")
            .send_form(form)
            .map_err(|e| {
                token_error(format!(
                    "cannot reach the token endpoint {url}: {}; check sasl.oauthbearer.token.endpoint.url",
                    transport(&e)
                ))
            })?;
        let status = response.status().as_u16();
        let kind = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let body = response.body_mut().with_config().limit(MAX_ANSWER).read_to_string().map_err(|e| {
            let why = match e {
                ureq::Error::BodyExceedsLimit(_) => format!("more than {} KB", MAX_ANSWER / 1024),
                e => format!("an answer that could not be read ({})", transport(&e)),
            };
            token_error(format!("the token endpoint {url} sent {why} (HTTP {status}); is it the token endpoint?"))
        })?;
        let hide = |text: &str| clip(&text.replace(&o.secret, "***"));
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&body) else {
            let what = if kind.is_empty() { "no content type".to_string() } else { kind.clone() };
            return Err(token_error(format!(
                "the token endpoint {url} answered HTTP {status} with {what}, not a JSON token answer; check sasl.oauthbearer.token.endpoint.url (a Keycloak realm's is .../realms/REALM/protocol/openid-connect/token)"
            )));
        };
        if let Some(error) = json.get("error").and_then(|v| v.as_str()) {
            let description = json.get("error_description").and_then(|v| v.as_str()).unwrap_or("");
            let hint = match error {
                "invalid_client" | "unauthorized_client" => {
                    "; check sasl.oauthbearer.client.id and sasl.oauthbearer.client.secret"
                }
                "invalid_scope" => "; check sasl.oauthbearer.scope",
                _ if matches!(status, 404 | 405) => {
                    "; check sasl.oauthbearer.token.endpoint.url (is it the token endpoint?)"
                }
                _ => "",
            };
            let description = if description.is_empty() { String::new() } else { format!(" ({})", hide(description)) };
            return Err(EngineError::new(
                if matches!(error, "invalid_client" | "unauthorized_client") {
                    Code::Authentication
                } else {
                    Code::TokenError
                },
                format!(
                    "the token endpoint {url} refused client {}: {}{description} (HTTP {status}){hint}",
                    clip(&o.client_id),
                    hide(error),
                ),
            ));
        }
        let Some(value) = json.get("access_token").and_then(|v| v.as_str()).filter(|v| !v.is_empty()) else {
            let keys: Vec<&str> = json.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
            return Err(token_error(format!(
                "the token endpoint {url} answered HTTP {status} without an access_token (its JSON has: {}); check sasl.oauthbearer.token.endpoint.url",
                if keys.is_empty() { "no fields".to_string() } else { clip(&keys.join(", ")) }
            )));
        };
        let claims = jwt_claims(value);
        let now = now_ms();
        // The JWT's exp first: the broker checks that one, and expires_in, counted from the answer's arrival, ends up
        // to a second later (exp is in whole seconds).
        let expires_ms = claims
            .as_ref()
            .and_then(|c| c.get("exp"))
            .and_then(|v| v.as_f64())
            .map(|s| (s * 1000.0) as i64)
            .or_else(|| json.get("expires_in").and_then(|v| v.as_f64()).map(|s| now + (s * 1000.0) as i64))
            .ok_or_else(|| {
                token_error(format!("the token endpoint {url} gave a token with neither expires_in nor an exp claim"))
            })?;
        if expires_ms <= now {
            return Err(token_error(format!("the token endpoint {url} gave a token that has already expired")));
        }
        let principal = claims
            .as_ref()
            .and_then(|c| c.get("sub"))
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .unwrap_or(&o.client_id)
            .to_string();
        Ok(Token {
            value: value.to_string(),
            principal,
            expires_ms,
            fetched: Instant::now(),
            life: Duration::from_millis((expires_ms - now) as u64),
        })
    }
}

fn token_error(message: String) -> EngineError {
    EngineError::new(Code::TokenError, message)
}

fn transport(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(_) => format!("no answer within {} s", TIMEOUT.as_secs()),
        ureq::Error::HostNotFound => "host not found".to_string(),
        ureq::Error::ConnectionFailed => "connection refused or failed".to_string(),
        ureq::Error::Io(io) => io.to_string(),
        other => other.to_string(),
    }
}

/// The claims of a JWT (its middle part), None when the token is not a JWT: then the answer's expires_in and the
/// client id stand in.
fn jwt_claims(token: &str) -> Option<serde_json::Value> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// A librdkafka client whose native handle the engine gives its tokens to.
pub trait NativeClient {
    /// The `rd_kafka_t` of the client.
    fn native(&self) -> *mut rd::rd_kafka_t;
}

impl<C: ProducerContext> NativeClient for BaseProducer<C> {
    fn native(&self) -> *mut rd::rd_kafka_t {
        self.client().native_ptr()
    }
}

impl<C: ProducerContext + 'static> NativeClient for ThreadedProducer<C> {
    fn native(&self) -> *mut rd::rd_kafka_t {
        self.client().native_ptr()
    }
}

impl<C: ConsumerContext> NativeClient for BaseConsumer<C> {
    fn native(&self) -> *mut rd::rd_kafka_t {
        self.client().native_ptr()
    }
}

impl<C: ClientContext> NativeClient for rdkafka::admin::AdminClient<C> {
    fn native(&self) -> *mut rd::rd_kafka_t {
        self.inner().native_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(items: &[(&str, &str)]) -> BTreeMap<String, String> {
        items.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    const GOOD: &[(&str, &str)] = &[
        ("bootstrap.servers", "b:1"),
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanism", "OAUTHBEARER"),
        ("sasl.oauthbearer.method", "oidc"),
        ("sasl.oauthbearer.token.endpoint.url", "http://127.0.0.1:1/token"),
        ("sasl.oauthbearer.client.id", "c"),
        ("sasl.oauthbearer.client.secret", " s3cret "),
    ];

    #[test]
    fn oidc_settings_leave_the_librdkafka_config() {
        let (rest, oidc) = split(&props(GOOD)).unwrap();
        assert!(rest.keys().all(|k| !KEYS.contains(&k.as_str())), "{:?}", rest.keys());
        assert_eq!(rest.get("sasl.mechanism").map(String::as_str), Some("OAUTHBEARER"));
        let oidc = oidc.unwrap();
        assert_eq!(oidc.secret, " s3cret ", "a secret is kept as typed");
        assert!(!format!("{oidc:?}").contains("s3cret"));
        let (rest, none) = split(&props(&[("bootstrap.servers", "b:1")])).unwrap();
        assert!(none.is_none() && rest.len() == 1);
    }

    #[test]
    fn gaps_and_contradictions_are_refused_with_what_to_set() {
        let without = |key: &str| {
            let p: Vec<_> = GOOD.iter().copied().filter(|(k, _)| *k != key).collect();
            split(&props(&p)).unwrap_err().message
        };
        assert!(
            without("sasl.oauthbearer.token.endpoint.url").starts_with("sasl.oauthbearer.token.endpoint.url: missing")
        );
        assert!(without("sasl.oauthbearer.client.secret").starts_with("sasl.oauthbearer.client.secret: missing"));
        assert!(without("sasl.mechanism").contains("needs sasl.mechanism=OAUTHBEARER"));
        assert!(without("sasl.oauthbearer.method").contains("add sasl.oauthbearer.method=oidc"));
        let bare = split(&props(&GOOD[..3])).unwrap_err().message;
        assert!(bare.starts_with("sasl.mechanism=OAUTHBEARER takes its tokens from an identity provider"), "{bare}");
        let mut p = props(GOOD);
        p.insert("sasl.oauthbearer.token.endpoint.url".into(), "ftp://idp/token".into());
        assert!(split(&p).unwrap_err().message.contains("is not an http:// or https:// URL"));
    }

    #[test]
    fn extensions_are_read_as_librdkafka_reads_them_and_checked() {
        let mut p = props(GOOD);
        p.insert("sasl.oauthbearer.extensions".into(), " logicalCluster=lkc-abc12 , identityPoolId=pool-Xyz9,".into());
        let oidc = split(&p).unwrap().1.unwrap();
        assert_eq!(
            oidc.extensions,
            vec![("logicalCluster".into(), "lkc-abc12".into()), ("identityPoolId".into(), "pool-Xyz9".into())]
        );
        assert!(!format!("{oidc:?}").contains("lkc-abc12"), "values are not shown");
        for (text, says) in [
            ("logicalCluster", "'logicalCluster' has no '='"),
            ("logical_cluster=x", "the key 'logical_cluster' is not letters only"),
            ("=x", "the key '' is not letters only"),
            ("auth=Bearer x", "the key 'auth' is reserved"),
            ("a=1,a=2", "the key 'a' is given twice"),
            ("a=b\u{1}c", "the value of 'a' has a character other than visible ASCII"),
            ("a=caf\u{e9}", "the value of 'a' has a character other than visible ASCII"),
        ] {
            p.insert("sasl.oauthbearer.extensions".into(), text.into());
            let e = split(&p).unwrap_err();
            assert_eq!(e.code, Code::ConfigError);
            assert!(e.message.starts_with("sasl.oauthbearer.extensions: "), "{}", e.message);
            assert!(e.message.contains(says), "{text}: {}", e.message);
        }
        // without OIDC the setting is refused like the other OIDC settings
        let mut p = props(&GOOD[..3]);
        p.insert("sasl.oauthbearer.extensions".into(), "a=b".into());
        assert!(split(&p).unwrap_err().message.starts_with("sasl.oauthbearer.extensions: set, but"));
    }

    #[test]
    fn urls_are_shown_without_credentials() {
        assert_eq!(shown_url("https://u:pw@idp/token"), "https://***@idp/token");
        assert_eq!(shown_url("https://idp/token?x=a@b"), "https://idp/token?x=a@b");
    }

    #[test]
    fn an_unreachable_endpoint_fails_in_time_with_its_address() {
        let (_, oidc) = split(&props(GOOD)).unwrap();
        let started = Instant::now();
        let Err(e) = source(&oidc.unwrap()).token() else { panic!("a token from a closed port") };
        assert_eq!(e.code, Code::TokenError);
        assert!(e.message.starts_with("cannot reach the token endpoint http://127.0.0.1:1/token:"), "{}", e.message);
        assert!(!e.message.contains("s3cret"));
        assert!(started.elapsed() < TIMEOUT + Duration::from_secs(1));
    }

    #[test]
    fn a_failed_refresh_explains_messages_once_the_token_expired() {
        let mut p = props(GOOD);
        p.insert("sasl.oauthbearer.client.id".into(), "outage".into());
        let source = source(&split(&p).unwrap().1.unwrap());
        // as after a first token that expires in 5 s, then a refresh while the endpoint is down
        source.had_one.store(true, Ordering::Relaxed);
        source.expires_ms.store(now_ms() + 5_000, Ordering::Relaxed);
        let failures = REFRESH_FAILURES.load(Ordering::Relaxed);
        assert!(source.token().is_err());
        assert!(REFRESH_FAILURES.load(Ordering::Relaxed) > failures);
        assert!(source.outage(Instant::now()).is_none(), "the token still lives");
        source.outage.lock().unwrap().as_mut().unwrap().expires_ms = now_ms() - 5_000;
        let e = source.outage(Instant::now()).unwrap();
        assert_eq!(e.code, Code::TokenError);
        assert!(
            e.message.starts_with("the OAuth token expired 5 s ago and 1 refresh(es) since failed: cannot reach the token endpoint http://127.0.0.1:1/token"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("s3cret"));
        // a new token ends the outage: messages sent after the reconnect window are no longer explained by it
        source.outage.lock().unwrap().as_mut().unwrap().over = Some(Instant::now());
        assert!(source.outage(Instant::now()).unwrap().message.contains("before a new token came 0 s ago"));
        assert!(source.outage(Instant::now() + RECONNECT).is_none());
    }

    /// A token endpoint on a loopback port that gives every request this one answer (a unit test of the answer's
    /// reading; the suite tests/oauth runs against Keycloak).
    fn endpoint(status: &str, kind: &str, body: String) -> Oidc {
        endpoint_counted(status, kind, body).0
    }

    /// [`endpoint`], and the count of requests it answered.
    fn endpoint_counted(status: &str, kind: &str, body: String) -> (Oidc, Arc<AtomicU64>) {
        use std::io::{Read, Write};
        let answered = Arc::new(AtomicU64::new(0));
        let count = Arc::clone(&answered);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/token", listener.local_addr().unwrap());
        let answer = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(answer.as_bytes());
                count.fetch_add(1, Ordering::Relaxed);
                // read what is left of the request before closing: unread bytes would reset the connection
                let _ = stream.shutdown(std::net::Shutdown::Write);
                let _ = std::io::copy(&mut stream, &mut std::io::sink());
            }
        });
        let mut p = props(GOOD);
        p.insert("sasl.oauthbearer.token.endpoint.url".into(), url);
        p.insert("sasl.oauthbearer.extensions".into(), "logicalCluster=lkc-test".into());
        (split(&p).unwrap().1.unwrap(), answered)
    }

    #[test]
    fn the_refresher_hands_new_tokens_to_its_clients_until_they_drop() {
        use crate::client::context::ClientCtx;
        // tokens of 2 s: the refresher replaces them every 1.6 s
        let (oidc, answered) =
            endpoint_counted("200 OK", "application/json", r#"{"access_token":"opaque","expires_in":2}"#.into());
        let mut p = props(GOOD);
        p.insert("bootstrap.servers".into(), "127.0.0.1:1".into());
        p.insert("sasl.oauthbearer.token.endpoint.url".into(), oidc.url.clone());
        p.insert("sasl.oauthbearer.extensions".into(), "logicalCluster=lkc-test".into());
        let client: crate::client::config::Created<BaseConsumer<ClientCtx>> =
            crate::client::config::create(&p, ClientCtx::default(), "consumer").unwrap();
        let source = source(&oidc);
        assert_eq!(source.clients.lock().unwrap().list.len(), 1);
        std::thread::sleep(Duration::from_millis(3_800));
        let fetched = answered.load(Ordering::Relaxed);
        assert!(fetched >= 3, "the first token and two refreshes, not {fetched}");
        drop(client);
        assert!(source.clients.lock().unwrap().list.is_empty(), "a dropped client is let go");
        std::thread::sleep(Duration::from_millis(2_500));
        assert_eq!(answered.load(Ordering::Relaxed), fetched, "no refresh without a client");
    }

    fn fetch_error(status: &str, kind: &str, body: &str) -> EngineError {
        let oidc = endpoint(status, kind, body.to_string());
        let Err(e) = source(&oidc).token() else { panic!("a token from {body}") };
        assert!(!e.message.contains("s3cret"), "{}", e.message);
        e
    }

    #[test]
    fn answers_that_are_no_token_say_what_they_were() {
        let e = fetch_error("200 OK", "text/html", "<html>login</html>");
        assert_eq!(e.code, Code::TokenError);
        assert!(e.message.contains("answered HTTP 200 with text/html, not a JSON token answer"), "{}", e.message);
        let e = fetch_error("200 OK", "application/json", r#"{"token_type":"Bearer","expires_in":60}"#);
        assert!(e.message.contains("without an access_token (its JSON has: expires_in, token_type)"), "{}", e.message);
        let e = fetch_error(
            "401 Unauthorized",
            "application/json",
            r#"{"error":"invalid_client","error_description":"bad secret  s3cret "}"#,
        );
        assert_eq!(e.code, Code::Authentication);
        assert!(e.message.contains("refused client c: invalid_client (bad secret ***) (HTTP 401)"), "{}", e.message);
        let e = fetch_error("200 OK", "application/json", &format!(r#"{{"access_token":"{}"}}"#, "x".repeat(300_000)));
        assert!(e.message.contains("more than 256 KB"), "{}", e.message);
    }

    #[test]
    fn a_token_answer_gives_expiry_and_principal() {
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"sub":"svc-1"}"#);
        let body = format!(r#"{{"access_token":"h.{payload}.s","expires_in":60}}"#);
        let source = source(&endpoint("200 OK", "application/json", body));
        let t = source.token().unwrap();
        assert_eq!(t.principal, "svc-1");
        let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
        assert!((t.expires_ms - now_ms - 60_000).abs() < 2_000, "{}", t.expires_ms - now_ms);
        // a fresh token is handed out again, not fetched again
        let before = TOKENS.load(Ordering::Relaxed);
        assert_eq!(source.token().unwrap().value, t.value);
        assert_eq!(TOKENS.load(Ordering::Relaxed), before);
    }

    #[test]
    fn jwt_claims_are_read_from_the_payload() {
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"sub":"me","exp":1}"#);
        let claims = jwt_claims(&format!("h.{payload}.s")).unwrap();
        assert_eq!(claims["sub"], "me");
        assert!(jwt_claims("opaque-token").is_none());
    }
}
