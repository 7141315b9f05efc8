//! Bounded retry of the requests whose errors go away by themselves (a coordinator or a leader being elected, a
//! dropped connection): a fresh broker or a topic created a moment ago must not fail a test that would have worked
//! half a second later.

use std::time::{Duration, Instant};

use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;

/// Runs `op` with the time left until `deadline`, again while it fails with a [`transient`] error and time is
/// left (backing off from 100 ms to 500 ms): the result and the number of attempts, or the last error and the count.
pub fn until_answered<T>(
    deadline: Instant,
    mut op: impl FnMut(Duration) -> Result<T, KafkaError>,
) -> Result<(T, u32), (KafkaError, u32)> {
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(100));
        match op(left) {
            Ok(v) => return Ok((v, attempts)),
            Err(e) if e.rdkafka_error_code().is_some_and(transient) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis((50u64 << attempts.min(4)).min(500)));
            }
            Err(e) => return Err((e, attempts)),
        }
    }
}

/// Errors of the offset fetches that go away by themselves: the group coordinator is being elected or is
/// loading (a fresh broker creates `__consumer_offsets` on the first group's request), a new topic's partition has
/// no leader yet, or a broker connection dropped.
pub fn transient(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::NotCoordinator
            | RDKafkaErrorCode::CoordinatorNotAvailable
            | RDKafkaErrorCode::CoordinatorLoadInProgress
            | RDKafkaErrorCode::BrokerTransportFailure
            | RDKafkaErrorCode::AllBrokersDown
            | RDKafkaErrorCode::RequestTimedOut
            | RDKafkaErrorCode::OperationTimedOut
            | RDKafkaErrorCode::NotLeaderForPartition
            | RDKafkaErrorCode::LeaderNotAvailable
    )
}
