//! librdkafka's in-process mock cluster. A client given a `test.mock.*` property (`test.mock.num.brokers=3`) starts
//! brokers of its own inside the process and talks only to them: every acknowledgement, offset and latency then
//! comes from that mock, not from the cluster in `bootstrap.servers`. A plan that carries such a property by
//! mistake (copied from a librdkafka example) would report a load test of no cluster at all, so the engine refuses
//! the properties unless the environment asks for the mock: `KAFKA_NATIVE_MOCK_CLUSTER=allow`, as the engine's own
//! JVM tests do to run without a broker, and as a tester may do to try a plan on a machine without Kafka.

use std::collections::BTreeMap;

use crate::echo::clip;
use crate::error::EngineError;

/// The environment variable that allows the mock cluster, and the value that does.
pub const ALLOW_VARIABLE: &str = "KAFKA_NATIVE_MOCK_CLUSTER";
const ALLOW_VALUE: &str = "allow";

/// Whether this process's environment allows the mock cluster.
pub fn allowed_by_environment() -> bool {
    std::env::var(ALLOW_VARIABLE).is_ok_and(|v| v == ALLOW_VALUE)
}

/// Refuses `test.mock.*` properties unless `allowed`.
pub fn check(props: &BTreeMap<String, String>, allowed: bool) -> Result<(), EngineError> {
    match props.keys().find(|k| k.starts_with("test.mock.")) {
        Some(key) if !allowed => Err(EngineError::config(format!(
            "{}: starts librdkafka's in-process mock cluster, whose acknowledgements and latencies are not a \
             broker's; remove it to test the cluster in bootstrap.servers (to try a plan without Kafka on purpose, \
             set {ALLOW_VARIABLE}={ALLOW_VALUE} in JMeter's environment)",
            clip(key)
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(key: &str) -> BTreeMap<String, String> {
        [(key.to_string(), "3".to_string())].into_iter().collect()
    }

    #[test]
    fn a_mock_cluster_is_refused_unless_allowed() {
        let e = check(&props("test.mock.num.brokers"), false).unwrap_err();
        assert_eq!(e.code, "CONFIG_ERROR");
        assert!(e.message.starts_with("test.mock.num.brokers: starts librdkafka's in-process mock cluster"), "{e:?}");
        assert!(e.message.contains("KAFKA_NATIVE_MOCK_CLUSTER=allow"), "{e:?}");
        assert!(check(&props("test.mock.num.brokers"), true).is_ok());
        assert!(check(&props("linger.ms"), false).is_ok());
    }
}
