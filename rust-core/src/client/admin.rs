//! Administration used before and after load: create a topic, read its end offsets, read a broker setting.
//!
//! These run once per test (never per message), so blocking on librdkafka's admin futures with a
//! minimal executor is fine and spares the engine an async runtime.

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::types::RDKafkaErrorCode;

use super::config::{create, Created};
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
    let admin: Created<AdminClient<ClientCtx>> = create(connection, ClientCtx::default(), "admin client")?;
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
    // librdkafka asks for end offsets with the consumer's isolation level, and its default, read_committed, would
    // give the last-stable offsets.
    let mut props = connection.clone();
    props.insert("isolation.level".into(), "read_uncommitted".into());
    let consumer: Created<BaseConsumer<ClientCtx>> = create(&props, ClientCtx::default(), "consumer")?;
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

/// A broker setting as a broker of the cluster reports it (DescribeConfigs on the first broker the metadata
/// lists; the brokers of a cluster normally agree), `None` when the broker does not list it. Read only to make an
/// error message precise, so it is bounded by `timeout` and its own failures are returned, not retried.
pub fn broker_setting(
    connection: &BTreeMap<String, String>,
    name: &str,
    timeout: Duration,
) -> Result<Option<String>, EngineError> {
    let admin: Created<AdminClient<ClientCtx>> = create(connection, ClientCtx::default(), "admin client")?;
    let kafka = |e: rdkafka::error::KafkaError| EngineError::from_kafka(&e);
    let metadata = admin.inner().fetch_metadata(None, timeout).map_err(kafka)?;
    let Some(broker) = metadata.brokers().first().map(|b| b.id()) else { return Ok(None) };
    let opts = AdminOptions::new().request_timeout(Some(timeout));
    let results = futures_executor::block_on(admin.describe_configs([&ResourceSpecifier::Broker(broker)], &opts))
        .map_err(kafka)?;
    match results.into_iter().next() {
        Some(Ok(resource)) => Ok(resource.get(name).and_then(|entry| entry.value.clone())),
        Some(Err(code)) => Err(EngineError::named(
            crate::error::error_name(code),
            format!("describing broker {broker}'s configuration failed: {code}"),
        )),
        None => Ok(None),
    }
}
