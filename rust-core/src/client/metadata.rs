//! Metadata fetches that carry the client's last error: when no broker answers, the message says why
//! (authentication, TLS, name resolution) instead of only "transport failure".

use std::time::{Duration, Instant};

use rdkafka::client::Client;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::metadata::Metadata;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientContext;

use super::context::HasClientCtx;
use crate::error::{Code, EngineError};

/// How a metadata fetch may wait and what its error says when no broker answers: the bootstrap list it names and
/// the advice that ends the message (empty, or "; check ...").
#[derive(Clone, Copy)]
pub struct Fetch<'a> {
    /// The bootstrap list, named in the error.
    pub servers: &'a str,
    /// How long the fetch may wait.
    pub timeout: Duration,
    /// What ends the error message: empty, or "; check ...".
    pub advice: &'a str,
}

impl Fetch<'_> {
    fn no_broker(&self, ctx: &super::context::ClientCtx, cause: EngineError) -> EngineError {
        let mut cause = ctx.explain_tls(cause);
        cause.message = format!(
            "no broker at {} answered within {} ms ({}){}",
            self.servers,
            self.timeout.as_millis(),
            cause.message,
            self.advice
        );
        cause
    }
}

/// All topics' metadata (asking for one topic alone could auto-create it).
pub fn all_topics<C: ClientContext + HasClientCtx>(client: &Client<C>, fetch: Fetch) -> Result<Metadata, EngineError> {
    client.fetch_metadata(None, fetch.timeout).map_err(|e| {
        // The client's own latest error explains the failure best.
        let ctx = client.context().client_ctx();
        let err = ctx.last_error().unwrap_or_else(|| EngineError::from_kafka(&e));
        fetch.no_broker(ctx, err)
    })
}

/// Errors that say why no broker answered better than a transport failure does.
fn explains(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::Authentication
            | RDKafkaErrorCode::SaslAuthenticationFailed
            | RDKafkaErrorCode::SSL
            | RDKafkaErrorCode::Resolve
            | RDKafkaErrorCode::UnsupportedSASLMechanism
            | RDKafkaErrorCode::IllegalSASLState
            | RDKafkaErrorCode::ClusterAuthorizationFailed
    )
}

/// A client whose metadata can be fetched: any client as it is, or a consumer, whose queued errors explain a failed
/// fetch better than the fetch's own error.
pub trait MetadataClient {
    /// The client's context.
    type Context: ClientContext + HasClientCtx;

    /// The client that fetches.
    fn metadata_client(&self) -> &Client<Self::Context>;

    /// The error of a failed fetch, with what the client knows of its cause.
    fn explain(&self, _fetch: Fetch, err: EngineError) -> EngineError {
        err
    }
}

impl<C: ClientContext + HasClientCtx> MetadataClient for Client<C> {
    type Context = C;

    fn metadata_client(&self) -> &Client<C> {
        self
    }
}

/// A consumer's client-level errors (a failed SASL handshake, a TLS error) wait in its queue until it is polled, so
/// after a failed fetch the queue is served once and the error, now known, explains the failure instead of
/// "transport failure".
impl<C: ConsumerContext + HasClientCtx> MetadataClient for BaseConsumer<C> {
    type Context = C;

    fn metadata_client(&self) -> &Client<C> {
        self.client()
    }

    fn explain(&self, fetch: Fetch, err: EngineError) -> EngineError {
        let ctx = self.context().client_ctx();
        if ctx.last_error().is_some() {
            return err;
        }
        // Nothing is assigned yet, so a poll returns no record, only the queued error events (with their code; the
        // reason is in librdkafka's latest error log line).
        for _ in 0..10 {
            match self.poll(Duration::ZERO) {
                None => break,
                Some(Err(e)) if e.rdkafka_error_code().is_some_and(explains) => {
                    let mut cause = EngineError::from_kafka(&e);
                    if let Some(line) = ctx.last_log_error() {
                        cause.message = line;
                    }
                    return fetch.no_broker(ctx, cause);
                }
                Some(_) => {}
            }
        }
        if let Some(cause) = ctx.last_error() {
            return fetch.no_broker(ctx, cause);
        }
        // The error events may still sit in the main queue (served only at close): librdkafka's log line has the
        // cause already.
        if let Some(line) = ctx.last_log_error() {
            let code =
                if line.contains("SASL authentication") { Code::Authentication.into() } else { err.code.clone() };
            return fetch.no_broker(ctx, EngineError::named(code, line));
        }
        err
    }
}

/// The partition ids of `topic`, sorted, waiting up to `wait` for a topic created a moment ago to reach the
/// metadata; None when it still does not exist.
pub fn topic_partitions(
    client: &impl MetadataClient,
    topic: &str,
    wait: Duration,
    fetch: Fetch,
) -> Result<Option<Vec<i32>>, EngineError> {
    let until = Instant::now() + wait;
    loop {
        let metadata = all_topics(client.metadata_client(), fetch).map_err(|e| client.explain(fetch, e))?;
        if let Some(t) = metadata.topics().iter().find(|t| t.name() == topic) {
            let mut ids: Vec<i32> = t.partitions().iter().map(|p| p.id()).collect();
            ids.sort_unstable();
            return Ok(Some(ids));
        }
        if Instant::now() >= until {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
