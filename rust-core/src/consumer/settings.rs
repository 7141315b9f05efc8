//! Consumer parameters → validated consumer settings, checked once before the first poll.
//!
//! Same rules as the producer's ([`crate::client::settings`]): the sampler's own keys are separated from client properties,
//! the Java consumer's property names that users paste are translated, every client property is validated by
//! librdkafka itself (an unknown name gets the closest valid one suggested), and secrets never appear in a message.

use std::collections::BTreeMap;
use std::time::Duration;

use fancy_regex::Regex;

use crate::client::config as librdkafka_conf;
use crate::client::settings::{self, flag, number, parse_number, required, JAVA_SECURITY_KEYS};
use crate::error::EngineError;
use crate::schema::{DecoderSettings, Role};

/// Sampler keys of the consumer that are not librdkafka properties.
pub const CONSUMER_KEYS: &[&str] = &[
    "topic",
    "assignment",
    "commit",
    "max.records",
    "poll.timeout.ms",
    "timeout.ms",
    "fail.on.empty",
    "stop.on.empty",
    "check.sequence",
    "check.regex",
    "extra.properties",
    "thread.number",
    "thread.count",
];

/// Java consumer names that are translated, dropped or explained (see [`translate_java_name`]); the security
/// ones are shared with every client.
const JAVA_ONLY_KEYS: &[&str] =
    &["max.poll.records", "fetch.max.wait.ms", "key.deserializer", "value.deserializer", "enable.auto.commit"];

/// Which partitions a consumer reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assignment {
    /// Join the consumer group (`subscribe`): the group coordinator spreads partitions, with rebalances.
    Subscribe,
    /// Static assignment, no group membership and so no rebalance: these partitions (None = all of the topic's),
    /// split across the thread group's threads by thread number.
    Static(Option<Vec<i32>>),
}

/// When consumed offsets are committed to the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// librdkafka commits in the background every `auto.commit.interval.ms` (5 s) and at close.
    Auto,
    /// Synchronously after every sample that returned records (its time is part of the sample).
    Sync,
    /// Never: the group's committed offsets stay as they are.
    None,
}

/// A consumer sampler's settings, parsed and checked once per thread.
#[derive(Debug, Clone)]
pub struct ConsumerSettings {
    /// The topic read.
    pub topic: String,
    /// The consumer group (`group.id`).
    pub group: String,
    /// At most this many records per sample (Java's `max.poll.records`).
    pub max_records: u32,
    /// How long a sample waits for its first record.
    pub poll_timeout: Duration,
    /// Bound on metadata, commit and close operations, and on waiting for the topic to appear.
    pub timeout: Duration,
    /// `assignment`: subscribe to the group, or static partitions.
    pub assignment: Assignment,
    /// `commit`: when offsets are committed.
    pub commit: Commit,
    /// A sample without records fails (code EMPTY) instead of being a successful empty sample.
    pub fail_on_empty: bool,
    /// Stop the JMeter thread at its first empty (and otherwise successful) sample: its partitions are drained.
    pub stop_on_empty: bool,
    /// The audit headers' sequence (`kn.seq`) must increase per producer (`kn.pid`) and partition.
    pub check_sequence: bool,
    /// `check.regex`: every record's value (as UTF-8) must contain a match (Java-style syntax, by fancy-regex).
    pub check_regex: Option<Regex>,
    /// `value.decode` / `key.decode`: records decoded against their schema (registry id or file), with an
    /// optional field assertion.
    pub value_decode: Option<DecoderSettings>,
    /// `key.decode`: the same for keys.
    pub key_decode: Option<DecoderSettings>,
    /// 1-based number of this JMeter thread and the number of threads of its group (0 = unknown).
    pub thread_number: u32,
    /// How many threads the thread group has (0 = unknown).
    pub thread_count: u32,
    /// librdkafka properties, translated and validated.
    pub client: BTreeMap<String, String>,
    /// Notes for the log: settings that were translated or are ignored.
    pub warnings: Vec<String>,
}

/// Parses the consumer sampler's parameters, or says precisely what is wrong and how to fix it.
pub fn parse_consumer(pairs: &[(String, String)]) -> Result<ConsumerSettings, EngineError> {
    let own_keys: Vec<&str> = CONSUMER_KEYS.iter().chain(crate::schema::CONSUMER_KEYS).copied().collect();
    let settings::Split { sampler, explicit } = settings::split(pairs, &own_keys)?;
    settings::require_bootstrap(&explicit)?;
    let topic = required(&sampler, "topic", "set the topic to consume")?;
    crate::client::limits::check_topic(&topic)?;
    let mut warnings = Vec::new();
    let mut client = translate_all(explicit, &mut warnings)?;
    // Java's max.poll.records is our max.records (the explicit key wins).
    let max_poll_records = client.remove("max.poll.records");
    let max_records_raw = sampler.get("max.records").copied().or(max_poll_records.as_deref());
    let max_records = match max_records_raw {
        None => 500,
        Some(raw) => parse_number(raw, "max.records", 1, 1_000_000)?,
    };
    let poll_timeout = Duration::from_millis(number(&sampler, "poll.timeout.ms", 1000u64, 0, 3_600_000)?);
    let timeout = Duration::from_millis(number(&sampler, "timeout.ms", 5000u64, 1, 3_600_000)?);
    let assignment = match sampler.get("assignment").copied() {
        None | Some("all") => Assignment::Static(None),
        Some("subscribe") => Assignment::Subscribe,
        Some(list) => Assignment::Static(Some(parse_partitions(list)?)),
    };
    let commit = match sampler.get("commit").copied() {
        None | Some("auto") => Commit::Auto,
        Some("sync") => Commit::Sync,
        Some("none") => Commit::None,
        Some(other) => {
            return Err(EngineError::config(format!(
                "commit: '{other}' is not valid; use auto (librdkafka commits every auto.commit.interval.ms), \
                 sync (after every sample) or none"
            )))
        }
    };
    let group = match client.get("group.id") {
        Some(g) => g.clone(),
        None => {
            return Err(EngineError::config(
                "group.id: missing; set the consumer group whose offsets the test reads and commits \
                 (e.g. jmeter-consumers)",
            ))
        }
    };
    let check_regex = sampler.get("check.regex").map(|r| check_regex(r)).transpose()?;
    check_protocol(&client)?;
    consumer_defaults(&mut client, commit);
    librdkafka_conf::validate(&client, &candidates(&own_keys))?;
    // schema.registry.auth=oauthbearer takes its token from the connection's OIDC client
    let schema = crate::schema::with_connection(&sampler, &client);
    let value_decode = DecoderSettings::parse(&schema, Role::Value)?;
    let key_decode = DecoderSettings::parse(&schema, Role::Key)?;
    if let Some(ms) = client.get("session.timeout.ms").and_then(|v| v.parse::<u64>().ok()) {
        // The broker refuses the group join with only "Broker: Invalid session timeout".
        if assignment == Assignment::Subscribe && !(6_000..=1_800_000).contains(&ms) {
            settings::warn_once(
                "session.timeout.ms range",
                &format!(
                    "session.timeout.ms={ms} is outside the broker's default range, 6000 to 1800000 ms \
                     (group.min.session.timeout.ms, group.max.session.timeout.ms): unless the broker allows it, the \
                     group join fails with INVALID_SESSION_TIMEOUT; use a value in that range"
                ),
            );
        }
    }
    for (role, decode) in [("value", &value_decode), ("key", &key_decode)] {
        if decode.is_none() && sampler.contains_key(format!("{role}.assert").as_str()) {
            settings::warn_once(
                &format!("{role}.assert without decode"),
                &format!("{role}.assert is ignored: it checks decoded records; set {role}.decode (avro, json-schema or protobuf)"),
            );
        }
    }
    Ok(ConsumerSettings {
        topic,
        group,
        max_records,
        poll_timeout,
        timeout,
        assignment,
        commit,
        fail_on_empty: flag(&sampler, "fail.on.empty")?,
        stop_on_empty: flag(&sampler, "stop.on.empty")?,
        check_sequence: flag(&sampler, "check.sequence")?,
        check_regex,
        value_decode,
        key_decode,
        thread_number: number(&sampler, "thread.number", 1u32, 0, u32::MAX as i64)?.max(1),
        thread_count: number(&sampler, "thread.count", 1u32, 0, u32::MAX as i64)?.max(1),
        client,
        warnings,
    })
}

/// `check.regex` compiled once; an invalid one is a configuration error naming it.
fn check_regex(regex: &str) -> Result<Regex, EngineError> {
    Regex::new(regex)
        .map_err(|e| EngineError::config(format!("check.regex: '{regex}' is not a valid Java regular expression: {e}")))
}

/// `group.protocol=consumer`: the KIP-848 group protocol, in which the broker assigns the partitions.
fn consumer_protocol(client: &BTreeMap<String, String>) -> bool {
    client.get("group.protocol").is_some_and(|p| p.trim() == "consumer")
}

/// Settings of the classic group protocol that the KIP-848 protocol moves to the broker: librdkafka refuses them
/// with `group.protocol=consumer` in words that do not say what to do.
fn check_protocol(client: &BTreeMap<String, String>) -> Result<(), EngineError> {
    if !consumer_protocol(client) {
        return Ok(());
    }
    let broker_side = [
        ("session.timeout.ms", "group.consumer.session.timeout.ms"),
        ("heartbeat.interval.ms", "group.consumer.heartbeat.interval.ms"),
        ("partition.assignment.strategy", "group.remote.assignor (uniform or range) on the client"),
        ("group.protocol.type", "nothing: the protocol has one type"),
    ];
    match broker_side.iter().find(|(k, _)| client.contains_key(*k)) {
        Some((key, instead)) => Err(EngineError::config(format!(
            "{key} is a setting of the classic group protocol; with group.protocol=consumer (KIP-848) the broker \
             decides it (instead: {instead}); remove {key} or set group.protocol=classic"
        ))),
        None => Ok(()),
    }
}

/// Defaults chosen for load tests: read what the producers wrote (earliest), tolerate slow samplers (45 s session),
/// and commit as the `commit` mode says (explicit librdkafka settings are respected).
fn consumer_defaults(client: &mut BTreeMap<String, String>, commit: Commit) {
    client.entry("auto.offset.reset".into()).or_insert_with(|| "earliest".into());
    // With the KIP-848 protocol the broker owns the session timeout (group.consumer.session.timeout.ms).
    if !consumer_protocol(client) {
        client.entry("session.timeout.ms".into()).or_insert_with(|| "45000".into());
    }
    client.entry("client.id".into()).or_insert_with(|| "jmeter-kafka-native-consumer".into());
    client.insert("enable.auto.commit".into(), (commit == Commit::Auto).to_string());
    // Offsets of returned records are stored for the commits; with commit=none nothing is stored.
    client.insert("enable.auto.offset.store".into(), (commit != Commit::None).to_string());
    client.entry("enable.partition.eof".into()).or_insert_with(|| "false".into());
}

/// Translates the Java consumer's names; the properties are returned in a map (later ones win).
pub(crate) fn translate_all(
    explicit: Vec<(String, String)>,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, String>, EngineError> {
    let mut client = BTreeMap::new();
    for (key, value) in explicit {
        for (k, v) in translate_java_name(&key, &value, warnings)? {
            client.insert(k, v);
        }
    }
    Ok(client)
}

/// Accepts the Java consumer's property names and maps them onto librdkafka's.
fn translate_java_name(
    key: &str,
    value: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<(String, String)>, EngineError> {
    let one = |k: &str, v: &str| Ok(vec![(k.to_string(), v.to_string())]);
    match key {
        "fetch.max.wait.ms" => one("fetch.wait.max.ms", value),
        "key.deserializer" | "value.deserializer" => {
            warnings.push(format!("{key} ignored: the engine reads bytes (sizes, headers; check.regex reads UTF-8)"));
            Ok(Vec::new())
        }
        "enable.auto.commit" => Err(EngineError::config(format!(
            "enable.auto.commit: set the sampler's commit parameter instead (auto, sync or none); \
             enable.auto.commit={} would contradict it",
            value
        ))),
        "auto.offset.reset" if value == "none" => one("auto.offset.reset", "error"),
        "partition.assignment.strategy" => {
            let names: Result<Vec<&str>, EngineError> = value
                .split(',')
                .map(str::trim)
                .map(|class| match class.rsplit('.').next().unwrap_or(class) {
                    "RangeAssignor" | "range" => Ok("range"),
                    "RoundRobinAssignor" | "roundrobin" => Ok("roundrobin"),
                    "CooperativeStickyAssignor" | "cooperative-sticky" => Ok("cooperative-sticky"),
                    other => Err(EngineError::config(format!(
                        "partition.assignment.strategy: '{other}' is not available in librdkafka; use range, \
                         roundrobin or cooperative-sticky (Java's CooperativeStickyAssignor)"
                    ))),
                })
                .collect();
            one("partition.assignment.strategy", &names?.join(","))
        }
        _ => settings::translate_security(key, value).unwrap_or_else(|| one(key, value)),
    }
}

/// `0,1,2` or ranges such as `0-3,8`: partition numbers in the order given, each at most once.
pub fn parse_partitions(text: &str) -> Result<Vec<i32>, EngineError> {
    let invalid = || {
        EngineError::config(format!(
            "assignment: '{text}' is not valid; use all (every partition, split across the threads), a list of \
             partitions such as 0,1,2 or 0-5, or subscribe (join the consumer group, with rebalances)"
        ))
    };
    let mut partitions = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (from, to) = match item.split_once('-') {
            Some((a, b)) => (a.trim().parse::<i32>(), b.trim().parse::<i32>()),
            None => (item.parse::<i32>(), item.parse::<i32>()),
        };
        let (Ok(from), Ok(to)) = (from, to) else { return Err(invalid()) };
        if from < 0 || to < from || to - from > 100_000 {
            return Err(invalid());
        }
        for p in from..=to {
            if partitions.contains(&p) {
                // A partition listed twice would be read by one thread only: the list is probably a typo.
                return Err(EngineError::config(format!(
                    "assignment: partition {p} is listed more than once in '{}'; list each partition once",
                    crate::echo::clip(text)
                )));
            }
            partitions.push(p);
        }
    }
    if partitions.is_empty() {
        return Err(invalid());
    }
    Ok(partitions)
}

/// The partitions thread `number` (1-based) of `count` reads: every count-th one, so that the threads of a
/// group share the list evenly and never overlap.
pub fn split_for_thread(partitions: &[i32], number: u32, count: u32) -> Vec<i32> {
    let (number, count) = (number.max(1) as usize, count.max(1) as usize);
    partitions.iter().enumerate().filter(|(i, _)| i % count == (number - 1) % count).map(|(_, p)| *p).collect()
}

/// Every name a user could have meant: librdkafka's properties, the Java names we translate, our own keys.
pub(crate) fn candidates(keys: &[&str]) -> Vec<String> {
    let mut names = librdkafka_conf::property_names();
    names.extend(keys.iter().chain(JAVA_ONLY_KEYS).chain(JAVA_SECURITY_KEYS).map(|s| s.to_string()));
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::settings::test_pairs;

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        test_pairs(&[("bootstrap.servers", "127.0.0.1:9092"), ("topic", "t"), ("group.id", "g")], items)
    }

    fn err(items: &[(&str, &str)]) -> String {
        parse_consumer(&pairs(items)).unwrap_err().message
    }

    #[test]
    fn the_kip848_protocol_gets_no_session_timeout_and_refuses_classic_settings() {
        let s = parse_consumer(&pairs(&[("group.protocol", "consumer"), ("group.remote.assignor", "range")])).unwrap();
        assert!(!s.client.contains_key("session.timeout.ms"), "{:?}", s.client);
        assert_eq!(s.client["group.remote.assignor"], "range");
        let classic = parse_consumer(&pairs(&[("group.protocol", "classic")])).unwrap();
        assert_eq!(classic.client["session.timeout.ms"], "45000");
        let m = err(&[("group.protocol", "consumer"), ("session.timeout.ms", "10000")]);
        assert!(m.starts_with("session.timeout.ms is a setting of the classic group protocol"), "{m}");
        assert!(m.contains("group.consumer.session.timeout.ms") && m.contains("group.protocol=classic"), "{m}");
        let m = err(&[("group.protocol", "consumer"), ("partition.assignment.strategy", "range")]);
        assert!(m.contains("group.remote.assignor"), "{m}");
        let m = err(&[("group.protocol", "kip848")]);
        assert!(m.contains("group.protocol"), "{m}");
    }

    #[test]
    fn defaults_suit_a_load_test() {
        let s = parse_consumer(&pairs(&[])).unwrap();
        assert_eq!(s.assignment, Assignment::Static(None));
        assert_eq!(s.commit, Commit::Auto);
        assert_eq!((s.max_records, s.poll_timeout), (500, Duration::from_millis(1000)));
        assert_eq!(s.client["auto.offset.reset"], "earliest");
        assert_eq!(s.client["session.timeout.ms"], "45000");
        assert_eq!(s.client["enable.auto.commit"], "true");
        assert_eq!(s.group, "g");
        assert_eq!((s.thread_number, s.thread_count), (1, 1));
    }

    #[test]
    fn commit_modes_set_librdkafka_properties() {
        let s = parse_consumer(&pairs(&[("commit", "sync")])).unwrap();
        assert_eq!(
            (s.client["enable.auto.commit"].as_str(), s.client["enable.auto.offset.store"].as_str()),
            ("false", "true")
        );
        let s = parse_consumer(&pairs(&[("commit", "none")])).unwrap();
        assert_eq!(s.client["enable.auto.offset.store"], "false");
        assert!(err(&[("commit", "always")]).starts_with("commit: 'always' is not valid"));
        assert!(err(&[("enable.auto.commit", "false")]).contains("commit parameter"));
    }

    #[test]
    fn assignment_lists_and_ranges() {
        assert_eq!(parse_partitions("0-2, 5,3").unwrap(), vec![0, 1, 2, 5, 3]);
        let dup = parse_partitions("0,0,0").unwrap_err().message;
        assert!(dup.starts_with("assignment: partition 0 is listed more than once"), "{dup}");
        assert!(parse_partitions("0-2,1").is_err());
        let s = parse_consumer(&pairs(&[("assignment", "subscribe")])).unwrap();
        assert_eq!(s.assignment, Assignment::Subscribe);
        assert!(err(&[("assignment", "some")]).starts_with("assignment: 'some' is not valid"));
        assert!(err(&[("assignment", "3-1")]).contains("0-5"));
    }

    #[test]
    fn threads_share_partitions_without_overlap() {
        let all: Vec<i32> = (0..6).collect();
        assert_eq!(split_for_thread(&all, 1, 3), vec![0, 3]);
        assert_eq!(split_for_thread(&all, 2, 3), vec![1, 4]);
        assert_eq!(split_for_thread(&all, 3, 3), vec![2, 5]);
        assert_eq!(split_for_thread(&all, 1, 1), all);
        assert!(split_for_thread(&all[..2], 3, 3).is_empty());
    }

    #[test]
    fn java_consumer_names_are_translated() {
        let s = parse_consumer(&pairs(&[
            ("max.poll.records", "100"),
            ("fetch.max.wait.ms", "50"),
            ("auto.offset.reset", "none"),
            ("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer"),
            ("partition.assignment.strategy", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"),
        ]))
        .unwrap();
        assert_eq!(s.max_records, 100);
        assert_eq!(s.client["fetch.wait.max.ms"], "50");
        assert_eq!(s.client["auto.offset.reset"], "error");
        assert_eq!(s.client["partition.assignment.strategy"], "cooperative-sticky");
        assert!(s.warnings[0].contains("value.deserializer ignored"), "{:?}", s.warnings);
        assert!(!s.client.contains_key("max.poll.records"));
    }

    #[test]
    fn mistakes_name_the_key() {
        assert!(err(&[("max.records", "0")]).starts_with("max.records: '0' is not valid"));
        let m = err(&[("extra.properties", "fetch.wait.max.mss=5")]);
        assert!(m.contains("did you mean fetch.wait.max.ms?"), "{m}");
        let m = parse_consumer(&pairs(&[])[..2]).unwrap_err().message;
        assert!(m.starts_with("group.id: missing"), "{m}");
        let m = parse_consumer(&pairs(&[])[1..]).unwrap_err().message;
        assert!(m.starts_with("bootstrap.servers: missing"), "{m}");
        assert!(err(&[("check.sequence", "yes")]).starts_with("check.sequence: 'yes'"));
        let m = err(&[("check.regex", "(unclosed")]);
        assert!(m.starts_with("check.regex: '(unclosed' is not a valid Java regular expression: "), "{m}");
    }

    #[test]
    fn jaas_is_translated_and_never_echoed() {
        let s = parse_consumer(&pairs(&[(
            "sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p\";",
        )]))
        .unwrap();
        assert_eq!((s.client["sasl.username"].as_str(), s.client["sasl.password"].as_str()), ("u", "p"));
        let m = err(&[("sasl.jaas.config", "ScramLoginModule required user=\"u\" pass=\"hunter2\";")]);
        assert!(!m.contains("hunter2"), "{m}");
    }
}
