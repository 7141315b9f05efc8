//! The engine's integration tests, as ONE test binary (it links once, and cargo runs all its tests side by side):
//! - `broker_less`: the producer's deadlines, pre-flight and error mapping against librdkafka's mock cluster; they
//!   need no broker and always run;
//! - `broker_less_transactions`: the transactional producer through a failed abort, on the mock cluster too;
//! - the real-broker tier (every other module): against the broker started by `scripts/kafka start`; each test
//!   skips, saying why, when none answers ([`require_broker!`]).
//!
//! A test that reads a run's totals (the end-of-test reports, the audit) opens its handles on a `Run` of its own,
//! since the other tests of the binary run beside it.

#[macro_use]
mod common;

mod audit;
mod broker_less;
mod broker_less_transactions;
mod consumer;
mod consumer_report;
mod pacing;
mod producer;
mod report;
