//! kafka-native: the engine behind the jmeter-kafka-native JMeter samplers (producer, consumer, lag monitor).
//!
//! # One producer sample, end to end (six files)
//! 1. `java-sampler/.../KafkaProducerSampler.java` (`runTest`): the JMeter thread calls native once per sample with
//!    its handle and a reused `long[]`;
//! 2. `java-sampler/.../NativeProducer.java`: the `native` declarations;
//! 3. `rust-core/src/jni/producer.rs` ([`jni::producer`], `send`): converts the value, fills the `long[]` in the
//!    order of its layout (defined once, [`jni::producer::LAYOUT`]), returns null or an `EngineError`;
//! 4. `rust-core/src/jni/mod.rs` ([`jni`]): the helpers every native shares: borrow the handle, catch panics,
//!    throw `EngineException`;
//! 5. `rust-core/src/producer/mod.rs` ([`producer::ProducerHandle::send`]): key and value made in native memory,
//!    records handed to librdkafka, each with a ticket; the thread waits on its slot until every message has a
//!    verdict or the deadline passes;
//! 6. `rust-core/src/producer/slot.rs` ([`producer::slot`]): librdkafka's delivery callback (on its own thread,
//!    guarded against panics) hands each verdict to the ticket's slot, which counts it and wakes the waiting
//!    thread; the outcome goes back up the same way, as numbers in the `long[]`.
//!
//! # Where each concern lives
//! - [`client`]: what every Kafka client shares: parameter handling, the validated librdkafka configuration (built
//!   from a map in one place), the one client context with its error hook (every client keeps its last cause),
//!   metadata fetches that carry that cause, topic administration.
//! - [`producer`]: settings and policy presets, handle, slot and ticket, shared producer and pre-flight, pacer,
//!   payloads, per-thread statistics.
//! - [`consumer`]: settings, handle (one sample = one poll), the sample's outcome (sequence, `check.regex`, EMPTY,
//!   `stop.on.empty`), statistics, rebalances.
//! - [`lag`]: the consumer group's lag and the "not keeping up" verdict.
//! - [`audit`]: the `kn.*` headers, acknowledged-sequence sets, the read-back at the end of a test.
//! - [`schema`]: Avro, JSON Schema and Protobuf records generated from a schema (field rules) or encoded from
//!   JMeter's JSON, the schema registry client and wire format, and the consumer's decoder.
//! - [`run`]: one run as a whole: its totals and end-of-test reports and JSON summaries ([`run::report`]), where
//!   the send→ack time goes ([`run::breakdown`], librdkafka's statistics, with hints), and the report files checked
//!   at test start so that none replaces a file it should not ([`run::report_paths`]).
//! - [`verdict`]: judging the run for CI: `kafka.verdict`'s criteria over the summaries, the run judged once after
//!   JMeter's end of test (summaries, lag, generator health, the baseline comparison), the JUnit report.
//! - [`files`]: every file a user names, opened without blocking, checked to be a regular file, read with a limit.
//! - [`error`]: one error type with stable codes; [`echo`]: user values clipped in messages; [`logsink`]: log lines
//!   waiting for a JMeter thread; [`template`]: `{seq}`-style placeholders in keys, values and headers.
//! - [`jni`]: the bridge only (conversion, typed exceptions, result layouts).
//!
//! Everything but [`jni`] is plain Rust, tested with `cargo test`: broker-less on librdkafka's mock cluster, and
//! against a real broker when one answers on 127.0.0.1:9092.

#![warn(missing_docs)]

pub mod audit;
pub mod client;
pub mod consumer;
pub mod echo;
pub mod error;
pub mod files;
pub mod jni;
pub mod lag;
pub mod logsink;
pub mod producer;
pub mod run;
pub mod schema;
pub mod template;
pub mod verdict;
