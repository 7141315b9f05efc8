//! Producer sampler parameters → validated producer settings.
//!
//! The JMeter side hands over every non-blank parameter as `(key, value)` pairs. This module
//! - separates the sampler's own keys (topic, payload, timeout, ...) from producer properties,
//! - applies the policy preset (see [`crate::policy`]) and lets explicit properties override it,
//! - translates the Java client's property names that users paste from their Java producers,
//! - validates every producer property against librdkafka itself, so an unknown or invalid key is
//!   refused before anything is sent, with the closest valid name suggested,
//! - never echoes a secret (passwords, JAAS config) in any message.

use std::collections::BTreeMap;
use std::time::Duration;

use super::payload::{KeySpec, ValueSpec};
use super::policy::{self, Policy};
use crate::client::config as librdkafka_conf;
use crate::client::limits;
use crate::client::settings::{self, flag, number, required, JAVA_SECURITY_KEYS};
use crate::error::EngineError;

/// Sampler keys that are not producer properties.
pub const SAMPLER_KEYS: &[&str] = &[
    "topic",
    "policy",
    "producer.scope",
    "producer.pool.size",
    "timeout.ms",
    "messages.per.sample",
    "value.mode",
    "record.size",
    "value.template",
    "payload.file",
    "payload.file.max.bytes",
    "key.mode",
    "key",
    "headers",
    "partition",
    "extra.properties",
    "thread.number",
    "preflight",
    "thread.count",
    "topic.create",
    "topic.partitions",
    "topic.replication",
    "stamp.time",
    "audit",
    "audit.timeout.ms",
    "target.rate",
    "transactional.id.prefix",
    "transaction.samples",
    "transaction.abort.percent",
];

/// Topics the broker keeps its own state in.
const INTERNAL_TOPICS: &[&str] =
    &["__consumer_offsets", "__transaction_state", "__share_group_state", "__cluster_metadata"];

/// `target.rate` bounds: one sample in under three hours per thread, a million a second per thread.
const MIN_TARGET_RATE: f64 = 0.0001;
const MAX_TARGET_RATE: f64 = 1_000_000.0;

/// Java producer names accepted and translated (see [`translate_java_name`]); the security ones are shared.
const JAVA_ONLY_KEYS: &[&str] =
    &["max.request.size", "buffer.memory", "partitioner.class", "max.block.ms", "key.serializer", "value.serializer"];

/// What the pre-flight check does when the topic has fewer partitions than producing threads.
/// A missing topic or an unreachable broker always stops the test, unless the check is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preflight {
    /// Too few partitions stop the test.
    Fail,
    /// Too few partitions are logged once.
    Warn,
    /// No check at all.
    Off,
}

/// Producers shared by the threads of a test (`producer.scope=test`) unless `producer.pool.size` says otherwise.
/// One librdkafka producer has one connection per broker, and a broker serves a connection's requests one at a
/// time: at a few threads sending one message each, their requests queue behind each other on that connection
/// (README, "The send path at scale"). A few producers spread them, and still bound threads and connections.
pub const DEFAULT_POOL_SIZE: u32 = 4;

/// Whether one producer serves a JMeter thread or all threads of the test with the same configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One producer per JMeter thread.
    Thread,
    /// Producers shared by all threads with the same configuration (`producer.pool.size` of them).
    Test,
}

/// Everything the engine needs to send, checked once before the first message.
#[derive(Debug, Clone)]
pub struct ProducerSettings {
    /// The topic to send to.
    pub topic: String,
    /// How long a sample waits for its acknowledgements (the sampler's `timeout.ms`).
    pub timeout: Duration,
    /// How long a send may wait for room in a full local queue (Java's `max.block.ms`), at most `timeout`.
    pub max_block: Duration,
    /// Messages sent (and waited for) per sample.
    pub messages_per_sample: u32,
    /// Whose producer this is.
    pub scope: Scope,
    /// With `producer.scope=test`: how many producers the threads share (each thread uses one, round-robin).
    pub pool_size: u32,
    /// How values are made.
    pub value: ValueSpec,
    /// How keys are made.
    pub key: KeySpec,
    /// Static headers of every message.
    pub headers: Vec<(String, String)>,
    /// A fixed partition, or None for the partitioner.
    pub partition: Option<i32>,
    /// The JMeter thread's number (placeholder `{thread}`).
    pub thread_number: u32,
    /// The preset the properties started from.
    pub policy: Policy,
    /// What to check before load (broker answers, topic exists, enough partitions for the threads).
    pub preflight: Preflight,
    /// Number of JMeter threads of the thread group, compared with the topic's partitions.
    pub thread_count: u32,
    /// `topic.create=true`: (partitions, replication factor) to create the topic with; -1 = broker default.
    pub topic_create: Option<(i32, i32)>,
    /// Stamp each message with its send time (header `kn.sent.us`) for end-to-end latency.
    pub stamp_time: bool,
    /// Add audit headers (`kn.run`, `kn.pid`, `kn.seq`) and read the topic back at the end of the test.
    pub audit: bool,
    /// How long the end-of-test read-back may take.
    pub audit_timeout: Duration,
    /// Samples per second per thread, each started at its intended time; None = as fast as acks allow.
    pub target_rate: Option<f64>,
    /// With `transactional.id.prefix`: the thread's producer is transactional.
    pub transaction: Option<super::transaction::TxnSettings>,
    /// librdkafka properties, translated and validated.
    pub client: BTreeMap<String, String>,
    /// Things the user should know but that do not stop the test (dropped serializers, ...).
    pub warnings: Vec<String>,
}

impl ProducerSettings {
    /// Identity of a producer shared by all threads with `producer.scope=test`: the client properties and the preparation.
    /// What the preparation checks (pre-flight mode, thread count, topic creation, timeout) is part of it:
    /// the one preparation of a shared producer, and a failure remembered for the threads still waiting, must not
    /// answer for a configuration that checks something else.
    pub fn sharing_key(&self) -> String {
        let preparation = format!(
            "preflight={:?} threads={} create={:?} timeout={:?}\n",
            self.preflight, self.thread_count, self.topic_create, self.timeout
        );
        self.client.iter().map(|(k, v)| format!("{k}={v}\n")).chain(std::iter::once(preparation)).collect()
    }
}

/// Parses the sampler's parameters into settings, or says precisely what is wrong and how to fix it.
pub fn parse(pairs: &[(String, String)]) -> Result<ProducerSettings, EngineError> {
    let own_keys: Vec<&str> = SAMPLER_KEYS.iter().chain(crate::schema::PRODUCER_KEYS).copied().collect();
    let settings::Split { sampler, explicit } = settings::split(pairs, &own_keys)?;
    let topic = required(&sampler, "topic", "set the topic to send to")?;
    limits::check_topic(&topic)?;
    if INTERNAL_TOPICS.contains(&topic.as_str()) {
        // The broker's own state: records of ours there can break consumer groups or transactions cluster-wide.
        return Err(EngineError::config(format!(
            "topic: '{topic}' is one of Kafka's internal topics, which only the broker writes; produce to a topic of \
             your own"
        )));
    }
    settings::require_bootstrap(&explicit)?;
    let policy = match sampler.get("policy") {
        Some(p) => Policy::parse(p)?,
        None => Policy::Capacity,
    };
    let timeout_ms: u64 = number(&sampler, "timeout.ms", policy.default_timeout_ms(), 1, 3_600_000)?;
    let messages_per_sample: u32 = number(&sampler, "messages.per.sample", 1, 1, 1_000_000)?;
    let scope = match sampler.get("producer.scope").copied() {
        Some("thread") => Scope::Thread,
        // One producer for the whole test by default: it scales to thousands of JMeter threads (a bounded number of
        // librdkafka threads and connections) and batches the waiting threads' messages (README, Performance).
        None | Some("test") => Scope::Test,
        Some(other) => {
            return Err(EngineError::config(format!(
                "producer.scope: '{other}' is not valid; use thread (one producer per JMeter thread) or test (producers shared by the test's threads, producer.pool.size)"
            )))
        }
    };
    let pool_size = number(&sampler, "producer.pool.size", DEFAULT_POOL_SIZE, 1, 64)?;
    let partition = match sampler.get("partition") {
        Some(_) => Some(number(&sampler, "partition", 0, 0, i32::MAX as i64)?),
        None => None,
    };
    let headers = match sampler.get("headers") {
        Some(h) => parse_headers(h)?,
        None => Vec::new(),
    };

    let mut warnings = Vec::new();
    let mut max_block = Duration::from_millis(timeout_ms);
    let mut client: BTreeMap<String, String> = BTreeMap::new();
    let mut origin: BTreeMap<String, &'static str> = BTreeMap::new();
    for (key, value) in policy::preset(policy) {
        client.insert(key.to_string(), value.to_string());
        origin.insert(key.to_string(), policy.origin());
    }
    for (key, value) in explicit {
        match translate_java_name(&key, &value)? {
            Translation::Properties(props) => {
                for (k, v) in props {
                    client.insert(k.clone(), v);
                    origin.insert(k, "explicit");
                }
            }
            Translation::MaxBlock(ms) => max_block = max_block.min(Duration::from_millis(ms)),
            Translation::Dropped(why) => warnings.push(why),
        }
    }
    if let Some(acks) = client.get("acks") {
        // librdkafka takes any number up to 1000 (that many in-sync replicas must confirm); a broker answers
        // INVALID_REQUIRED_ACKS to anything but -1, 0 and 1, so every sample would fail.
        if !matches!(acks.as_str(), "all" | "-1" | "0" | "1") {
            return Err(EngineError::config(format!(
                "acks: {} is not valid; use 0 (no acknowledgement), 1 (the leader) or all (-1, every in-sync replica)",
                settings::shown("acks", acks)
            )));
        }
    }
    engine_defaults(&mut client, timeout_ms)?;
    policy::check_conflicts(&client, &origin)?;
    let transaction = super::transaction::parse(&sampler, &client, &origin, policy, scope)?;
    librdkafka_conf::validate(&client, &suggestion_candidates())?;

    let preflight = match sampler.get("preflight").copied() {
        None | Some("warn") => Preflight::Warn,
        Some("fail") => Preflight::Fail,
        Some("off") => Preflight::Off,
        Some(other) => {
            return Err(EngineError::config(format!("preflight: '{other}' is not valid; use fail, warn or off")))
        }
    };
    let thread_count = number(&sampler, "thread.count", 0, 0, u32::MAX as i64)? as u32;
    let topic_create = match flag(&sampler, "topic.create")? {
        false => None,
        true => Some((
            number(&sampler, "topic.partitions", -1, -1, 1_000_000)?,
            number(&sampler, "topic.replication", -1, -1, 1000)?,
        )),
    };
    let stamp_time = flag(&sampler, "stamp.time")?;
    let audit = flag(&sampler, "audit")?;
    let audit_timeout = Duration::from_millis(number(&sampler, "audit.timeout.ms", 60_000, 1, 3_600_000)?);
    let target_rate = match sampler.get("target.rate") {
        None => None,
        Some(raw) => match raw.parse::<f64>() {
            // Far below the minimum, the interval between samples overflows a duration (the engine's panic guard said
            // "internal error").
            Ok(r) if (MIN_TARGET_RATE..=MAX_TARGET_RATE).contains(&r) => Some(r),
            Ok(0.0) => None,
            _ => {
                return Err(EngineError::config(format!(
                    "target.rate: '{}' is not valid; use samples per second per thread from {MIN_TARGET_RATE} to \
                     {MAX_TARGET_RATE} (e.g. 50 or 0.5), or 0 for no pacing",
                    crate::echo::clip(raw)
                )))
            }
        },
    };
    let thread_number = number(&sampler, "thread.number", 0, 0, u32::MAX as i64)? as u32;
    // schema.registry.auth=oauthbearer takes its token from the connection's OIDC client
    let schema = crate::schema::with_connection(&sampler, &client);
    let value = ValueSpec::parse(&schema)?;
    let key = KeySpec::parse(&schema)?;
    Ok(ProducerSettings {
        topic,
        timeout: Duration::from_millis(timeout_ms),
        max_block,
        messages_per_sample,
        scope,
        pool_size,
        value,
        key,
        headers,
        partition,
        thread_number,
        policy,
        preflight,
        thread_count,
        topic_create,
        stamp_time,
        audit,
        audit_timeout,
        target_rate,
        transaction,
        client,
        warnings,
    })
}

/// The `headers` setting (`k=v;k2=v2`), at a thread's start or evaluated for one sample. Header keys reach librdkafka
/// as C strings: a NUL would cut the key short (rdkafka would panic on it).
pub(crate) fn parse_headers(text: &str) -> Result<Vec<(String, String)>, EngineError> {
    let headers = settings::parse_property_list(text, "headers")?;
    if let Some((k, _)) = headers.iter().find(|(k, _)| k.contains('\0')) {
        return Err(EngineError::config(format!(
            "headers: the key '{}' contains a NUL character, which a Kafka header key cannot carry",
            crate::echo::clip(&k.replace('\0', "\\0"))
        )));
    }
    // The consumer takes kn.sent.us as the send time and the audit kn.run/kn.pid/kn.seq as a message's identity: a
    // user header of that name would fake end-to-end latency or the audit's count.
    if let Some((k, _)) = headers.iter().find(|(k, _)| k.starts_with(RESERVED_HEADER_PREFIX)) {
        return Err(EngineError::config(format!(
            "headers: '{}' is reserved: the engine's own headers start with '{RESERVED_HEADER_PREFIX}' (send time, \
             audit); rename the header (stamp.time=true sends {})",
            crate::echo::clip(k),
            crate::audit::SENT_US_HEADER
        )));
    }
    Ok(headers)
}

/// The prefix of the headers the engine writes and reads ([`crate::audit`]).
const RESERVED_HEADER_PREFIX: &str = "kn.";

/// Defaults chosen so that every message gets a definite outcome within the sample's wait.
fn engine_defaults(client: &mut BTreeMap<String, String>, timeout_ms: u64) -> Result<(), EngineError> {
    // librdkafka accepts both names for the same setting; keep one.
    if let Some(v) = client.remove("delivery.timeout.ms") {
        client.insert("message.timeout.ms".into(), v);
    }
    match client.get("message.timeout.ms") {
        None => {
            client.insert("message.timeout.ms".into(), timeout_ms.to_string());
        }
        Some(v) => {
            let delivery: u64 = v.parse().map_err(|_| {
                EngineError::config(format!("delivery.timeout.ms: '{v}' is not a number of milliseconds"))
            })?;
            if delivery > timeout_ms {
                return Err(EngineError::config(format!(
                    "delivery.timeout.ms: {delivery} is longer than timeout.ms ({timeout_ms}); a sample would give up on a message \
                     that may still be delivered later, and the JTL would not match the topic. Raise timeout.ms to at least \
                     {delivery} or lower delivery.timeout.ms"
                )));
            }
        }
    }
    // Java's default partitioner hashes keys with murmur2; librdkafka's default does not. Match Java so that
    // keyed messages land on the same partitions as with the Java client.
    client.entry("partitioner".into()).or_insert_with(|| "murmur2_random".into());
    client.entry("client.id".into()).or_insert_with(|| "jmeter-kafka-native".into());
    // Retries are read from librdkafka's statistics (the delivery callback only sees final outcomes).
    client.entry("statistics.interval.ms".into()).or_insert_with(|| "1000".into());
    Ok(())
}

enum Translation {
    Properties(Vec<(String, String)>),
    MaxBlock(u64),
    Dropped(String),
}

/// Accepts the Java producer's property names and maps them onto librdkafka's.
fn translate_java_name(key: &str, value: &str) -> Result<Translation, EngineError> {
    let prop = |k: &str, v: &str| Ok(Translation::Properties(vec![(k.to_string(), v.to_string())]));
    match key {
        "max.request.size" => prop("message.max.bytes", value),
        "buffer.memory" => {
            let bytes: u64 = value
                .parse()
                .map_err(|_| EngineError::config(format!("buffer.memory: '{value}' is not a number of bytes")))?;
            prop("queue.buffering.max.kbytes", &bytes.div_ceil(1024).max(1).to_string())
        }
        "max.block.ms" => value
            .parse()
            .map(Translation::MaxBlock)
            .map_err(|_| EngineError::config(format!("max.block.ms: '{value}' is not a number of milliseconds"))),
        "key.serializer" | "value.serializer" => Ok(Translation::Dropped(format!(
            "{key} ignored: the engine sends bytes (payloads are generated natively or taken as UTF-8 text)"
        ))),
        "partitioner.class" => {
            let simple = value.rsplit('.').next().unwrap_or(value);
            match simple {
                "DefaultPartitioner" | "BuiltInPartitioner" => prop("partitioner", "murmur2_random"),
                "UniformStickyPartitioner" | "RoundRobinPartitioner" => prop("partitioner", "random"),
                _ => Err(EngineError::config(format!(
                    "partitioner.class: '{value}' is a Java class and cannot run in the native engine; use the property \
                     partitioner with one of murmur2_random (Java's default), murmur2, consistent_random, consistent, random, fnv1a_random"
                ))),
            }
        }
        _ => match settings::translate_security(key, value) {
            Some(props) => props.map(Translation::Properties),
            None => prop(key, value),
        },
    }
}

/// Every name a user could have meant: librdkafka's properties, the Java names we translate, our own keys.
fn suggestion_candidates() -> Vec<String> {
    let mut names = librdkafka_conf::property_names();
    names.extend(SAMPLER_KEYS.iter().chain(crate::schema::PRODUCER_KEYS).map(|s| s.to_string()));
    names.extend(JAVA_ONLY_KEYS.iter().chain(JAVA_SECURITY_KEYS).map(|s| s.to_string()));
    names.extend(["delivery.timeout.ms".to_string()]);
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::settings::test_pairs;

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        test_pairs(&[("topic", "t"), ("bootstrap.servers", "b:9092")], items)
    }

    fn err(items: &[(&str, &str)]) -> String {
        parse(&pairs(items)).unwrap_err().message
    }

    #[test]
    fn capacity_is_the_default_policy() {
        let s = parse(&pairs(&[])).unwrap();
        assert_eq!(s.client["acks"], "1");
        assert_eq!(s.client["retries"], "0");
        assert_eq!(s.client["message.timeout.ms"], "3000");
        assert_eq!(s.client["partitioner"], "murmur2_random");
        assert_eq!(s.messages_per_sample, 1);
    }

    #[test]
    fn the_pool_size_defaults_to_a_few_producers_and_is_bounded() {
        assert_eq!(parse(&pairs(&[])).unwrap().pool_size, DEFAULT_POOL_SIZE);
        assert_eq!(parse(&pairs(&[("producer.pool.size", "1")])).unwrap().pool_size, 1);
        for bad in ["0", "many"] {
            let e = err(&[("producer.pool.size", bad)]);
            assert!(e.contains("producer.pool.size"), "{e}");
        }
    }

    #[test]
    fn reliability_preset_and_explicit_override() {
        let s = parse(&pairs(&[("policy", "reliability"), ("linger.ms", "7")])).unwrap();
        assert_eq!(s.client["acks"], "all");
        assert_eq!(s.client["enable.idempotence"], "true");
        assert_eq!(s.client["linger.ms"], "7");
        let s = parse(&pairs(&[("policy", "capacity"), ("retries", "3")])).unwrap();
        assert_eq!(s.client["retries"], "3");
    }

    #[test]
    fn java_names_are_translated() {
        let s = parse(&pairs(&[
            ("max.request.size", "2000000"),
            ("buffer.memory", "33554432"),
            ("partitioner.class", "org.apache.kafka.clients.producer.internals.DefaultPartitioner"),
            ("max.block.ms", "500"),
            ("delivery.timeout.ms", "2000"),
            ("extra.properties", "key.serializer=org.apache.kafka.common.serialization.StringSerializer"),
        ]))
        .unwrap();
        assert_eq!(s.client["message.max.bytes"], "2000000");
        assert_eq!(s.client["queue.buffering.max.kbytes"], "32768");
        assert_eq!(s.client["partitioner"], "murmur2_random");
        assert_eq!(s.client["message.timeout.ms"], "2000");
        assert_eq!(s.max_block, Duration::from_millis(500));
        assert!(s.warnings[0].contains("key.serializer ignored"), "{:?}", s.warnings);
    }

    #[test]
    fn unknown_key_names_it_and_suggests_the_closest() {
        let m = err(&[("extra.properties", "linger.mss=5")]);
        assert!(m.starts_with("linger.mss: unknown property"), "{m}");
        assert!(m.contains("did you mean linger.ms?"), "{m}");
    }

    #[test]
    fn invalid_value_names_the_key_and_the_value() {
        for (key, value) in [("acks", "banana"), ("timeout.ms", "soon"), ("compression.type", "rar")] {
            let m = err(&[(key, value)]);
            assert!(m.starts_with(&format!("{key}: '{value}' is not valid")), "{m}");
        }
    }

    #[test]
    fn contradictions_are_explained() {
        let m = err(&[("enable.idempotence", "true"), ("acks", "1")]);
        assert!(m.contains("idempotence") && m.contains("acks=all"), "{m}");
        let m = err(&[("policy", "reliability"), ("acks", "1")]);
        assert!(m.contains("policy=reliability"), "{m}");
        let m = err(&[("delivery.timeout.ms", "120000")]);
        assert!(m.contains("longer than timeout.ms"), "{m}");
    }

    #[test]
    fn secrets_never_appear_in_errors() {
        let m = err(&[("extra.properties", "sasl.password hunter2")]);
        assert!(!m.contains("hunter2"), "{m}");
        let m = err(&[("sasl.jaas.config", "ScramLoginModule required user=\"u\" pass=\"hunter2\";")]);
        assert!(!m.contains("hunter2") && m.contains("sasl.username"), "{m}");
    }

    #[test]
    fn jaas_lines_become_username_and_password() {
        let s = parse(&pairs(&[(
            "sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p\";",
        )]))
        .unwrap();
        assert_eq!(s.client["sasl.username"], "u");
        assert_eq!(s.client["sasl.password"], "p");
    }

    #[test]
    fn acks_outside_kafkas_values_are_refused() {
        let m = err(&[("acks", "7")]);
        assert!(m.starts_with("acks: '7' is not valid; use 0"), "{m}");
        assert!(parse(&pairs(&[("acks", "-1")])).is_ok());
    }

    #[test]
    fn a_property_set_twice_differently_is_refused() {
        let m = err(&[("extra.properties", "bootstrap.servers=other:9092")]);
        assert!(m.starts_with("bootstrap.servers: set twice"), "{m}");
        assert!(parse(&pairs(&[("extra.properties", "bootstrap.servers=b:9092")])).is_ok());
    }

    #[test]
    fn reliability_rides_out_a_failover_by_default() {
        let s = parse(&pairs(&[("policy", "reliability")])).unwrap();
        assert_eq!(s.timeout, Duration::from_secs(30));
        assert_eq!(s.client["message.timeout.ms"], "30000");
        assert_eq!(parse(&pairs(&[])).unwrap().timeout, Duration::from_secs(3));
    }

    #[test]
    fn topics_and_header_keys_are_checked() {
        assert!(err(&[("topic", "a b")]).starts_with("topic: 'a b' contains"));
        assert!(err(&[("headers", "k\0x=v")]).contains("NUL"));
        assert!(err(&[("topic", "__consumer_offsets")]).contains("internal topics"));
        let m = err(&[("headers", "a=1;kn.sent.us=1")]);
        assert!(m.starts_with("headers: 'kn.sent.us' is reserved"), "{m}");
        assert!(parse_headers("kn=1;xkn.seq=2").is_ok());
    }

    #[test]
    fn missing_topic_is_reported() {
        let m = parse(&[]).unwrap_err().message;
        assert!(m.starts_with("topic: missing"), "{m}");
        let m = parse(&[("topic".into(), "t".into())]).unwrap_err().message;
        assert!(m.starts_with("bootstrap.servers: missing"), "{m}");
    }
}
