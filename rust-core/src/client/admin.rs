//! Topic administration used before and after load: create a topic, read its end offsets.
//!
//! These run once per test (never per message), so blocking on librdkafka's admin futures with a
//! minimal executor is fine and spares the engine an async runtime.

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::types::RDKafkaErrorCode;

use super::config::create;
use super::context::ClientCtx;
use super::metadata::{self, Fetch};
use super::settings::servers;
use crate::error::{Code, EngineError};

/// `connection`: brokers and security settings (see [`super::settings::connection_properties`]), so that
/// administration works on secured clusters too.
///
/// Creates `topic` with the given partitions and replication factor; an existing topic is left as it is
/// and reported with `Ok(false)`.
pub fn create_topic(
    connection: &BTreeMap<String, String>,
    topic: &str,
    partitions: i32,
    replication: i32,
    timeout: Duration,
) -> Result<bool, EngineError> {
    let admin: AdminClient<ClientCtx> = create(connection, ClientCtx::default(), "admin client")?;
    // Creating many partitions can take the controller a few seconds on a busy machine: allow at least 30 s.
    let timeout = timeout.max(Duration::from_secs(30));
    let opts = AdminOptions::new().operation_timeout(Some(timeout)).request_timeout(Some(timeout));
    let new_topic = NewTopic::new(topic, partitions, TopicReplication::Fixed(replication));
    let results = futures_executor::block_on(admin.create_topics([&new_topic], &opts))
        .map_err(|e| EngineError::from_kafka(&e))?;
    match results.into_iter().next() {
        Some(Ok(_)) => Ok(true),
        Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists))) => Ok(false),
        Some(Err((_, code))) => Err(EngineError::named(
            crate::error::error_name(code),
            format!("topic '{topic}' could not be created with {partitions} partitions and replication {replication}: {code}"),
        )),
        None => Err(EngineError::new(Code::KafkaError, "the broker returned no result for the topic creation")),
    }
}

/// The end offset (high watermark) of every partition of `topic`, by partition number.
pub fn end_offsets(
    connection: &BTreeMap<String, String>,
    topic: &str,
    timeout: Duration,
) -> Result<Vec<i64>, EngineError> {
    let consumer: BaseConsumer<ClientCtx> = create(connection, ClientCtx::default(), "consumer")?;
    let partitions = metadata::topic_partitions(
        consumer.client(),
        topic,
        Duration::ZERO,
        Fetch { servers: servers(connection), timeout, advice: "" },
    )?
    .ok_or_else(|| EngineError::new(Code::UnknownTopicOrPart, format!("topic '{topic}' does not exist")))?;
    partitions
        .into_iter()
        .map(|p| {
            consumer.fetch_watermarks(topic, p, timeout).map(|(_, high)| high).map_err(|e| EngineError::from_kafka(&e))
        })
        .collect()
}
