//! The two ways a producer load test is run, as presets, and the contradictions we refuse.
//!
//! - `capacity`: how fast can the cluster take messages? acks=1, no retries: each message is
//!   acknowledged once by the leader and a failure shows as a failure, never as a hidden retry.
//! - `reliability`: what does it cost to lose nothing? acks=all, retries on, idempotence on,
//!   so retries cannot write duplicates.
//!
//! Explicit properties override a preset; a combination that librdkafka would reject or that
//! would silently weaken the guarantee asked for is refused here, with the reason.

use std::collections::BTreeMap;

use crate::error::EngineError;

/// `policy`: a preset of librdkafka settings for what the test measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// How fast the cluster takes messages: acks=1, no retries.
    Capacity,
    /// What losing nothing costs: acks=all, retries, idempotence.
    Reliability,
}

impl Policy {
    /// Reads `capacity` or `reliability`.
    pub fn parse(text: &str) -> Result<Policy, EngineError> {
        match text {
            "capacity" => Ok(Policy::Capacity),
            "reliability" => Ok(Policy::Reliability),
            other => Err(EngineError::config(format!(
                "policy: '{other}' is not valid; use capacity (acks=1, retries=0) or reliability (acks=all, retries, idempotence)"
            ))),
        }
    }

    /// The sampler's `timeout.ms` when none is set. capacity fails fast (3 s: a slow ack is a failure, and the
    /// JTL shows it); reliability must ride out a leader failover (about 9 s on a 3-node cluster, up to 37 s when
    /// two brokers go) without turning messages that do get written into failed samples: 30 s, like the Java
    /// client's request.timeout.ms.
    pub fn default_timeout_ms(self) -> u64 {
        match self {
            Policy::Capacity => 3_000,
            Policy::Reliability => 30_000,
        }
    }

    /// How a preset value is named when it takes part in a contradiction.
    pub fn origin(self) -> &'static str {
        match self {
            Policy::Capacity => "policy=capacity",
            Policy::Reliability => "policy=reliability",
        }
    }
}

/// The producer properties a preset sets.
pub fn preset(policy: Policy) -> &'static [(&'static str, &'static str)] {
    match policy {
        Policy::Capacity => &[("acks", "1"), ("retries", "0"), ("enable.idempotence", "false")],
        Policy::Reliability => &[
            ("acks", "all"),
            ("retries", "2147483647"),
            ("enable.idempotence", "true"),
            ("max.in.flight.requests.per.connection", "5"),
        ],
    }
}

/// Refuses settings that contradict each other; `origin` says whether a value came from a preset or the user.
pub fn check_conflicts(
    client: &BTreeMap<String, String>,
    origin: &BTreeMap<String, &'static str>,
) -> Result<(), EngineError> {
    let get = |k: &str| client.get(k).map(String::as_str);
    let from = |k: &str| origin.get(k).copied().unwrap_or("default");
    if get("enable.idempotence") != Some("true") {
        return Ok(());
    }
    let why = format!("enable.idempotence=true ({})", from("enable.idempotence"));
    if let Some(acks) = get("acks") {
        if acks != "all" && acks != "-1" {
            return Err(EngineError::config(format!(
                "acks: {acks} ({}) contradicts {why}: an idempotent producer needs acks=all. Use policy=capacity \
                 for acks=1, or set enable.idempotence=false",
                from("acks")
            )));
        }
    }
    if get("retries") == Some("0") {
        return Err(EngineError::config(format!(
            "retries: 0 ({}) contradicts {why}: idempotence exists to make retries safe. Remove retries=0 or set enable.idempotence=false",
            from("retries")
        )));
    }
    if let Some(n) = get("max.in.flight.requests.per.connection").and_then(|v| v.parse::<u32>().ok()) {
        if n > 5 {
            return Err(EngineError::config(format!(
                "max.in.flight.requests.per.connection: {n} ({}) contradicts {why}: idempotence allows at most 5",
                from("max.in.flight.requests.per.connection")
            )));
        }
    }
    Ok(())
}
