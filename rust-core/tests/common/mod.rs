//! Helpers for tests that talk to the real broker started by `scripts/kafka start`.

#![allow(dead_code)] // each test file uses a different subset

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kafka_native::{admin, config};

/// Connection properties for the admin helpers: the local broker, no security.
pub fn connection() -> std::collections::BTreeMap<String, String> {
    std::collections::BTreeMap::from([("bootstrap.servers".to_string(), bootstrap())])
}

pub fn bootstrap() -> String {
    std::env::var("KAFKA_BOOTSTRAP").unwrap_or_else(|_| "127.0.0.1:9092".to_string())
}

/// A fresh topic for one test, so tests can run in parallel and offsets start at zero.
pub fn new_topic(name: &str, partitions: i32) -> String {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let topic = format!("rust-{name}-{nanos}");
    let created =
        admin::create_topic(&connection(), &topic, partitions, 1, Duration::from_secs(10)).unwrap_or_else(|e| {
            panic!("cannot create topic {topic} on {} (is `scripts/kafka start` running?): {e}", bootstrap())
        });
    assert!(created);
    topic
}

pub fn settings(topic: &str, extra: &[(&str, &str)]) -> config::ProducerSettings {
    let mut pairs = vec![("bootstrap.servers".to_string(), bootstrap()), ("topic".to_string(), topic.to_string())];
    pairs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    config::parse(&pairs).unwrap_or_else(|e| panic!("bad test settings: {e}"))
}

pub fn total_messages(topic: &str) -> i64 {
    admin::end_offsets(&connection(), topic, Duration::from_secs(10)).unwrap().iter().sum()
}
