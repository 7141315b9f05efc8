#!/usr/bin/env bash
# End-to-end checks of the local stack against real processes: scripts/kafka (single node, 3-node cluster,
# secure listeners, tools) and scripts/jmeter. Prints one "PASS name" / "FAIL name: why" line per check and
# ends with "N passed, N failed"; exits non-zero when a check failed. Takes ~2-3 minutes on 2 cores.
#
# Leaves Kafka as it found it: nodes that were running before are restarted at the end, the rest stopped.
# STACK_KEEP_RUNNING=1 leaves the single node running (with --secure) at the end.
# Command output of every check is kept in target/stack-tests/<check>.log.
set -uo pipefail # no -e: a failing check is recorded, and the suite goes on

ROOT="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd -P)"
KAFKA="$ROOT/scripts/kafka"
JMETER="$ROOT/scripts/jmeter"
WORK="$ROOT/target/stack-tests"
CLUSTER_BOOTSTRAP="127.0.0.1:19092,127.0.0.1:20092,127.0.0.1:21092"
SECURE_DIR="$ROOT/target/kafka/secure"
RUN_ID="$(date +%s)-$$"
PERF_TOPIC="stack-perf-$RUN_ID"
RF3_TOPIC="stack-rf3-$RUN_ID"
export LANG=C LC_ALL=C

passed=0
failed=0
pass() {
  echo "PASS $1"
  passed=$((passed + 1))
}
fail() {
  echo "FAIL $1: $2 (log: target/stack-tests/$1.log)"
  failed=$((failed + 1))
}

# check NAME FUNCTION: run FUNCTION with its output in WORK/NAME.log; FUNCTION sets WHY when it fails.
check() {
  local name="$1" fn="$2"
  WHY="exit status non-zero"
  if "$fn" >"$WORK/$name.log" 2>&1; then pass "$name"; else fail "$name" "$WHY"; fi
}

# running NODE: scripts/kafka status says NODE runs (single|node1|node2|node3).
# (status is captured first: `status | grep -q` could fail on SIGPIPE under pipefail)
running() {
  local s
  s="$("$KAFKA" status 2>/dev/null)"
  grep -Eq "^$1 +running" <<<"$s"
}
single_mode() {
  local s
  s="$("$KAFKA" status 2>/dev/null)"
  sed -n 's/^single *running (pid [0-9]*) \([a-z]*\).*/\1/p' <<<"$s"
}

# tool_output WHAT COMMAND...: runs COMMAND, keeps its output in OUT and prints it (into the check's log); when
# COMMAND fails, WHY says that WHAT exited non-zero, and so does the status.
tool_output() {
  local what="$1" rc=0
  shift
  OUT="$("$@")" || rc=$?
  printf '%s\n' "$OUT"
  ((rc == 0)) || WHY="$what exited non-zero (status $rc)"
  return "$rc"
}

# ------------------------------------------------------------------------------------------------- JMeter

t_jmeter_version() {
  local out
  out="$("$JMETER" --version 2>&1)"
  printf '%s\n' "$out"
  WHY="--version output lacks 5.6.3"
  grep -q "5\.6\.3" <<<"$out"
}

t_jmeter_headless_report() {
  local dir="$WORK/jmeter"
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$dir" && "$JMETER" -n -t "$ROOT/tests/stack/minimal.jmx" -l out.jtl -j jmeter.log -e -o report) || {
    WHY="jmeter exited non-zero"
    return 1
  }
  WHY="report/index.html missing"
  [[ -f "$dir/report/index.html" ]] || return 1
  # 2 threads x 5 loops of JavaTest: a header and 10 successful rows
  local rows ok
  rows="$(tail -n +2 "$dir/out.jtl" | grep -c ',java-test,')"
  ok="$(tail -n +2 "$dir/out.jtl" | grep -c ',java-test,.*,true,')"
  WHY="JTL has $rows java-test rows ($ok successful), expected 10 (10)"
  [[ "$rows" == 10 && "$ok" == 10 ]]
}

# The sampler jar (built by java-sampler/) is copied into lib/ext, replacing older copies.
t_jmeter_sampler_jar() {
  local newest ext="$ROOT/target/jmeter/lib/ext"
  newest="$(find "$ROOT/java-sampler/target" -maxdepth 1 -name 'jmeter-kafka-native-*.jar' \
    ! -name '*-sources.jar' ! -name '*-javadoc.jar' ! -name '*-tests.jar' -printf '%T@ %p\n' 2>/dev/null |
    sort -n | tail -n1 | cut -d' ' -f2-)"
  if [[ -z "$newest" ]]; then
    echo "no java-sampler/target/jmeter-kafka-native-*.jar: only checking that lib/ext has none"
    WHY="lib/ext has a sampler jar although none was built"
    ! compgen -G "$ext/jmeter-kafka-native-*.jar" >/dev/null
    return
  fi
  # plant an "older version" that must disappear
  cp "$newest" "$ext/jmeter-kafka-native-0.0.0-stale.jar"
  "$JMETER" --version >/dev/null 2>&1 || true
  local copies
  copies="$(compgen -G "$ext/jmeter-kafka-native-*.jar" | wc -l)"
  ls -l "$ext"
  WHY="expected exactly 1 jmeter-kafka-native jar in lib/ext, found $copies"
  [[ "$copies" == 1 ]] || return 1
  WHY="lib/ext copy differs from $newest"
  cmp -s "$newest" "$ext/$(basename "$newest")"
}

# ------------------------------------------------------------------------------------------------- single node

t_single_start() {
  "$KAFKA" start || return 1
  WHY="status does not show the single node running"
  running single
}

t_single_start_idempotent() {
  local out
  out="$("$KAFKA" start 2>&1)" || {
    WHY="second start exited non-zero: $out"
    return 1
  }
  printf '%s\n' "$out"
  WHY="second start did not say 'already running'"
  grep -q "already running" <<<"$out"
}

t_broker_log_written() {
  local log="$ROOT/target/kafka/single/logs/server.log"
  WHY="$log missing or without 'Kafka Server started' (log4j binding not working?)"
  [[ -s "$log" ]] && grep -q "Kafka Server started" "$log"
}

# The topic is created, then described with 16 partitions, each with a leader. A broker answers a describe from its
# metadata cache, which can trail the controller's commit by seconds on a loaded machine (seen at load 14: "does
# not exist as expected" right after "Created topic"), so the describe is retried for up to 60 s.
t_topic_16_partitions() {
  "$KAFKA" topics --create --topic "$PERF_TOPIC" --partitions 16 --replication-factor 1 || return 1
  local out="" tries
  WHY="describe does not show PartitionCount: 16 with a leader for each partition within 60 s"
  for ((tries = 0; tries < 30; tries++)); do
    out="$("$KAFKA" topics --describe --topic "$PERF_TOPIC" 2>&1)"
    if grep -q "PartitionCount: 16" <<<"$out" && [[ "$(grep -Ec 'Leader: [0-9]+' <<<"$out")" == 16 ]]; then
      printf '%s\n' "$out"
      return 0
    fi
    sleep 2
  done
  printf '%s\n' "$out"
  return 1
}

PERF_LINE_RE='^20000 records sent, [0-9]+\.[0-9]+ records/sec \([0-9]+\.[0-9]{2} MB/sec\), [0-9]+\.[0-9]{2} ms avg latency, [0-9]+\.[0-9]{2} ms max latency, [0-9]+ ms 50th, [0-9]+ ms 95th, [0-9]+ ms 99th, [0-9]+ ms 99\.9th\.$'

t_perf_producer() {
  local last
  tool_output perf-producer "$KAFKA" perf-producer --topic "$PERF_TOPIC" --num-records 20000 --record-size 200 \
    --throughput -1 || return 1
  last="$(tail -n1 <<<"$OUT")"
  WHY="final line not in the expected form: $last"
  [[ "$last" =~ $PERF_LINE_RE ]]
}

# consumed_messages OUTPUT: the data.consumed.in.nMsg column of ConsumerPerformance's data row.
consumed_messages() {
  awk -F', *' '
    /data\.consumed\.in\.nMsg/ { for (i = 1; i <= NF; i++) if ($i == "data.consumed.in.nMsg") col = i; next }
    col && NF > 1 { print $col; exit }' <<<"$1"
}

t_perf_consumer() {
  local n
  tool_output perf-consumer "$KAFKA" perf-consumer --topic "$PERF_TOPIC" --messages 20000 --timeout 20000 || return 1
  n="$(consumed_messages "$OUT")"
  WHY="data.consumed.in.nMsg is '$n', expected 20000"
  [[ "$n" == 20000 ]]
}

# ------------------------------------------------------------------------------------------------- 3 nodes

t_cluster_start() {
  "$KAFKA" start --nodes 3 || return 1
  WHY="status does not show node1..node3 running"
  running node1 && running node2 && running node3
}

t_cluster_three_brokers() {
  local out id
  out="$("$KAFKA" run org.apache.kafka.tools.BrokerApiVersionsCommand --bootstrap-server "$CLUSTER_BOOTSTRAP" |
    grep -E '^[^ ]+ \(id: ')"
  printf '%s\n' "$out"
  for id in 1 2 3; do
    WHY="broker id $id missing from the cluster metadata"
    grep -q "(id: $id " <<<"$out" || return 1
  done
  out="$("$KAFKA" quorum --bootstrap-server "$CLUSTER_BOOTSTRAP" describe --status)"
  printf '%s\n' "$out"
  WHY="quorum has no leader or not 3 voters"
  grep -Eq '^LeaderId: +[123]$' <<<"$out" && [[ "$(grep -o '"id": [0-9]*' <<<"$(grep CurrentVoters <<<"$out")" | sort -u | wc -l)" == 3 ]]
}

t_cluster_rf3_in_sync() {
  "$KAFKA" topics --bootstrap-server "$CLUSTER_BOOTSTRAP" --create --topic "$RF3_TOPIC" --partitions 3 || return 1
  local out urp deadline=$((SECONDS + 20))
  # ISR converge within moments; allow a little time on a busy machine
  while :; do
    urp="$("$KAFKA" topics --bootstrap-server "$CLUSTER_BOOTSTRAP" --describe --under-replicated-partitions --topic "$RF3_TOPIC")"
    [[ -z "$urp" ]] && break
    ((SECONDS < deadline)) || {
      WHY="under-replicated partitions remain: $urp"
      return 1
    }
    sleep 1
  done
  out="$("$KAFKA" topics --bootstrap-server "$CLUSTER_BOOTSTRAP" --describe --topic "$RF3_TOPIC")"
  printf '%s\n' "$out"
  WHY="topic is not RF 3 with min.insync.replicas=2 (cluster defaults)"
  grep -q "ReplicationFactor: 3" <<<"$out" && grep -q "min.insync.replicas=2" <<<"$out" || return 1
  local isr3
  isr3="$(grep -cE 'Isr: [123],[123],[123]([^,0-9]|$)' <<<"$out")"
  WHY="$isr3 of 3 partitions have a 3-broker ISR"
  [[ "$isr3" == 3 ]]
}

# acks=all against min.insync.replicas=2, and --bootstrap-server translated for ProducerPerformance
t_cluster_produce_acks_all() {
  local last
  tool_output perf-producer "$KAFKA" perf-producer --bootstrap-server "$CLUSTER_BOOTSTRAP" --topic "$RF3_TOPIC" \
    --num-records 2000 --record-size 100 --throughput -1 --producer-props acks=all || return 1
  last="$(tail -n1 <<<"$OUT")"
  WHY="unexpected final line: $last"
  [[ "$last" == "2000 records sent, "* ]]
}

t_cluster_stop() {
  "$KAFKA" stop --nodes 3 || return 1
  WHY="a cluster node still runs after stop --nodes 3"
  ! running node1 && ! running node2 && ! running node3 || return 1
  WHY="stop --nodes 3 also stopped the single node"
  running single
}

# ------------------------------------------------------------------------------------------------- secure

t_secure_refused_while_plain() {
  local out
  if out="$("$KAFKA" start --secure 2>&1)"; then
    printf '%s\n' "$out"
    WHY="start --secure succeeded although the node runs without secure listeners"
    return 1
  fi
  printf '%s\n' "$out"
  WHY="refusal does not tell to stop first: $out"
  grep -q "scripts/kafka stop" <<<"$out"
}

t_secure_start() {
  if running single && [[ "$(single_mode)" != secure ]]; then
    "$KAFKA" stop --nodes 1 || return 1
  fi
  "$KAFKA" start --secure || return 1
  local f
  for f in ca.pem client.properties credentials.env librdkafka.properties; do
    WHY="$SECURE_DIR/$f missing"
    [[ -s "$SECURE_DIR/$f" ]] || return 1
  done
  WHY="ca.pem is not a PEM certificate"
  grep -q "BEGIN CERTIFICATE" "$SECURE_DIR/ca.pem"
}

t_secure_scram_ok() {
  local out
  out="$("$KAFKA" topics --bootstrap-server 127.0.0.1:9095 --command-config "$SECURE_DIR/client.properties" --list 2>&1)"
  local rc=$?
  printf '%s\n' "$out"
  WHY="SCRAM-SHA-512 over SASL_SSL failed (exit $rc)"
  ((rc == 0)) || return 1
  WHY="topic list over SASL_SSL lacks $PERF_TOPIC"
  grep -qx "$PERF_TOPIC" <<<"$out"
}

t_secure_plain_ok() {
  "$KAFKA" topics --bootstrap-server 127.0.0.1:9095 --command-config "$SECURE_DIR/client-plain.properties" --list
}

t_secure_wrong_password() {
  local props="$WORK/wrong-password.properties" out
  sed 's/password="[^"]*"/password="not-the-password"/' "$SECURE_DIR/client.properties" >"$props"
  if out="$("$KAFKA" topics --bootstrap-server 127.0.0.1:9095 --command-config "$props" --list 2>&1)"; then
    printf '%s\n' "$out"
    WHY="a wrong password was accepted"
    return 1
  fi
  printf '%s\n' "$out"
  WHY="no authentication error in the output"
  grep -Eq "SaslAuthenticationException|Authentication failed" <<<"$out"
}

# ------------------------------------------------------------------------------------------------- stop

t_stop_all() {
  "$KAFKA" stop || return 1
  local left
  left="$(pgrep -af -- "$ROOT/target/kafka" || true)"
  WHY="processes left: $left"
  [[ -z "$left" ]] || return 1
  WHY="pid files left"
  ! compgen -G "$ROOT/target/kafka/*/kafka.pid" >/dev/null && ! compgen -G "$ROOT/target/kafka/cluster/*/kafka.pid" >/dev/null
}

# ------------------------------------------------------------------------------------------------- main

main() {
  rm -rf "$WORK"
  mkdir -p "$WORK"
  # what ran before the suite, to leave things as found
  local had_single="" had_cluster=0
  running single && had_single="$(single_mode)"
  running node1 && had_cluster=1

  check jmeter_version t_jmeter_version
  check jmeter_headless_report t_jmeter_headless_report
  check jmeter_sampler_jar t_jmeter_sampler_jar

  if [[ "$had_single" == secure ]]; then "$KAFKA" stop --nodes 1 >/dev/null 2>&1; fi # test the plain start
  check single_start t_single_start
  check single_start_idempotent t_single_start_idempotent
  check broker_log_written t_broker_log_written
  check topic_16_partitions t_topic_16_partitions
  check perf_producer t_perf_producer
  check perf_consumer t_perf_consumer

  check cluster_start t_cluster_start
  check cluster_three_brokers t_cluster_three_brokers
  check cluster_rf3_in_sync t_cluster_rf3_in_sync
  check cluster_produce_acks_all t_cluster_produce_acks_all
  "$KAFKA" topics --bootstrap-server "$CLUSTER_BOOTSTRAP" --delete --topic "$RF3_TOPIC" >/dev/null 2>&1 || true
  check cluster_stop t_cluster_stop

  check secure_refused_while_plain t_secure_refused_while_plain
  check secure_start t_secure_start
  check secure_scram_ok t_secure_scram_ok
  check secure_plain_ok t_secure_plain_ok
  check secure_wrong_password t_secure_wrong_password
  # the suite's topics are throw-away
  "$KAFKA" topics --delete --topic "$PERF_TOPIC" >/dev/null 2>&1 || true

  check stop_all t_stop_all

  # leave Kafka as found (or running, when asked)
  if [[ "${STACK_KEEP_RUNNING:-0}" == 1 || "$had_single" == secure ]]; then
    "$KAFKA" start --secure >/dev/null 2>&1 || echo "warning: could not restart the single node" >&2
  elif [[ "$had_single" == plain ]]; then
    "$KAFKA" start >/dev/null 2>&1 || echo "warning: could not restart the single node" >&2
  fi
  if ((had_cluster)); then
    "$KAFKA" start --nodes 3 >/dev/null 2>&1 || echo "warning: could not restart the 3-node cluster" >&2
  fi

  echo "$passed passed, $failed failed"
  ((failed == 0))
}

main "$@"
