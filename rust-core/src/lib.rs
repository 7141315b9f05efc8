//! kafka-native: the engine behind the jmeter-kafka-native JMeter sampler.
//!
//! One message's way: the JMeter thread calls the JNI bridge ([`jni`]) once per sample with its
//! [`producer::ProducerHandle`]; the handle generates key and value in native memory ([`payload`]),
//! hands them to librdkafka and waits until the broker acknowledges every message of the sample
//! (or the deadline passes); the outcome goes back as a few numbers. Configuration is validated
//! once, up front ([`config`], [`policy`], [`librdkafka_conf`]); statistics are per thread and
//! merged at the end ([`stats`]); log lines wait in [`logsink`] until a JMeter thread drains them.
//!
//! Everything but the [`jni`] module is plain Rust, tested with `cargo test` against a real broker.

pub mod admin;
pub mod audit;
pub mod config;
pub mod consumer;
pub mod consumer_config;
pub mod consumer_stats;
pub mod error;
pub mod jni;
pub mod lag;
pub mod librdkafka_conf;
pub mod logsink;
pub mod payload;
pub mod policy;
pub mod producer;
pub mod schema;
pub mod stats;
