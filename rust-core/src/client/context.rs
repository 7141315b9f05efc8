//! The one client context every Kafka client of the engine uses (producer, consumer, lag monitor, admin, audit):
//! librdkafka's client-level errors are logged and the last one is kept, so that a failed request can say why
//! (a wrong SASL password instead of "transport failure"); log lines go to the [`crate::logsink`]; statistics
//! give the retry count (and a producer's time breakdown, [`crate::run::breakdown`]). Every callback body runs under [`guarded`]: a panic there becomes a logged error.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::ConsumerContext;
use rdkafka::error::KafkaError;
use rdkafka::statistics::Statistics;
use rdkafka::types::RDKafkaErrorCode;

use crate::error::{panic_text, EngineError};
use crate::run::breakdown::{Knobs, Recorder};

/// Runs a callback body that librdkafka calls from its own thread; a panic must not unwind into C (it would
/// abort the JVM), so it is caught and logged.
pub fn guarded<T>(callback: &str, body: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => Some(value),
        Err(payload) => {
            // Logging itself could be what panicked: a second panic here is caught too and then dropped.
            let text = panic_text(&*payload).to_string();
            let _ = catch_unwind(|| log::error!("internal error in the {callback} callback (please report): {text}"));
            None
        }
    }
}

/// The shared part of every client's context.
#[derive(Default)]
pub struct ClientCtx {
    /// librdkafka's latest client-level error (e.g. a SASL authentication failure).
    last_error: Mutex<Option<EngineError>>,
    /// Retries so far over all brokers, as of librdkafka's latest statistics (cumulative).
    retries: AtomicU64,
    /// librdkafka's latest error-level log line (e.g. "SASL authentication error: ... invalid credentials"): a
    /// consumer's error events carry only a code, the log line says why.
    last_log_error: Mutex<Option<String>>,
    /// A producer's: where the send->ack time goes, from the same statistics.
    breakdown: Option<Recorder>,
    /// When each kind of client-level error was last logged at ERROR: see [`REPEAT_QUIET`].
    logged: Mutex<HashMap<String, Instant>>,
    /// OAUTHBEARER with OIDC: the client's token source, which explains the failures of a token outage.
    oauth: OnceLock<Arc<super::oauth::Source>>,
    /// A TLS client's files, to explain its TLS failures.
    tls: OnceLock<super::tls::Files>,
}

/// A client-level error logged at ERROR is logged again only at DEBUG for this long: librdkafka raises
/// AllBrokersDown at every reconnect attempt, which made a shared producer on a dead broker log 120 ERROR lines
/// in 3 s, one cause.
const REPEAT_QUIET: Duration = Duration::from_secs(30);

impl ClientCtx {
    /// A producer's context: its statistics also feed the time breakdown.
    pub fn with_breakdown(knobs: Knobs) -> ClientCtx {
        ClientCtx { breakdown: Some(Recorder::new(knobs)), ..ClientCtx::default() }
    }

    /// The time breakdown recorded so far (producers only).
    pub fn breakdown(&self) -> Option<&Recorder> {
        self.breakdown.as_ref()
    }

    /// Tokens for this client come from `source` (set once, before the client exists).
    pub fn set_oauth(&self, source: Arc<super::oauth::Source>) {
        let _ = self.oauth.set(source);
    }

    /// The client's TLS files (set once, before the client exists).
    pub fn set_tls(&self, files: super::tls::Files) {
        let _ = self.tls.set(files);
    }

    /// `err` explained in TLS terms when it is a TLS failure of a TLS client ([`super::tls::Files::explain`]).
    pub fn explain_tls(&self, err: EngineError) -> EngineError {
        match self.tls.get() {
            Some(files) => files.explain(err),
            None => err,
        }
    }

    /// With OIDC: why a message sent at `sent` was not delivered while the token endpoint was down and the token
    /// had expired.
    pub fn oauth_outage(&self, sent: Instant) -> Option<EngineError> {
        self.oauth.get()?.outage(sent)
    }

    /// The client's latest error, the best explanation of a failed request.
    pub fn last_error(&self) -> Option<EngineError> {
        self.last_error.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Retries reported by librdkafka's statistics (only with `statistics.interval.ms`).
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// The error hook's body: log, and keep the cause.
    pub fn on_error(&self, error: KafkaError, reason: &str) {
        let kind = format!("{:?}", error.rdkafka_error_code());
        let now = Instant::now();
        let repeat = {
            let mut logged = self.logged.lock().unwrap_or_else(|p| p.into_inner());
            match logged.get(&kind) {
                Some(at) if now.duration_since(*at) < REPEAT_QUIET => true,
                _ => {
                    logged.insert(kind, now);
                    false
                }
            }
        };
        if repeat {
            log::debug!("librdkafka: {error}: {reason}");
        } else {
            log::error!("librdkafka: {error}: {reason}");
        }
        let mut last = self.last_error.lock().unwrap_or_else(|p| p.into_inner());
        // "All brokers are down" follows the error that took them down: keep that one.
        if error.rdkafka_error_code() == Some(RDKafkaErrorCode::AllBrokersDown) && last.is_some() {
            return;
        }
        let mut e = EngineError::from_kafka(&error);
        e.message = reason.to_string();
        // The broker says only invalid_token; what was wrong is in its own log.
        if reason.contains("invalid_token") {
            e.message.push_str(
                "; the broker refused the OAuth token: its audience, issuer, signature or expiry does not match what \
                 the broker expects (the broker's log says which)",
            );
        }
        // Kafka's broker words for SASL extensions it did not accept
        if reason.contains("extensions are invalid") {
            e.message.push_str("; the broker refused the SASL extensions: check sasl.oauthbearer.extensions");
        }
        *last = Some(e);
    }

    /// The log hook's body besides forwarding: keep the latest error-level line.
    pub fn on_log(&self, level: RDKafkaLogLevel, message: &str) {
        if matches!(
            level,
            RDKafkaLogLevel::Emerg | RDKafkaLogLevel::Alert | RDKafkaLogLevel::Critical | RDKafkaLogLevel::Error
        ) {
            *self.last_log_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(message.to_string());
        }
    }

    /// librdkafka's latest error-level log line.
    pub fn last_log_error(&self) -> Option<String> {
        self.last_log_error.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The statistics hook's body: the retry count, and a producer's time breakdown.
    pub fn on_stats(&self, statistics: Statistics) {
        let retries = statistics.brokers.values().map(|b| b.txretries).sum();
        self.retries.store(retries, Ordering::Relaxed);
        if let Some(b) = &self.breakdown {
            b.record(&statistics);
        }
    }
}

/// The same as rdkafka's default log forwarding, under [`guarded`].
pub fn forward_log(level: RDKafkaLogLevel, fac: &str, message: &str) {
    match level {
        RDKafkaLogLevel::Emerg | RDKafkaLogLevel::Alert | RDKafkaLogLevel::Critical | RDKafkaLogLevel::Error => {
            log::error!(target: "librdkafka", "librdkafka: {fac} {message}")
        }
        RDKafkaLogLevel::Warning => log::warn!(target: "librdkafka", "librdkafka: {fac} {message}"),
        RDKafkaLogLevel::Notice | RDKafkaLogLevel::Info => {
            log::info!(target: "librdkafka", "librdkafka: {fac} {message}")
        }
        RDKafkaLogLevel::Debug => log::debug!(target: "librdkafka", "librdkafka: {fac} {message}"),
    }
}

/// A client context that contains a [`ClientCtx`]: producer and consumer contexts add their own callbacks.
pub trait HasClientCtx {
    /// The shared part.
    fn client_ctx(&self) -> &ClientCtx;
}

impl HasClientCtx for ClientCtx {
    fn client_ctx(&self) -> &ClientCtx {
        self
    }
}

/// Implements rdkafka's `ClientContext` for a type with [`HasClientCtx`]: error, statistics and log hooks, guarded.
#[macro_export]
macro_rules! client_context {
    ($ty:ty) => {
        impl rdkafka::ClientContext for $ty {
            // No generate_oauth_token: the engine hands the tokens to librdkafka itself, with the SASL extensions
            // rdkafka's refresh would leave out (client/oauth.rs, Source::attach).

            fn log(&self, level: rdkafka::config::RDKafkaLogLevel, fac: &str, message: &str) {
                let ctx = $crate::client::context::HasClientCtx::client_ctx(self);
                $crate::client::context::guarded("log", || {
                    ctx.on_log(level, message);
                    $crate::client::context::forward_log(level, fac, message)
                });
            }

            fn error(&self, error: rdkafka::error::KafkaError, reason: &str) {
                let ctx = $crate::client::context::HasClientCtx::client_ctx(self);
                $crate::client::context::guarded("error", || ctx.on_error(error, reason));
            }

            fn stats(&self, statistics: rdkafka::Statistics) {
                let ctx = $crate::client::context::HasClientCtx::client_ctx(self);
                $crate::client::context::guarded("statistics", || ctx.on_stats(statistics));
            }
        }
    };
}

client_context!(ClientCtx);

/// Lag monitor and audit read with a plain consumer: no rebalance callbacks of their own.
impl ConsumerContext for ClientCtx {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_callback_body_is_caught() {
        assert_eq!(guarded("test", || -> u32 { panic!("boom {}", 1) }), None);
        assert_eq!(guarded("test", || 7), Some(7));
    }

    #[test]
    fn the_last_error_is_kept_and_all_brokers_down_does_not_hide_it() {
        let ctx = ClientCtx::default();
        ctx.on_error(KafkaError::ClientCreation("x".into()), "SASL authentication failed");
        ctx.on_error(KafkaError::Global(RDKafkaErrorCode::AllBrokersDown), "1/1 brokers are down");
        assert_eq!(ctx.last_error().unwrap().message, "SASL authentication failed");
    }
}
