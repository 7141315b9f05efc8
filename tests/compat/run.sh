#!/usr/bin/env bash
# A && B || { report; return 1; } is meant: the report runs when any check failed.
# shellcheck disable=SC2015
# Broker compatibility: the oldest (3.7.x) and the newest Kafka release (the stack's default, stack/kafka/pom.xml)
# each run as a single node of their own (scripts/kafka --port-base, away from the shared broker on 9092-9095 and the
# 3-node cluster), and JMeter drives the producer with the audit, the consumer and a transactional producer against
# each; the JTLs, the summaries and the topic's offsets must agree. A release the shared single node (127.0.0.1:9092)
# already runs is tested there instead of starting it a second time. Stops what it started and prints each broker's
# time. Needs a built jar (scripts/build).
# COMPAT_VERSIONS (default "3.7.2 <the default>") and COMPAT_PORT_BASE (default 12092: below the ephemeral port
# range 32768-60999, where a client connection's local port could hold it; each version takes the next
# block of 100 ports) override the choice.
set -uo pipefail
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
# shellcheck source=../../scripts/lib/common.sh source-path=SCRIPTDIR
source "$root/scripts/lib/common.sh"
# shellcheck source=../transactions/plan.sh source-path=SCRIPTDIR
source "$root/tests/transactions/plan.sh"
enter_work_dir compat
transaction_plan "$out/transactional.jmx" || exit 1

# The stack's default is the newest release the project supports.
newest="$(pom_property stack/kafka/pom.xml kafka.version)"
read -r -a versions <<<"${COMPAT_VERSIONS:-3.7.2 $newest}"
# The release of the shared single node, when it runs (scripts/test's broker, or one a developer started) and this
# suite can reach it (it may run in another network namespace).
shared="$(scripts/kafka status --nodes 1 2>/dev/null |
  sed -n 's/^single *running (pid [0-9]*) [a-z+]*, Kafka \([0-9.]*\) .*/\1/p')"
port_open 9092 || shared=""
port_base="${COMPAT_PORT_BASE:-12092}"
records_per_run=10000
started=() # "version port" of the nodes this suite started, for the stop at exit

stop_started() {
  local entry
  for entry in ${started[@]+"${started[@]}"}; do
    # shellcheck disable=SC2086 # "version port" on purpose
    set -- $entry
    KAFKA_VERSION="$1" scripts/kafka stop --port-base "$2" >/dev/null 2>&1 || true
  done
}
trap stop_started EXIT

# broker VERSION PORT: a fresh single node (old data of another version could not be read by an older one).
broker() {
  started+=("$1 $2")
  if KAFKA_VERSION="$1" scripts/kafka reset --port-base "$2" >"$out/broker-$1.out" 2>&1 &&
    KAFKA_VERSION="$1" scripts/kafka start --port-base "$2" >>"$out/broker-$1.out" 2>&1; then
    grep "ready" "$out/broker-$1.out"
  else
    tail -n 30 "$out/broker-$1.out"
    return 1
  fi
}

# producer VERSION PORT TOPIC: the baseline plan, batch samples, reliability and the audit: every acked message in the
# topic exactly once.
producer() {
  local v="$1" port="$2" topic="$3" name="producer-$1"
  baseline_plan "$name" -Jkafka.bootstrap="127.0.0.1:$port" -Jkafka.topic="$topic" -Jthreads=2 -Jloops=100 \
    -Jmessages.per.sample=50 -Jrecord.size=200 -Jtopic.partitions=4 -Jpolicy=reliability -Jacks=all -Jaudit=true \
    >"$out/$name.out" 2>&1
  python3 tests/e2e/jtl_check.py "$out/$name.jtl" --rows 200 --messages "$records_per_run" --all-ok \
    --summary "$out/$name-summary.json" &&
    grep -E "^audit of run [0-9a-f-]+: $records_per_run acked, $records_per_run found, 0 missing, 0 duplicates, 0 unexpected" "$out/$name.out" &&
    [[ "$(topic_messages "$topic" "127.0.0.1:$port")" == "$records_per_run" ]] || {
    echo "Kafka $v: topic $topic holds $(topic_messages "$topic" "127.0.0.1:$port") messages, expected $records_per_run"
    tail -n 20 "$out/$name.out"
    return 1
  }
}

# consumer VERSION PORT TOPIC: a fresh group reads the producer's topic from the start, every record once.
consumer() {
  local v="$1" port="$2" topic="$3" name="consumer-$1"
  scripts/jmeter -n -t jmeter-plans/consumer-throughput.jmx -l "$out/$name.jtl" -j "$out/$name.log" \
    -Jkafka.bootstrap="127.0.0.1:$port" -Jkafka.topic="$topic" -Jkafka.group="compat-$v-$RANDOM" -Jthreads=2 \
    -Jpoll.timeout.ms=2000 -Jduration=60 -Jjmeter.save.saveservice.output_format=csv \
    -Jkafka.consumer.summary.file="$out/$name-summary.json" >"$out/$name.out" 2>&1
  python3 tests/consumer/check.py "$out/$name.jtl" --consumer-summary "$out/$name-summary.json" \
    --records "$records_per_run" || {
    tail -n 20 "$out/$name.out"
    return 1
  }
}

# transactional VERSION PORT: 40 transactions of 10 records, half aborted on purpose: a read_committed consumer
# (Kafka's own) reads exactly the committed ones, and the JTL says the same.
transactional() {
  local v="$1" port="$2" topic="compat-txn-$RANDOM$RANDOM" name="txn-$1"
  PLAN="$out/transactional.jmx" baseline_plan "$name" -Jkafka.bootstrap="127.0.0.1:$port" -Jkafka.topic="$topic" \
    -Jthreads=2 -Jloops=20 -Jmessages.per.sample=10 -Jrecord.size=100 -Jtopic.partitions=4 -Jproducer.scope=thread \
    -Jpolicy=reliability -Jacks=all -Jtxn.prefix="compat-$v-$RANDOM" -Jtxn.abort.percent=50 >"$out/$name.out" 2>&1
  local committed
  committed="$(committed_count "$topic" "127.0.0.1:$port")"
  grep -E '^transactions: 20 committed \(200 records\), 20 aborted' "$out/$name.out" &&
    [[ "$(grep -c ',ABORTED,' "$out/$name.jtl")" == 20 ]] && [[ "$committed" == 200 ]] || {
    echo "Kafka $v: read_committed read '$committed' records, expected 200"
    tail -n 20 "$out/$name.out"
    return 1
  }
}

times=()
i=0
for v in "${versions[@]}"; do
  port=$((port_base + 100 * i))
  i=$((i + 1))
  t0=$SECONDS
  where="start, runs, stop"
  if [[ "$v" == "$shared" ]]; then
    port=9092
    where="runs on the shared node"
    echo "Kafka $v: the shared single node on 127.0.0.1:$port runs it"
    up=0
  else
    # check counts and prints, and always succeeds: the broker's own status decides whether its runs are tried.
    broker "$v" "$port"
    up=$?
    check "Kafka $v on 127.0.0.1:$port starts" test "$up" = 0
  fi
  if ((up == 0)); then
    topic="compat-$RANDOM$RANDOM"
    check "Kafka $v: producer through JMeter, audited: $records_per_run acked = found = topic offsets" \
      producer "$v" "$port" "$topic"
    check "Kafka $v: consumer through JMeter reads all $records_per_run records" consumer "$v" "$port" "$topic"
    check "Kafka $v: transactional producer through JMeter, 50 % aborted: read_committed sees the 200 committed" \
      transactional "$v" "$port"
  fi
  [[ "$v" == "$shared" ]] || KAFKA_VERSION="$v" scripts/kafka stop --port-base "$port" >/dev/null 2>&1
  times+=("Kafka $v: $((SECONDS - t0)) s ($where)")
done
printf '%s\n' "${times[@]}"
summary
