//! Topic administration used before and after load: create a topic, read its end offsets.
//!
//! These run once per test (never per message), so blocking on librdkafka's admin futures with a
//! minimal executor is fine and spares the engine an async runtime.

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientConfig;

use crate::error::EngineError;

/// `connection`: brokers and security settings (see [`crate::config::connection_properties`]), so that
/// administration works on secured clusters too.
fn client_config(connection: &BTreeMap<String, String>) -> ClientConfig {
    let mut c = ClientConfig::new();
    for (k, v) in connection {
        c.set(k, v);
    }
    c
}

/// Creates `topic` with the given partitions and replication factor; an existing topic is left as it is
/// and reported with `Ok(false)`.
pub fn create_topic(
    connection: &BTreeMap<String, String>,
    topic: &str,
    partitions: i32,
    replication: i32,
    timeout: Duration,
) -> Result<bool, EngineError> {
    let admin: AdminClient<DefaultClientContext> =
        client_config(connection).create().map_err(|e| EngineError::from_kafka(&e))?;
    // Creating many partitions can take the controller a few seconds on a busy machine: allow at least 30 s.
    let timeout = timeout.max(Duration::from_secs(30));
    let opts = AdminOptions::new().operation_timeout(Some(timeout)).request_timeout(Some(timeout));
    let new_topic = NewTopic::new(topic, partitions, TopicReplication::Fixed(replication));
    let results = futures_executor::block_on(admin.create_topics([&new_topic], &opts))
        .map_err(|e| EngineError::from_kafka(&e))?;
    match results.into_iter().next() {
        Some(Ok(_)) => Ok(true),
        Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists))) => Ok(false),
        Some(Err((_, code))) => Err(EngineError::new(
            crate::error::error_name(code),
            format!("topic '{topic}' could not be created with {partitions} partitions and replication {replication}: {code}"),
        )),
        None => Err(EngineError::new("KAFKA_ERROR", "the broker returned no result for the topic creation")),
    }
}

/// The end offset (high watermark) of every partition of `topic`, by partition number.
pub fn end_offsets(
    connection: &BTreeMap<String, String>,
    topic: &str,
    timeout: Duration,
) -> Result<Vec<i64>, EngineError> {
    let consumer: BaseConsumer = client_config(connection).create().map_err(|e| EngineError::from_kafka(&e))?;
    let metadata = consumer.fetch_metadata(Some(topic), timeout).map_err(|e| EngineError::from_kafka(&e))?;
    let partitions = metadata
        .topics()
        .iter()
        .find(|t| t.name() == topic && t.error().is_none())
        .map(|t| t.partitions().len())
        .ok_or_else(|| EngineError::new("UNKNOWN_TOPIC_OR_PART", format!("topic '{topic}' does not exist")))?;
    (0..partitions as i32)
        .map(|p| {
            consumer.fetch_watermarks(topic, p, timeout).map(|(_, high)| high).map_err(|e| EngineError::from_kafka(&e))
        })
        .collect()
}
