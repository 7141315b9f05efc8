#!/usr/bin/env bash
# Transactional producer, end to end: JMeter runs the baseline plan with transactional.id.prefix against the local
# broker; the JTL's committed messages must equal what a read_committed consumer (Kafka's own) reads, aborted
# transactions must be invisible to it, a second test with the same prefix must fence the first (which then fails
# with FENCED and ends by itself), bad settings must stop the test with a clear CONFIG_ERROR, and a hanging
# transaction must be explained by the lag monitor.
# Needs a built jar (scripts/build) and a running broker (scripts/kafka start). About 3 minutes.
set -uo pipefail
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
# shellcheck source=plan.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/plan.sh"
enter_work_dir transactions
verify() { python3 "$root/tests/transactions/checks.py" "$@"; } # verify CHECK ARG...: one of tests/transactions/checks.py
bootstrap="${KAFKA_BOOTSTRAP:-127.0.0.1:9092}"
plan="$out/transactional.jmx"
transaction_plan "$plan" || { echo "FAIL writing $plan"; echo "0 passed, 1 failed"; exit 1; }

# txn_run NAME -J...: the transactional plan (one producer per thread, reliability) with its JTL, log and summary.
txn_run() {
  local name="$1"
  shift
  PLAN="$plan" baseline_plan "$name" -Jkafka.bootstrap="$bootstrap" -Jproducer.scope=thread -Jpolicy=reliability \
    -Jacks=all -Jtopic.partitions=4 -Jrecord.size=100 "$@" >"$out/$name.out" 2>&1
}

# 50 % aborts: 2 threads x 50 transactions of 20 records. JTL: 50 OK + 50 ABORTED rows; Kafka's own read_committed
# consumer sees exactly the OK rows' records; the audit finds them (read_committed) and sees the ABORTED rows' records
# with read_uncommitted only; the summary agrees. (Kafka's consumer is not asked for the read_uncommitted count too:
# each of its reads waits 30 s for a record that does not come, and the audit's second read counts the same.)
aborts() {
  local topic="kafka4-txn-$RANDOM$RANDOM"
  txn_run aborts -Jkafka.topic="$topic" -Jthreads=2 -Jloops=50 -Jmessages.per.sample=20 -Jaudit=true \
    -Jtxn.prefix="kafka4-aborts-$RANDOM" -Jtxn.abort.percent=50 || { tail -n 20 "$out/aborts.out"; return 1; }
  local committed
  committed="$(committed_count "$topic" "$bootstrap")"
  grep -E '^audit of run [0-9a-f-]+: 1000 acked, 1000 found, 0 missing, 0 duplicates, 0 unexpected .*, 1000 aborted \(in aborted transactions: seen with read_uncommitted only\)$' "$out/aborts.out" &&
    grep -E '^transactions: 50 committed \(1000 records\), 50 aborted' "$out/aborts.out" &&
    verify aborts-counted "$out/aborts.jtl" "$out/aborts-summary.json" "$committed"
}

# transaction.samples=5: every fifth sample commits; the others are OK rows in an open transaction, all committed.
multi_sample() {
  local topic="kafka4-txn-$RANDOM$RANDOM"
  txn_run multi -Jkafka.topic="$topic" -Jthreads=1 -Jloops=20 -Jmessages.per.sample=10 -Jtxn.prefix="kafka4-multi-$RANDOM" \
    -Jtxn.samples=5 || { tail -n 20 "$out/multi.out"; return 1; }
  local committed
  committed="$(committed_count "$topic" "$bootstrap")"
  [[ "$committed" == 200 ]] || { echo "read_committed read $committed records, expected 200"; return 1; }
  verify commits-every "$out/multi.jtl" 5 20
}

# Two tests with the same prefix: the second one's producer fences the first's, which fails with FENCED from then on
# (each later sample at once, so it ends by itself) while the second completes.
fencing() {
  local topic="kafka4-txn-$RANDOM$RANDOM" prefix="kafka4-fence-$RANDOM"
  txn_run first -Jkafka.topic="$topic" -Jthreads=1 -Jloops=5000 -Jmessages.per.sample=5 -Jtxn.prefix="$prefix" &
  local first=$!
  wait_for "$out/first.jtl" ",OK," 60 || { echo "the first test sent nothing within 60 s"; kill "$first"; return 1; }
  txn_run second -Jkafka.topic="$topic" -Jthreads=1 -Jloops=20 -Jmessages.per.sample=5 -Jtxn.prefix="$prefix" -Jtopic.create=false
  local second_rc=$?
  wait_exit "$first" 120 || { echo "the fenced test did not end within 120 s"; kill "$first"; return 1; }
  ((second_rc == 0)) && python3 tests/e2e/jtl_check.py "$out/second.jtl" --rows 20 --all-ok &&
    verify fenced-from-then-on "$out/first.jtl"
}

# A hanging transaction: Kafka's own perf tool writes 50 committed records, then a second one begins a transaction
# and is stopped within it (a producer that died mid-transaction), so the partition's last-stable offset stays at 50
# while its high watermark is past it. JMeter runs a read_committed consumer and the lag monitor with
# isolation.level=read_committed: the consumer reads exactly the 50 committed records and says at its end (jmeter.log)
# that an open transaction holds the rest, and every lag sample passes with lag 0 and says that an open transaction
# holds the last-stable offset at 50 below the high watermark (held for several samples in a row), instead of leaving
# a lag no consumer can work off unexplained.
hanging() {
  local topic="kafka4-hanging-$RANDOM$RANDOM" perf
  scripts/kafka perf-producer --bootstrap-server "$bootstrap" --topic "$topic" --num-records 50 --record-size 100 \
    --throughput -1 --producer-props acks=all >"$out/hanging-committed.out" 2>&1 ||
    { tail -n 5 "$out/hanging-committed.out"; return 1; }
  # Started with java directly (not through scripts/kafka), so that $! is the producer's own process.
  java -cp "$(scripts/kafka classpath)" org.apache.kafka.tools.ProducerPerformance --topic "$topic" \
    --num-records 1000000 --record-size 100 --throughput 100 --transactional-id "kafka4-hanging-$RANDOM" \
    --transaction-duration-ms 600000 --producer-props bootstrap.servers="$bootstrap" transaction.timeout.ms=300000 \
    >"$out/hanging-open.out" 2>&1 &
  perf=$!
  # Its first progress line (after 5 s) says records were sent within the open transaction.
  if ! wait_for "$out/hanging-open.out" "records sent" 60; then
    kill "$perf"
    echo "the transactional perf producer sent nothing within 60 s"
    return 1
  fi
  kill "$perf"
  wait "$perf"
  scripts/jmeter -n -t jmeter-plans/end-to-end.jmx -l "$out/hanging.jtl" -j "$out/hanging.log" \
    -Jjmeter.save.saveservice.output_format=csv -Jkafka.bootstrap="$bootstrap" -Jkafka.topic="$topic" \
    -Jkafka.group="kafka4-hanging-$RANDOM" -Jproducers=0 -Jconsumers=1 -Jduration=7 -Jdrain=0 -Jlag.delay=3 \
    -Jlag.interval.ms=1000 -Jconsumer.extra.properties=isolation.level=read_committed \
    -Jlag.extra.properties=isolation.level=read_committed -Jkafka.consumer.summary.file="$out/hanging-consumer.json" \
    >"$out/hanging.out" 2>&1 || { tail -n 20 "$out/hanging.out"; return 1; }
  grep -E "WARN .*isolation.level=read_committed read to the last-stable offset, and an open transaction holds records behind it in 1 partition\(s\): 0 at 50 while its high watermark is [0-9]+" \
    "$out/hanging.log" || { echo "the consumer did not say what held it at offset 50"; return 1; }
  verify hanging-explained "$out/hanging.jtl" "$out/hanging-consumer.json"
}

# bad_input NAME CODE WORD -J...: the test stops at once with one clear failed sample per thread.
bad_input() {
  local name="$1" code="$2" word="$3"
  shift 3
  txn_run "$name" -Jkafka.topic="kafka4-txn-bad" -Jthreads=1 -Jloops=5 "$@"
  stopped_at_first_failure "$out/$name.jtl" "$code" "$word"
}

check "50 % aborts: JTL committed messages = read_committed count, aborted ones invisible, audit clean" aborts
check "transaction.samples=5: every fifth sample commits" multi_sample
check "same prefix twice: the first test fails with FENCED and ends by itself, the second completes" fencing
check "prefix with acks=1: CONFIG_ERROR" bad_input acks1 CONFIG_ERROR "acks=all" -Jtxn.prefix=kafka4-bad -Jpolicy=capacity -Jacks=1
check "transaction.samples=0: CONFIG_ERROR" bad_input samples0 CONFIG_ERROR "transaction.samples" -Jtxn.prefix=kafka4-bad -Jtxn.samples=0
check "transaction.samples=-1: CONFIG_ERROR" bad_input samples-1 CONFIG_ERROR "transaction.samples" -Jtxn.prefix=kafka4-bad -Jtxn.samples=-1
check "transaction.samples=text: CONFIG_ERROR" bad_input samples-text CONFIG_ERROR "transaction.samples" -Jtxn.prefix=kafka4-bad -Jtxn.samples=text
check "transaction.abort.percent=101: CONFIG_ERROR" bad_input percent101 CONFIG_ERROR "0 to 100" -Jtxn.prefix=kafka4-bad -Jtxn.abort.percent=101
check "transaction.timeout.ms above the broker's transaction.max.timeout.ms: CONFIG_ERROR naming both and the limit" \
  bad_input timeout-above CONFIG_ERROR "transaction.timeout.ms is 900001 ms, above the broker's transaction.max.timeout.ms, 900000 ms" \
  -Jtxn.prefix=kafka4-bad -Jextra.properties=transaction.timeout.ms=900001
check "transaction.timeout.ms=0: CONFIG_ERROR" bad_input timeout0 CONFIG_ERROR "transaction.timeout.ms: '0' is not valid; use milliseconds from 1000" \
  -Jtxn.prefix=kafka4-bad -Jextra.properties=transaction.timeout.ms=0
check "transaction.timeout.ms=text: CONFIG_ERROR" bad_input timeout-text CONFIG_ERROR "transaction.timeout.ms: 'text' is not valid" \
  -Jtxn.prefix=kafka4-bad -Jextra.properties=transaction.timeout.ms=text
check "a hanging transaction: read_committed reads up to it, the lag sample says what holds the last-stable offset" hanging
summary
