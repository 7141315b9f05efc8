//! One error type for the engine: a stable code (the Kafka error name, or one of ours) and a readable message.
//!
//! Codes are what a JMeter user sees as the sample's response code, so they are stable names
//! (`MSG_SIZE_TOO_LARGE`, `MSG_TIMED_OUT`, `CONFIG_ERROR`, ...), never numbers.

use std::ffi::CStr;
use std::fmt;

use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;

/// Declares the catalogue: each code's variant, its stable name and what it means to a user.
macro_rules! codes {
    ($($(#[doc = $doc:literal])+ $variant:ident => $name:literal,)+) => {
        /// Every response code the engine itself gives a sample or an error (librdkafka's own error names, such as
        /// `NOT_ENOUGH_REPLICAS`, pass through [`EngineError::from_kafka`] as they are and are not listed here).
        /// Java reads the list through `NativeEngine.codes` and checks its own constants against it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Code {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &[Code] = &[$(Code::$variant,)+];

            /// The stable name a user sees as the response code.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)+
                }
            }
        }
    };
}

codes! {
    /// An invalid or contradictory configuration (also: a plan's settings).
    ConfigError => "CONFIG_ERROR",
    /// A wait cut short by JMeter stopping the test.
    Interrupted => "INTERRUPTED",
    /// No acknowledgement before the sampler's deadline (librdkafka's name for the same).
    MsgTimedOut => "MSG_TIMED_OUT",
    /// A message or batch larger than the producer or broker takes (librdkafka's name).
    MsgSizeTooLarge => "MSG_SIZE_TOO_LARGE",
    /// The producer's local queue stayed full until the deadline (librdkafka's name).
    QueueFull => "QUEUE_FULL",
    /// The topic or partition does not exist (librdkafka's name).
    UnknownTopicOrPart => "UNKNOWN_TOPIC_OR_PART",
    /// The topic has fewer partitions than the test needs.
    TooFewPartitions => "TOO_FEW_PARTITIONS",
    /// The broker refused the credentials (or the identity provider refused the client's id and secret).
    Authentication => "AUTHENTICATION",
    /// The identity provider gave no access token (OAUTHBEARER with OIDC): unreachable, refused the scope, or
    /// answered something else than a token.
    TokenError => "TOKEN_ERROR",
    /// A librdkafka error without a code of its own.
    KafkaError => "KAFKA_ERROR",
    /// A handle used after close (the test is ending).
    Closed => "CLOSED",
    /// A bug or a JNI failure inside the engine: please report it.
    InternalError => "INTERNAL_ERROR",
    /// The end-of-test summary could not be written.
    SummaryNotWritten => "SUMMARY_NOT_WRITTEN",
    /// A consumer poll that found no record.
    Empty => "EMPTY",
    /// Records out of the producer's sequence (a gap or a repeat).
    SequenceError => "SEQUENCE_ERROR",
    /// A record that does not match `check.regex`.
    ContentMismatch => "CONTENT_MISMATCH",
    /// The consumer group's lag grew over the monitor's window.
    LagGrowing => "LAG_GROWING",
    /// The lag monitor's group has no committed offsets.
    GroupNotFound => "GROUP_NOT_FOUND",
    /// A schema that cannot be read or used.
    SchemaError => "SCHEMA_ERROR",
    /// A record that does not fit its schema.
    RecordInvalid => "RECORD_INVALID",
    /// A consumed value that cannot be decoded with its schema.
    DecodeError => "DECODE_ERROR",
    /// A decoded value that fails `value.assert`.
    AssertionFailed => "ASSERTION_FAILED",
    /// The schema registry did not answer.
    RegistryUnreachable => "REGISTRY_UNREACHABLE",
    /// The schema registry refused the credentials.
    RegistryAuthFailed => "REGISTRY_AUTH_FAILED",
    /// The schema registry answered with an error or something that is not a schema.
    RegistryError => "REGISTRY_ERROR",
    /// The registry has no such subject.
    SubjectNotFound => "SUBJECT_NOT_FOUND",
    /// The registry has no such schema id or version.
    SchemaNotFound => "SCHEMA_NOT_FOUND",
    /// The registry refused the schema as incompatible with the subject's.
    SchemaIncompatible => "SCHEMA_INCOMPATIBLE",
    /// Messages still in flight when the producer was closed, counted in the summary.
    UndeliveredAtClose => "UNDELIVERED_AT_CLOSE",
    /// The brokers did not answer (a transport failure) for longer than `timeout.ms`.
    Transport => "TRANSPORT",
    /// The transactional producer was fenced: another producer with the same `transactional.id` started.
    Fenced => "FENCED",
    /// The transaction did not complete within `transaction.timeout.ms`.
    TxnTimedOut => "TXN_TIMED_OUT",
    /// A transaction aborted on purpose (`transaction.abort.percent`): a successful sample.
    Aborted => "ABORTED",
    /// This library did not load in the JVM (another platform): given by the Java elements, never by the engine.
    EngineUnavailable => "ENGINE_UNAVAILABLE",
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Code> for String {
    fn from(code: Code) -> String {
        code.as_str().to_string()
    }
}

impl PartialEq<Code> for String {
    fn eq(&self, code: &Code) -> bool {
        self == code.as_str()
    }
}

/// An engine error: what a JMeter user sees as the response code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineError {
    /// A stable name (see the module docs).
    pub code: String,
    /// What is wrong and how to fix it; never a secret.
    pub message: String,
}

impl EngineError {
    /// The message is kept readable: a value echoed in quotes that is very long (a 1 MB topic or group id) is cut
    /// to its start and its size, so that no JTL row or log line carries it whole.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        EngineError::named(code.as_str().to_string(), message)
    }

    /// An error under a name that is not ours: librdkafka's (from [`error_name`]) or one already in an error.
    pub fn named(code: String, message: impl Into<String>) -> Self {
        EngineError { code, message: crate::echo::readable(message.into()) }
    }

    /// A CONFIG_ERROR.
    pub fn config(message: impl Into<String>) -> Self {
        EngineError::new(Code::ConfigError, message)
    }

    /// Maps a librdkafka error to its stable name, keeping librdkafka's description as the message.
    pub fn from_kafka(err: &KafkaError) -> Self {
        match err.rdkafka_error_code() {
            Some(code) => EngineError::named(error_name(code), err.to_string()),
            None => EngineError::new(Code::KafkaError, err.to_string()),
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
    fn codes_are_unique_upper_snake_names() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            let name = code.as_str();
            assert!(seen.insert(name), "{name} twice");
            assert!(name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'), "{name}");
        }
        assert_eq!(String::from(Code::Closed), "CLOSED");
    }

    #[test]
    fn kafka_errors_map_to_their_names() {
        let err = EngineError::from_kafka(&KafkaError::MessageProduction(RDKafkaErrorCode::MessageSizeTooLarge));
        assert_eq!(err.code, "MSG_SIZE_TOO_LARGE");
        assert!(err.message.contains("too large"), "{}", err.message);
    }
}
