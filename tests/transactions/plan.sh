# shellcheck shell=bash
# Shared by tests/transactions and tests/compat (source it): transaction_plan FILE writes the baseline producer plan
# with the Kafka Producer's transaction settings taken from -Jtxn.prefix, -Jtxn.samples and -Jtxn.abort.percent.
txn_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
transaction_plan() {
  sed -e 's|^\( *\)<stringProp name="messagesPerSample">\(.*\)$|&\n\1<stringProp name="transactionalIdPrefix">${__P(txn.prefix,)}</stringProp>\n\1<stringProp name="transactionSamples">${__P(txn.samples,)}</stringProp>\n\1<stringProp name="transactionAbortPercent">${__P(txn.abort.percent,)}</stringProp>|' \
    "$txn_root/jmeter-plans/producer-baseline.jmx" >"$1"
  grep -q 'name="transactionAbortPercent"' "$1"
}

# committed_count TOPIC BOOTSTRAP [ISOLATION [WAIT_MS]]: the records a consumer with that isolation level (default
# read_committed) reads from TOPIC, counted by Kafka's own console consumer.
# (WAIT_MS, default 30 s, without a record ends it: on a loaded 2-core machine its first fetch alone took over 8 s.)
committed_count() {
  "$txn_root/scripts/kafka" run org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$2" --topic "$1" \
    --from-beginning --isolation-level "${3:-read_committed}" --timeout-ms "${4:-30000}" 2>&1 >/dev/null |
    sed -n 's/^Processed a total of \([0-9]*\) messages$/\1/p'
}
