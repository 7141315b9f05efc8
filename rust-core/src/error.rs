//! One error type for the engine: a stable code (the Kafka error name, or one of ours) and a readable message.
//!
//! Codes are what a JMeter user sees as the sample's response code, so they are stable names
//! (`MSG_SIZE_TOO_LARGE`, `MSG_TIMED_OUT`, `CONFIG_ERROR`, ...), never numbers.

use std::ffi::CStr;
use std::fmt;

use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;

/// Code of an invalid or contradictory configuration.
pub const CONFIG_ERROR: &str = "CONFIG_ERROR";
/// Code of messages whose wait was cut short by JMeter stopping the test.
pub const INTERRUPTED: &str = "INTERRUPTED";
/// Code used when no acknowledgement came before the sampler's deadline (same name as librdkafka's).
pub const MSG_TIMED_OUT: &str = "MSG_TIMED_OUT";

/// An engine error: what a JMeter user sees as the response code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineError {
    /// A stable name (see the module docs).
    pub code: String,
    /// What is wrong and how to fix it; never a secret.
    pub message: String,
}

impl EngineError {
    /// An error with a code and a message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        EngineError { code: code.into(), message: message.into() }
    }

    /// A CONFIG_ERROR.
    pub fn config(message: impl Into<String>) -> Self {
        EngineError::new(CONFIG_ERROR, message)
    }

    /// Maps a librdkafka error to its stable name, keeping librdkafka's description as the message.
    pub fn from_kafka(err: &KafkaError) -> Self {
        match err.rdkafka_error_code() {
            Some(code) => EngineError::new(error_name(code), err.to_string()),
            None => EngineError::new("KAFKA_ERROR", err.to_string()),
        }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for EngineError {}

/// librdkafka's configuration errors may quote values (passwords): keep only the property's name.
pub fn redact_kafka(e: &KafkaError) -> String {
    match e {
        KafkaError::ClientConfig(_, _, key, _) => format!("invalid value for {key}"),
        other => other.to_string(),
    }
}

/// The librdkafka error name without its leading underscores: `_MSG_TIMED_OUT` becomes `MSG_TIMED_OUT`.
pub fn error_name(code: RDKafkaErrorCode) -> String {
    let Ok(raw) = rdkafka::types::RDKafkaRespErr::try_from(code as i32) else {
        return format!("KAFKA_ERROR_{}", code as i32);
    };
    // SAFETY: rd_kafka_err2name returns a pointer to a static, NUL-terminated string for any value.
    let name = unsafe { CStr::from_ptr(rdkafka::bindings::rd_kafka_err2name(raw)) };
    name.to_string_lossy().trim_start_matches('_').to_string()
}

/// The text of a panic, whether it was raised with a literal (`&str`) or with `format!` (`String`).
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("non-string panic payload")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_payloads_of_both_kinds_are_readable() {
        let literal = std::panic::catch_unwind(|| panic!("plain")).unwrap_err();
        assert_eq!(panic_text(&*literal), "plain");
        let n = 3;
        let formatted = std::panic::catch_unwind(move || panic!("formatted {n}")).unwrap_err();
        assert_eq!(panic_text(&*formatted), "formatted 3");
    }

    #[test]
    fn names_are_stable_and_without_underscores() {
        assert_eq!(error_name(RDKafkaErrorCode::MessageSizeTooLarge), "MSG_SIZE_TOO_LARGE");
        assert_eq!(error_name(RDKafkaErrorCode::MessageTimedOut), "MSG_TIMED_OUT");
        assert_eq!(error_name(RDKafkaErrorCode::UnknownTopicOrPartition), "UNKNOWN_TOPIC_OR_PART");
    }

    #[test]
    fn kafka_errors_map_to_their_names() {
        let err = EngineError::from_kafka(&KafkaError::MessageProduction(RDKafkaErrorCode::MessageSizeTooLarge));
        assert_eq!(err.code, "MSG_SIZE_TOO_LARGE");
        assert!(err.message.contains("too large"), "{}", err.message);
    }
}
