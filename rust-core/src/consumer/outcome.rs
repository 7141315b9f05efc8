//! The outcome of a consumer sample, decided in the engine: a Kafka error or an interrupt, then
//! `check.sequence` (SEQUENCE_ERROR), `value.decode`/`key.decode` (DECODE_ERROR, ASSERTION_FAILED, ...),
//! `fail.on.empty` (EMPTY), `check.regex` (CONTENT_MISMATCH, which wins over the
//! others, as it always has), and `stop.on.empty` (the thread stops at its first empty, successful sample).

use std::collections::HashMap;

use fancy_regex::Regex;
use rdkafka::message::{BorrowedMessage, Headers, Message};

use super::settings::ConsumerSettings;
use crate::audit::{PRODUCER_HEADER, RUN_HEADER, SEQ_HEADER};
use crate::error::{Code, EngineError};
use crate::schema::RecordDecoder;

/// A sample's running figures.
#[derive(Debug, Clone)]
pub(super) struct SampleAcc {
    pub(super) records: u32,
    pub(super) bytes: u64,
    pub(super) e2e_sum: i64,
    pub(super) e2e_count: u32,
    pub(super) e2e_max: i64,
    pub(super) partition: i32,
    pub(super) offset: i64,
    /// Records that failed `check.sequence`, and the first failure.
    pub(super) check_failures: u32,
    first_check_error: Option<EngineError>,
    /// Records whose value has no match of `check.regex`, and the start of the first one.
    mismatches: u32,
    first_mismatch: Option<String>,
}

impl Default for SampleAcc {
    fn default() -> Self {
        SampleAcc {
            records: 0,
            bytes: 0,
            e2e_sum: 0,
            e2e_count: 0,
            e2e_max: i64::MIN,
            partition: -1,
            offset: -1,
            check_failures: 0,
            first_check_error: None,
            mismatches: 0,
            first_mismatch: None,
        }
    }
}

/// `check.regex`: the record's value (UTF-8, invalid bytes replaced) must contain a match.
pub(super) fn check_content(regex: &Regex, value: &[u8], sample: &mut SampleAcc) {
    let text = String::from_utf8_lossy(value);
    // A pattern that exceeds fancy-regex's backtracking limit on this value counts as no match.
    if !regex.is_match(&text).unwrap_or(false) {
        sample.mismatches += 1;
        sample.first_mismatch.get_or_insert_with(|| {
            let mut excerpt: String = text.chars().take(100).collect();
            if text.chars().count() > 100 {
                excerpt.push_str("...");
            }
            excerpt
        });
    }
}

/// `value.decode` / `key.decode`: the record must decode against its schema (and pass the field assertion);
/// a failure counts as a check failure, and the first one is the sample's error (DECODE_ERROR, ASSERTION_FAILED,
/// SCHEMA_NOT_FOUND, ...).
pub(super) fn check_schema(
    decoder: &mut RecordDecoder,
    bytes: &[u8],
    what: &str,
    m: &BorrowedMessage<'_>,
    sample: &mut SampleAcc,
) {
    if let Err(e) = decoder.check(bytes) {
        sample.check_failures += 1;
        sample.first_check_error.get_or_insert_with(|| {
            EngineError::named(
                e.code,
                format!("partition {} offset {}: {what}: {}", m.partition(), m.offset(), e.message),
            )
        });
    }
}

/// The sample's error (None = success) and whether its thread should stop (`stop.on.empty`).
pub(super) fn decide(
    settings: &ConsumerSettings,
    sample: &SampleAcc,
    mut error: Option<EngineError>,
) -> (Option<EngineError>, bool) {
    if error.is_none() && sample.check_failures > 0 {
        error = sample.first_check_error.clone();
    }
    if error.is_none() && sample.records == 0 && settings.fail_on_empty {
        error = Some(EngineError::new(
            Code::Empty,
            format!("no record within {} ms (poll.timeout.ms)", settings.poll_timeout.as_millis()),
        ));
    }
    if let (Some(regex), Some(first)) = (&settings.check_regex, &sample.first_mismatch) {
        error = Some(EngineError::new(
            Code::ContentMismatch,
            format!(
                "{} of {} records do not contain a match of check.regex '{}'; the first: '{first}'",
                sample.mismatches,
                sample.records,
                regex.as_str()
            ),
        ));
    }
    let stop = settings.stop_on_empty && sample.records == 0 && error.is_none();
    (error, stop)
}

/// `check.sequence`: within a partition, each producer's `kn.seq` must increase; a repeat is a duplicate (e.g. a
/// retry that wrote twice), a smaller number a reordering.
pub(super) fn check_sequence(
    m: &BorrowedMessage<'_>,
    last_seq: &mut HashMap<(Vec<u8>, i32), u64>,
    key: &mut Vec<u8>,
    sample: &mut SampleAcc,
) {
    let (mut run, mut pid, mut seq) = (None, None, None);
    if let Some(headers) = m.headers() {
        for h in headers.iter() {
            match h.key {
                RUN_HEADER => run = h.value,
                PRODUCER_HEADER => pid = h.value,
                SEQ_HEADER => seq = h.value.and_then(|v| <[u8; 8]>::try_from(v).ok()).map(u64::from_be_bytes),
                _ => {}
            }
        }
    }
    let fail = |sample: &mut SampleAcc, message: String| {
        sample.check_failures += 1;
        sample.first_check_error.get_or_insert_with(|| EngineError::new(Code::SequenceError, message));
    };
    let (Some(pid), Some(seq)) = (pid, seq) else {
        return fail(
            sample,
            format!(
                "partition {} offset {}: no kn.pid/kn.seq headers; produce with audit=true to use check.sequence",
                m.partition(),
                m.offset()
            ),
        );
    };
    key.clear();
    key.extend_from_slice(run.unwrap_or_default());
    key.push(b'/');
    key.extend_from_slice(pid);
    // Lookup without allocating: the tuple key needs an owned Vec only for a new producer/partition.
    let lookup = (std::mem::take(key), m.partition());
    match last_seq.get_mut(&lookup) {
        Some(last) if seq <= *last => {
            let what = if seq == *last { "a duplicate" } else { "out of order" };
            let message = format!(
                "partition {} offset {}: producer {} sequence {seq} after {}: {what}",
                m.partition(),
                m.offset(),
                String::from_utf8_lossy(pid),
                *last
            );
            *key = lookup.0;
            fail(sample, message);
        }
        Some(last) => {
            *last = seq;
            *key = lookup.0;
        }
        None => {
            last_seq.insert(lookup, seq);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consumer::settings::parse_consumer;

    fn settings(extra: &[(&str, &str)]) -> ConsumerSettings {
        let mut pairs: Vec<(String, String)> = [("bootstrap.servers", "b:1"), ("topic", "t"), ("group.id", "g")]
            .iter()
            .chain(extra)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        pairs.push(("poll.timeout.ms".into(), "250".into()));
        parse_consumer(&pairs).unwrap()
    }

    #[test]
    fn empty_samples_fail_or_stop_the_thread_as_asked() {
        let empty = SampleAcc::default();
        assert_eq!(decide(&settings(&[]), &empty, None), (None, false));
        let (e, stop) = decide(&settings(&[("fail.on.empty", "true"), ("stop.on.empty", "true")]), &empty, None);
        assert_eq!((e.unwrap().message, stop), ("no record within 250 ms (poll.timeout.ms)".to_string(), false));
        assert_eq!(decide(&settings(&[("stop.on.empty", "true")]), &empty, None), (None, true));
        let interrupted = Some(EngineError::new(Code::Interrupted, "stopped"));
        assert!(!decide(&settings(&[("stop.on.empty", "true")]), &empty, interrupted).1);
    }

    #[test]
    fn values_without_a_match_fail_the_sample_with_java_style_patterns() {
        // A look-ahead and a back-reference: Java syntax that the plain regex crate refuses.
        let s = settings(&[("check.regex", r"^(?=order-)(\w)\1?")]);
        let mut sample = SampleAcc { records: 3, ..SampleAcc::default() };
        let regex = s.check_regex.as_ref().unwrap();
        for value in [&b"order-1"[..], b"invoice-2", &[b'x'; 150]] {
            check_content(regex, value, &mut sample);
        }
        let e = decide(&s, &sample, None).0.unwrap();
        assert_eq!(e.code, Code::ContentMismatch);
        assert_eq!(
            e.message,
            r"2 of 3 records do not contain a match of check.regex '^(?=order-)(\w)\1?'; the first: 'invoice-2'"
        );
        let mut long = SampleAcc { records: 1, ..SampleAcc::default() };
        check_content(regex, &[b'x'; 150], &mut long);
        assert!(decide(&s, &long, None).0.unwrap().message.ends_with(&format!("'{}...'", "x".repeat(100))));
    }
}
