//! Metadata fetches that carry the client's last error: when no broker answers, the message says why
//! (authentication, TLS, name resolution) instead of only "transport failure".

use std::time::{Duration, Instant};

use rdkafka::client::Client;
use rdkafka::metadata::Metadata;
use rdkafka::ClientContext;

use super::context::HasClientCtx;
use crate::error::EngineError;

/// All topics' metadata (asking for one topic alone could auto-create it). `advice` ends the error message.
pub fn all_topics<C: ClientContext + HasClientCtx>(
    client: &Client<C>,
    servers: &str,
    timeout: Duration,
    advice: &str,
) -> Result<Metadata, EngineError> {
    client.fetch_metadata(None, timeout).map_err(|e| {
        // The client's own latest error explains the failure best.
        let mut err = client.context().client_ctx().last_error().unwrap_or_else(|| EngineError::from_kafka(&e));
        err.message =
            format!("no broker at {servers} answered within {} ms ({}){advice}", timeout.as_millis(), err.message);
        err
    })
}

/// The partition ids of `topic`, sorted, waiting up to `wait` for a topic created a moment ago to reach the
/// metadata; None when it still does not exist.
pub fn topic_partitions<C: ClientContext + HasClientCtx>(
    client: &Client<C>,
    topic: &str,
    servers: &str,
    timeout: Duration,
    wait: Duration,
    advice: &str,
) -> Result<Option<Vec<i32>>, EngineError> {
    let until = Instant::now() + wait;
    loop {
        let metadata = all_topics(client, servers, timeout, advice)?;
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
