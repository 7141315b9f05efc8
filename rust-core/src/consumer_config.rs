//! Consumer and lag-monitor parameters → validated engine settings, checked once before the first poll.
//!
//! Same rules as the producer's [`crate::config`]: the sampler's own keys are separated from client properties,
//! the Java consumer's property names that users paste are translated, every client property is validated by
//! librdkafka itself (an unknown name gets the closest valid one suggested), and secrets never appear in a message.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::config::{self, is_secret};
use crate::error::EngineError;
use crate::librdkafka_conf;

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

/// Sampler keys of the lag monitor that are not librdkafka properties.
pub const LAG_KEYS: &[&str] = &[
    "topic",
    "lag.windows",
    "lag.tolerance",
    "lag.variable",
    "timeout.ms",
    "extra.properties",
    "thread.number",
    "thread.count",
];

/// Java consumer names that are translated, dropped or explained (see [`translate_java_name`]).
const JAVA_ONLY_KEYS: &[&str] = &[
    "max.poll.records",
    "fetch.max.wait.ms",
    "key.deserializer",
    "value.deserializer",
    "enable.auto.commit",
    "sasl.jaas.config",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.type",
];

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

#[derive(Debug, Clone)]
pub struct ConsumerSettings {
    pub topic: String,
    pub group: String,
    /// At most this many records per sample (Java's `max.poll.records`).
    pub max_records: u32,
    /// How long a sample waits for its first record.
    pub poll_timeout: Duration,
    /// Bound on metadata, commit and close operations, and on waiting for the topic to appear.
    pub timeout: Duration,
    pub assignment: Assignment,
    pub commit: Commit,
    /// A sample without records fails (code EMPTY) instead of being a successful empty sample.
    pub fail_on_empty: bool,
    /// Read by the Java side: stop the JMeter thread at its first empty sample (the topic is drained).
    pub stop_on_empty: bool,
    /// The audit headers' sequence (`kn.seq`) must increase per producer (`kn.pid`) and partition.
    pub check_sequence: bool,
    /// Keep the values of the last sample so that the Java side can match them against `check.regex`.
    pub keep_values: bool,
    /// 1-based number of this JMeter thread and the number of threads of its group (0 = unknown).
    pub thread_number: u32,
    pub thread_count: u32,
    /// librdkafka properties, translated and validated.
    pub client: BTreeMap<String, String>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct LagSettings {
    pub topic: String,
    pub group: String,
    /// The verdict fails when the total lag grew in each of the last `windows` samples ...
    pub windows: u32,
    /// ... by more than `tolerance` records.
    pub tolerance: i64,
    pub timeout: Duration,
    pub client: BTreeMap<String, String>,
    pub warnings: Vec<String>,
}

/// The sampler's own keys, and the client properties (from the table and from `extra.properties`), trimmed.
struct Split<'a> {
    sampler: BTreeMap<&'a str, &'a str>,
    explicit: Vec<(String, String)>,
}

fn split<'a>(pairs: &'a [(String, String)], keys: &[&str]) -> Result<Split<'a>, EngineError> {
    if !pairs.iter().any(|(k, v)| k.trim() == "bootstrap.servers" && !v.trim().is_empty())
        && !pairs.iter().any(|(k, v)| k.trim() == "extra.properties" && v.contains("bootstrap.servers"))
    {
        return Err(EngineError::config(
            "bootstrap.servers: missing; set the brokers to connect to, e.g. 127.0.0.1:9092 (host:port, comma-separated)",
        ));
    }
    let mut sampler = BTreeMap::new();
    let mut explicit = Vec::new();
    for (key, value) in pairs {
        let (key, value) = (key.trim(), value.trim());
        if value.is_empty() {
            continue;
        }
        if keys.contains(&key) {
            sampler.insert(key, value);
        } else {
            explicit.push((key.to_string(), value.to_string()));
        }
    }
    if let Some(extra) = sampler.get("extra.properties") {
        let listed = config::parse_property_list(extra, "extra.properties")?;
        config::refuse_conflicts(&explicit, &listed)?;
        explicit.extend(listed);
    }
    Ok(Split { sampler, explicit })
}

/// Parses the consumer sampler's parameters, or says precisely what is wrong and how to fix it.
pub fn parse_consumer(pairs: &[(String, String)]) -> Result<ConsumerSettings, EngineError> {
    let Split { sampler, explicit } = split(pairs, CONSUMER_KEYS)?;
    let topic = required(&sampler, "topic", "set the topic to consume")?;
    crate::limits::check_topic(&topic)?;
    let mut warnings = Vec::new();
    let mut client = translate_all(explicit, &mut warnings)?;
    // Java's max.poll.records is our max.records (the explicit key wins).
    let max_poll_records = client.remove("max.poll.records");
    let max_records_raw = sampler.get("max.records").copied().or(max_poll_records.as_deref());
    let max_records = match max_records_raw {
        None => 500,
        Some(raw) => parse_number(raw, "max.records", 1, 1_000_000)? as u32,
    };
    let poll_timeout = Duration::from_millis(number(&sampler, "poll.timeout.ms", 1000, 0, 3_600_000)? as u64);
    let timeout = Duration::from_millis(number(&sampler, "timeout.ms", 5000, 1, 3_600_000)? as u64);
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
    let check_regex = sampler.get("check.regex").copied();
    consumer_defaults(&mut client, commit);
    librdkafka_conf::validate(&client, &candidates(CONSUMER_KEYS))?;
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
        keep_values: check_regex.is_some(),
        thread_number: number(&sampler, "thread.number", 1, 0, u32::MAX as i64)?.max(1) as u32,
        thread_count: number(&sampler, "thread.count", 1, 0, u32::MAX as i64)?.max(1) as u32,
        client,
        warnings,
    })
}

/// Parses the lag monitor's parameters.
pub fn parse_lag(pairs: &[(String, String)]) -> Result<LagSettings, EngineError> {
    let Split { sampler, explicit } = split(pairs, LAG_KEYS)?;
    let topic = required(&sampler, "topic", "set the topic whose consumer lag is watched")?;
    crate::limits::check_topic(&topic)?;
    let mut warnings = Vec::new();
    let mut client = translate_all(explicit, &mut warnings)?;
    let group = client.get("group.id").cloned().ok_or_else(|| {
        EngineError::config("group.id: missing; set the consumer group whose lag is watched (the consumers' group.id)")
    })?;
    // The monitor only reads: it never joins the group nor commits.
    client.insert("enable.auto.commit".into(), "false".into());
    client.entry("client.id".into()).or_insert_with(|| "jmeter-kafka-native-lag".into());
    librdkafka_conf::validate(&client, &candidates(LAG_KEYS))?;
    Ok(LagSettings {
        topic,
        group,
        windows: number(&sampler, "lag.windows", 3, 1, 1000)? as u32,
        tolerance: number(&sampler, "lag.tolerance", 0, 0, i64::MAX)?,
        timeout: Duration::from_millis(number(&sampler, "timeout.ms", 5000, 1, 3_600_000)? as u64),
        client,
        warnings,
    })
}

/// Defaults chosen for load tests: read what the producers wrote (earliest), tolerate slow samplers (45 s session),
/// and commit as the `commit` mode says (explicit librdkafka settings are respected).
fn consumer_defaults(client: &mut BTreeMap<String, String>, commit: Commit) {
    client.entry("auto.offset.reset".into()).or_insert_with(|| "earliest".into());
    client.entry("session.timeout.ms".into()).or_insert_with(|| "45000".into());
    client.entry("client.id".into()).or_insert_with(|| "jmeter-kafka-native-consumer".into());
    client.insert("enable.auto.commit".into(), (commit == Commit::Auto).to_string());
    // Offsets of returned records are stored for the commits; with commit=none nothing is stored.
    client.insert("enable.auto.offset.store".into(), (commit != Commit::None).to_string());
    client.entry("enable.partition.eof".into()).or_insert_with(|| "false".into());
}

/// Translates the Java consumer's names; the properties are returned in a map (later ones win).
fn translate_all(
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
        // Security settings mean the same for every client: the producer's translation handles them.
        "sasl.jaas.config" | "ssl.truststore.location" | "ssl.truststore.type" | "ssl.truststore.password" => {
            let pairs = [
                ("topic".to_string(), "-".to_string()),
                ("bootstrap.servers".to_string(), "-".to_string()),
                (key.to_string(), value.to_string()),
            ];
            let producer = config::parse(&pairs)?;
            Ok(producer.client.into_iter().filter(|(k, _)| k.starts_with("sasl.") || k.starts_with("ssl.")).collect())
        }
        _ => one(key, value),
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
                    crate::limits::clip(text)
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

fn required(map: &BTreeMap<&str, &str>, key: &str, hint: &str) -> Result<String, EngineError> {
    map.get(key).map(|v| v.to_string()).ok_or_else(|| EngineError::config(format!("{key}: missing; {hint}")))
}

fn flag(map: &BTreeMap<&str, &str>, key: &str) -> Result<bool, EngineError> {
    match map.get(key).copied() {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(EngineError::config(format!("{key}: '{other}' is not valid; use true or false"))),
    }
}

fn number(map: &BTreeMap<&str, &str>, key: &str, default: i64, min: i64, max: i64) -> Result<i64, EngineError> {
    match map.get(key) {
        None => Ok(default),
        Some(raw) => parse_number(raw, key, min, max),
    }
}

fn parse_number(raw: &str, key: &str, min: i64, max: i64) -> Result<i64, EngineError> {
    raw.parse::<i64>().ok().filter(|n| (min..=max).contains(n)).ok_or_else(|| {
        let raw = if is_secret(key) { "***" } else { raw };
        EngineError::config(format!("{key}: '{raw}' is not valid; use a whole number from {min} to {max}"))
    })
}

/// Every name a user could have meant: librdkafka's properties, the Java names we translate, our own keys.
fn candidates(keys: &[&str]) -> Vec<String> {
    let mut names = librdkafka_conf::property_names();
    names.extend(keys.iter().chain(JAVA_ONLY_KEYS).map(|s| s.to_string()));
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut v = vec![
            ("bootstrap.servers".to_string(), "127.0.0.1:9092".to_string()),
            ("topic".to_string(), "t".to_string()),
            ("group.id".to_string(), "g".to_string()),
        ];
        v.extend(items.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        v
    }

    fn err(items: &[(&str, &str)]) -> String {
        parse_consumer(&pairs(items)).unwrap_err().message
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

    #[test]
    fn lag_settings() {
        let s = parse_lag(&pairs(&[("lag.windows", "4"), ("lag.tolerance", "100")])).unwrap();
        assert_eq!((s.windows, s.tolerance, s.group.as_str()), (4, 100, "g"));
        let m = parse_lag(&pairs(&[])[..2]).unwrap_err().message;
        assert!(m.starts_with("group.id: missing"), "{m}");
        let m = parse_lag(&pairs(&[("lag.windows", "0")])).unwrap_err().message;
        assert!(m.starts_with("lag.windows: '0'"), "{m}");
    }
}
