//! The librdkafka producer behind the handles: its creation with the pre-flight check, and the producers shared by all threads with `producer.scope=test`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock, Mutex, Weak};
use std::time::Duration;

use rdkafka::producer::{Producer, PurgeConfig, ThreadedProducer};

use super::settings::{Preflight, ProducerSettings};
use super::slot::ProducerCtx;
use crate::client::context::HasClientCtx;
use crate::client::settings::{connection_properties, servers};
use crate::client::{admin, config, metadata};
use crate::error::EngineError;
use crate::report::Run;

/// A librdkafka producer. Every handle using it has already waited (bounded) for its own messages
/// and counted those that never got a verdict, so dropping it only purges what is left, without waiting.
pub(crate) struct KafkaProducer {
    pub(super) inner: ThreadedProducer<ProducerCtx>,
    run: Arc<Run>,
}

impl Drop for KafkaProducer {
    fn drop(&mut self) {
        self.run.add_retries(self.inner.context().client_ctx().retries());
        let left = self.inner.in_flight_count();
        if left > 0 {
            log::warn!("{left} message(s) still in flight when the producer closed were purged (counted as UNDELIVERED_AT_CLOSE)");
            self.inner.purge(PurgeConfig::default().queue().inflight());
        }
    }
}

/// Producers shared by all threads of a test (`producer.scope=test`), by run and configuration.
static SHARED: LazyLock<Mutex<HashMap<String, Weak<KafkaProducer>>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// The producer of a handle: its own, or the one shared by all handles of the run with the same configuration.
pub(crate) fn producer_for(settings: &ProducerSettings, run: &Arc<Run>) -> Result<Arc<KafkaProducer>, EngineError> {
    if settings.scope == super::settings::Scope::Thread {
        return create(settings, run);
    }
    // Held while creating, so that two threads opening at once do not create two producers.
    let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    let key = format!("{:p}\n{}", Arc::as_ptr(run), settings.sharing_key());
    if let Some(p) = shared.get(&key).and_then(Weak::upgrade) {
        return Ok(p);
    }
    let p = create(settings, run)?;
    shared.retain(|_, w| w.strong_count() > 0);
    shared.insert(key, Arc::downgrade(&p));
    Ok(p)
}

fn create(settings: &ProducerSettings, run: &Arc<Run>) -> Result<Arc<KafkaProducer>, EngineError> {
    let inner = config::create(&settings.client, ProducerCtx::default(), "producer")?;
    let producer = Arc::new(KafkaProducer { inner, run: Arc::clone(run) });
    if let Some((partitions, replication)) = settings.topic_create {
        let connection = connection_properties(&settings.client);
        if admin::create_topic(&connection, &settings.topic, partitions, replication, settings.timeout)? {
            log::info!(
                "created topic '{}' with {partitions} partitions, replication {replication} (-1 = broker default)",
                settings.topic
            );
        }
    }
    if settings.preflight != Preflight::Off {
        preflight(&producer, settings)?;
    }
    Ok(producer)
}

/// Once per producer, before load: the broker answers and the topic exists (a topic created a moment ago may
/// take a little while to reach every broker's metadata).
fn preflight(producer: &KafkaProducer, settings: &ProducerSettings) -> Result<(), EngineError> {
    let servers = servers(&settings.client);
    let advice = "; check bootstrap.servers, the security settings and that the broker is running";
    let propagation = settings.timeout.min(Duration::from_secs(5));
    let partitions = metadata::topic_partitions(
        producer.inner.client(),
        &settings.topic,
        servers,
        settings.timeout,
        propagation,
        advice,
    )?
    .ok_or_else(|| missing_topic(settings, servers))?;
    check_partitions(settings, servers, partitions.len() as u32)
}

fn missing_topic(settings: &ProducerSettings, servers: &str) -> EngineError {
    EngineError::new(
        "UNKNOWN_TOPIC_OR_PART",
        format!(
            "topic '{}' does not exist on {servers}; create it before the test (e.g. scripts/kafka topics --create --topic {} \
             --partitions 16) so it is not auto-created with the broker's defaults, or set preflight=off to allow that",
            settings.topic, settings.topic
        ),
    )
}

/// Fewer partitions than producing threads caps the broker's parallelism: warn or fail, as asked.
fn check_partitions(settings: &ProducerSettings, servers: &str, partitions: u32) -> Result<(), EngineError> {
    if settings.thread_count > partitions && settings.partition.is_none() {
        let text = format!(
            "topic '{}' has {partitions} partition(s) for {} producing threads: threads will contend for the same partitions \
             and the broker's parallelism is capped at {partitions}; add partitions (scripts/kafka topics --alter --topic {} \
             --partitions {}) or set topic.create=true with topic.partitions on a new topic",
            settings.topic, settings.thread_count, settings.topic, settings.thread_count
        );
        if settings.preflight == Preflight::Fail {
            return Err(EngineError::new("TOO_FEW_PARTITIONS", text));
        }
        warn_once(&format!("{servers}/{}", settings.topic), &text);
    }
    Ok(())
}

/// Logs a pre-flight warning once per test and topic, not once per JMeter thread.
fn warn_once(key: &str, text: &str) {
    static WARNED: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(|| Mutex::new(HashSet::new()));
    if WARNED.lock().unwrap_or_else(|p| p.into_inner()).insert(key.to_string()) {
        log::warn!("pre-flight: {text}");
    }
}
