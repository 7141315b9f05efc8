//! What every Kafka client of the engine shares: parameter handling ([`settings`]), the librdkafka configuration
//! and its validation ([`config`]), the client context with its error hook ([`context`]), metadata fetches that
//! carry the client's last error ([`metadata`]), bounded retry of transient errors ([`retry`]), the refusal of
//! librdkafka's in-process mock cluster in a real test ([`mock_cluster`]) and topic
//! administration ([`admin`]); TLS failures told apart ([`tls`]).

pub mod admin;
pub mod config;
pub mod context;
pub mod limits;
pub mod metadata;
pub mod mock_cluster;
pub mod oauth;
pub mod retry;
pub mod settings;
pub mod tls;
