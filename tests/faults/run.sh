#!/usr/bin/env bash
# Fault suite on the real 3-node cluster (scripts/kafka start --nodes 3: RF 3, min.insync.replicas 2): the partition
# leader is killed with kill -9 in the middle of a run and restarted, and the numbers must still hold.
#   reliability: policy=reliability with its defaults (acks=all): JMeter exits by itself, JTL OK = acknowledged =
#                found by the audit = in the topic, 0 missing, 0 written although reported failed
#   control:     acks=1, batches, leader killed: the audit's figures add up with what the topic really holds,
#                so it can show loss (its "missing" is printed: the negative control)
#   read-back:   the audit on demand (scripts/audit) with one broker down finds every message, several times
#   fresh:       on a cluster where no group has committed yet (no __consumer_offsets), a new group with 3 consumer
#                threads reads all 1,000 records of 6 partitions (the committed-offset fetch meets NOT_COORDINATOR)
#   consumer failover: a slow group (3 threads, 2 records per sample, 30 ms think time, stop.on.empty) reads 3,000
#                records of 6 partitions while the leader of partition 0, then the group's coordinator, is killed
#                5 s in: it reads 3,000 of 3,000, every partition to its end offset, no failed sample
#   experiment: scripts/experiment failover --quick: for policy=capacity acks=1 and policy=reliability, the busiest
#                partition's leader killed and restarted, the window, p99s, audit figures and time to full ISR reported
#                (reliability: nothing lost, nothing failed-but-written); a kill command that fails and a 1-broker
#                cluster (FAILOVER_SINGLE_BOOTSTRAP, default 127.0.0.1:9092) refused
#   transaction coordinator: a transactional test (3 threads, 5 samples per transaction) while the coordinator of its
#                first thread's transactional.id is killed and restarted: read_committed sees every committed record
#                once and none of a failed transaction, each failed sample names its cause, the last 8 s are all OK
# Starts the 3 nodes if they are not running, from empty data so the fresh-cluster case is real (and stops them at
# the end if it started them). Needs a built jar. `tests/faults/run.sh consumer` runs only the consumer checks
# (fresh and failover), `tests/faults/run.sh experiment` only the failover experiment's, `tests/faults/run.sh
# transactions` only the transaction coordinator's.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 1
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$root/tests/lib/checks.sh"
# shellcheck source=../transactions/plan.sh source-path=SCRIPTDIR
source "$root/tests/transactions/plan.sh"
verify() { python3 "$root/tests/faults/checks.py" "$@"; } # verify CHECK ARG...: one of tests/faults/checks.py

suite_start=$SECONDS
only="${1:-all}"
[[ "$only" == all || "$only" == consumer || "$only" == experiment || "$only" == transactions ]] ||
  { echo "usage: tests/faults/run.sh [consumer|experiment|transactions]" >&2; exit 2; }
out="$root/target/faults"
rm -rf "$out"
mkdir -p "$out"
bootstrap="127.0.0.1:19092,127.0.0.1:20092,127.0.0.1:21092"
started=0
if ! scripts/kafka status --nodes 3 >/dev/null 2>&1; then started=1; fi
stop_cluster() { if [[ $started == 1 ]]; then scripts/kafka stop --nodes 3 >/dev/null 2>&1 || true; fi; }
trap stop_cluster EXIT
# A cluster this suite starts starts empty: the first consumer group then meets a coordinator that does not exist yet.
if [[ $started == 1 ]]; then rm -rf "$root/target/kafka/cluster"; fi
if ! scripts/kafka start --nodes 3 >"$out/start.log" 2>&1; then
  cat "$out/start.log"
  echo "0 passed, 1 failed"
  exit 1
fi

topics() { scripts/kafka topics --bootstrap-server 127.0.0.1:19092 "$@"; }

# The node id leading partition 0 of topic $1.
leader_of() {
  topics --describe --topic "$1" 2>/dev/null | sed -nE 's/.*Partition: 0[[:space:]].*Leader: ([0-9]+).*/\1/p' | head -n 1
}

# Messages in topic $1: the sum of its partitions' end offsets (the topic is new, so it holds only this run).
topic_messages() {
  scripts/kafka run org.apache.kafka.tools.GetOffsetShell --bootstrap-server "$bootstrap" --topic "$1" 2>/dev/null |
    awk -F: '{ n += $3 } END { print n + 0 }'
}

new_topic() {
  topics --create --topic "$1" --partitions 3 --replication-factor 3 >/dev/null 2>&1
}

# kill_later NODE DELAY_S DOWN_S NAME: in the background, kill -9 node NODE after DELAY_S, restart it DOWN_S later.
kill_later() {
  local node="$1" delay="$2" down="$3" name="$4"
  (
    sleep "$delay"
    kill -9 "$(cat "$root/target/kafka/cluster/node$node/kafka.pid")" 2>/dev/null
    echo "node $node killed at $(date +%T.%N)" >"$out/$name-kill.txt"
    sleep "$down"
    # Only the killed node is started; a slow start on a loaded machine gets 3 minutes, not the default 60 s.
    KAFKA_START_TIMEOUT=180 scripts/kafka start --nodes 3 >>"$out/$name-kill.txt" 2>&1
  ) &
  killer=$!
}

# kill_when_reading NODE JTL DELAY_S DOWN_S NAME: kill_later, but DELAY_S counted from the first sample in JTL (JMeter's
# start takes from 3 s to 45 s on a loaded machine; waits at most 3 minutes for it).
kill_when_reading() {
  local node="$1" jtl="$2" delay="$3" down="$4" name="$5" i
  (
    for ((i = 0; i < 360; i++)); do
      [[ -f "$jtl" && "$(wc -l <"$jtl")" -ge 2 ]] && break
      sleep 0.5
    done
    sleep "$delay"
    kill -9 "$(cat "$root/target/kafka/cluster/node$node/kafka.pid")" 2>/dev/null
    echo "node $node killed at $(date +%T.%N), ${delay} s after the first sample" >"$out/$name-kill.txt"
    sleep "$down"
    KAFKA_START_TIMEOUT=180 scripts/kafka start --nodes 3 >>"$out/$name-kill.txt" 2>&1
  ) &
  killer=$!
}

# leader_killed_later TOPIC DELAY DOWN NAME: creates TOPIC, then kill_later the leader of its partition 0.
leader_killed_later() {
  new_topic "$1" || return 1
  local leader
  leader="$(leader_of "$1")"
  [[ -n "$leader" ]] || { echo "no leader found for $1"; return 1; }
  kill_later "$leader" "$2" "$3" "$4"
}

# [PLAN=FILE] run_plan NAME ARGS...: the baseline plan (or PLAN) against the cluster, timed; exit code and seconds in NAME.rc / NAME.secs.
run_plan() {
  local name="$1"
  shift
  local start=$SECONDS
  scripts/jmeter -n -t "${PLAN:-jmeter-plans/producer-baseline.jmx}" -l "$out/$name.jtl" -j "$out/$name.log" \
    -Jjmeter.save.saveservice.output_format=csv -Jjmeter.save.saveservice.sample_count=true \
    -Jkafka.bootstrap="$bootstrap" -Jkafka.summary.file="$out/$name-summary.json" -Jtopic.create=false "$@" \
    >"$out/$name.out" 2>&1
  echo $? >"$out/$name.rc"
  echo $((SECONDS - start)) >"$out/$name.secs"
}

# figures NAME TOPIC: JTL, summary, audit and topic side by side (one JSON line in NAME-figures.json, printed).
figures() {
  verify figures "$out/$1.jtl" "$out/$1-summary.json" "$(topic_messages "$2")" "$(cat "$out/$1.rc")" \
    "$(cat "$out/$1.secs")" >"$out/$1-figures.json"
  cat "$out/$1-figures.json"
}

field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))' "$@"; }

# 0. The first consumer group of a fresh cluster: 1,000 records on 6 partitions, a new group, 3 threads, static
#    assignment: every record is read, and the summary shows no partition left unread.
fresh_group() {
  local topic="faults-fresh-$RANDOM$RANDOM"
  topics --create --topic "$topic" --partitions 6 --replication-factor 3 >/dev/null 2>&1 || return 1
  scripts/kafka perf-producer --bootstrap-server "$bootstrap" --topic "$topic" --num-records 1000 --record-size 100 \
    --throughput -1 --producer-props acks=all >"$out/fresh-produce.out" 2>&1 || { tail -n 3 "$out/fresh-produce.out"; return 1; }
  scripts/jmeter -n -t jmeter-plans/consumer-throughput.jmx -l "$out/fresh.jtl" -j "$out/fresh.log" \
    -Jjmeter.save.saveservice.output_format=csv -Jkafka.bootstrap="$bootstrap" -Jkafka.topic="$topic" -Jthreads=3 \
    -Jpoll.timeout.ms=3000 -Jduration=60 -Jkafka.consumer.summary.file="$out/fresh-consumer.json" >"$out/fresh.out" 2>&1
  grep -h "partitions read/available\|committed offsets read after" "$out/fresh.out" "$out/fresh.log" | head -n 2
  [[ "$(field "$out/fresh-consumer.json" 'records')" == 1000 ]] ||
    { echo "read $(field "$out/fresh-consumer.json" 'records') of 1000"; return 1; }
  [[ "$(field "$out/fresh-consumer.json" 'unread_partitions')" == "[]" ]] || { echo "partitions left unread"; return 1; }
}

# The node id of the group coordinator of group $1: the leader of its __consumer_offsets partition (Kafka's
# abs(hashCode) % offsets.topic.num.partitions, 50 by default).
coordinator_of() {
  local p
  # Java's String.hashCode (over UTF-16 code units, signed 32 bits), then Kafka's Utils.abs: abs(MIN_VALUE) = 0.
  # Masking with 0x7FFFFFFF instead would pick another partition for every name whose hash is negative.
  p="$(python3 -c '
import sys
h = 0
units = sys.argv[1].encode("utf-16-be")
for i in range(0, len(units), 2):
    h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
signed = h - (1 << 32) if h >= 1 << 31 else h
print(0 if signed == -(1 << 31) else abs(signed) % 50)' "$1")"
  topics --describe --topic __consumer_offsets 2>/dev/null |
    sed -nE "s/.*Partition: ${p}[[:space:]].*Leader: ([0-9]+).*/\1/p" | head -n 1
}

# The consumer plan with a 30 ms think time after each sample: a slow reader, so that a failover happens mid-read.
slow_consumer_plan() {
  verify slow-consumer-plan "$root/jmeter-plans/consumer-throughput.jmx" "$out/consumer-slow.jmx"
}

# 4./5. A slow group reads 3,000 records of 6 partitions (RF 3) while a broker is killed 5 s after the consumers
#    start and restarted 12 s later: $1 = leader (the leader of partition 0) or coordinator (the group's). Every
#    record must be read, every partition to its end offset, with no failed sample; the figures per partition are
#    printed (read / produced).
consumer_failover() {
  local what="$1" topic="faults-cons-$1-$RANDOM$RANDOM" group="faults-cons-$1-$RANDOM$RANDOM" victim name="cons-$1"
  topics --create --topic "$topic" --partitions 6 --replication-factor 3 >/dev/null 2>&1 || return 1
  scripts/kafka perf-producer --bootstrap-server "$bootstrap" --topic "$topic" --num-records 3000 --record-size 100 \
    --throughput -1 --producer-props acks=all >"$out/$name-produce.out" 2>&1 || { tail -n 3 "$out/$name-produce.out"; return 1; }
  [[ -f "$out/consumer-slow.jmx" ]] || slow_consumer_plan || return 1
  if [[ "$what" == leader ]]; then victim="$(leader_of "$topic")"; else victim="$(coordinator_of "$group")"; fi
  [[ -n "$victim" ]] || { echo "no $what found"; return 1; }
  rm -f "$out/$name.jtl"
  kill_when_reading "$victim" "$out/$name.jtl" 5 12 "$name"
  scripts/jmeter -n -t "$out/consumer-slow.jmx" -l "$out/$name.jtl" -j "$out/$name.log" \
    -Jjmeter.save.saveservice.output_format=csv -Jjmeter.save.saveservice.sample_count=true \
    -Jkafka.bootstrap="$bootstrap" -Jkafka.topic="$topic" -Jkafka.group="$group" -Jthreads=3 -Jmax.records=2 \
    -Jpoll.timeout.ms=3000 -Jduration=75 -Jkafka.consumer.summary.file="$out/$name-consumer.json" \
    "-Jkafka.verdict=consumer.unread=0" >"$out/$name.out" 2>&1
  echo $? >"$out/$name.rc"
  wait "$killer"
  head -n 1 "$out/$name-kill.txt"
  scripts/kafka run org.apache.kafka.tools.GetOffsetShell --bootstrap-server "$bootstrap" --topic "$topic" \
    >"$out/$name-offsets.txt" 2>/dev/null
  verify read-through-failover "$out/$name.jtl" "$out/$name-consumer.json" "$out/$name-offsets.txt" "$(cat "$out/$name.rc")" "$what"
}

# 1. policy=reliability with its defaults: 4 threads x 50 samples/s for about 24 s, the leader of partition 0
#    killed 8 s after the start and restarted 8 s later.
reliability() {
  local topic="faults-rel-$RANDOM$RANDOM"
  leader_killed_later "$topic" 8 8 reliability || return 1
  run_plan reliability -Jkafka.topic="$topic" -Jthreads=4 -Jloops=1200 -Jtarget.rate=50 -Jrecord.size=200 \
    -Jpolicy=reliability -Jacks=all -Jaudit=true -Jtimeout.ms= -Jlinger.ms=
  wait "$killer"
  head -n 1 "$out/reliability-kill.txt"
  figures reliability "$topic" >/dev/null
  cat "$out/reliability-figures.json"
  local f="$out/reliability-figures.json"
  [[ "$(field "$f" 'exit')" == 0 ]] || { echo "JMeter exit $(field "$f" 'exit')"; return 1; }
  [[ "$(field "$f" 'audit.get("missing")')" == 0 ]] || { echo "audit: messages missing"; return 1; }
  [[ "$(field "$f" 'audit.get("found_unacked")')" == 0 ]] || { echo "written although reported failed"; return 1; }
  [[ "$(field "$f" 'failed_samples')" == 0 ]] || { echo "failed samples under failover"; return 1; }
  [[ "$(field "$f" 'jtl_ok_messages == acked == audit.get("found") == topic')" == True ]] ||
    { echo "JTL OK, acked, audit found and topic disagree"; return 1; }
}

# 2. Negative control: acks=1, batches of 100, leader killed. Loss is possible, so the check is that the audit's
#    figures are the truth: found + missing = acked, and what it found is what the topic holds.
control() {
  local topic="faults-ctl-$RANDOM$RANDOM"
  leader_killed_later "$topic" 7 8 control || return 1
  run_plan control -Jkafka.topic="$topic" -Jthreads=2 -Jloops=300 -Jtarget.rate=20 -Jmessages.per.sample=100 \
    -Jlinger.ms=5 -Jrecord.size=200 -Jpolicy=capacity -Jacks=1 -Jaudit=true -Jtimeout.ms=3000
  wait "$killer"
  figures control "$topic" >/dev/null
  cat "$out/control-figures.json"
  local f="$out/control-figures.json"
  echo "negative control: the audit reports $(field "$f" 'audit.get("missing")') acknowledged message(s) missing"
  [[ "$(field "$f" 'exit')" == 0 ]] || { echo "JMeter exit $(field "$f" 'exit')"; return 1; }
  [[ "$(field "$f" 'audit.get("complete")')" == True ]] || { echo "the audit did not complete"; return 1; }
  [[ "$(field "$f" 'audit["found"] + audit["missing"] == acked')" == True ]] || { echo "found + missing != acked"; return 1; }
  [[ "$(field "$f" 'audit["found"] + audit["found_unacked"] + audit["duplicates"] == topic')" == True ]] ||
    { echo "the audit's count differs from the topic's"; return 1; }
}

# 3. The audit on demand while one broker is down: 2,000 audited messages, then a broker killed, then
#    scripts/audit three times; every try must find all 2,000 and nothing missing.
read_back() {
  local topic="faults-audit-$RANDOM$RANDOM"
  new_topic "$topic" || return 1
  run_plan readback -Jkafka.topic="$topic" -Jthreads=2 -Jloops=1000 -Jrecord.size=200 -Jpolicy=reliability \
    -Jacks=all -Jaudit=true -Jtimeout.ms=
  local run_id victim ok=0 tries=3 i
  run_id="$(field "$out/readback-summary.json" 'run_id')" || return 1
  victim="$(leader_of "$topic")"
  kill -9 "$(cat "$root/target/kafka/cluster/node$victim/kafka.pid")"
  for i in $(seq 1 $tries); do
    if scripts/audit --bootstrap "$bootstrap" --topic "$topic" --run-id "$run_id" >"$out/readback-audit-$i.out" 2>&1 &&
      grep -q "2000 found, 0 missing" "$out/readback-audit-$i.out"; then
      ok=$((ok + 1))
    fi
    tail -n 1 "$out/readback-audit-$i.out"
  done
  scripts/kafka start --nodes 3 >/dev/null 2>&1
  echo "audit with node $victim down: $ok of $tries tries found all 2000 messages"
  ((ok == tries))
}

# The node id coordinating transactional.id $1, as Kafka's own tool reports it (the id must have been initialised).
txn_coordinator_of() {
  scripts/kafka run org.apache.kafka.tools.TransactionsCommand --bootstrap-server "$bootstrap" describe \
    --transactional-id "$1" 2>/dev/null | awk 'NR == 2 { print $1 }'
}

# 6. The transaction coordinator killed mid-run: 3 threads x 20 samples/s of 10 records for 30 s, 5 samples per
#    transaction, RF 3 (min.insync.replicas 2). 6 s after the first sample the coordinator of the first thread's
#    transactional.id is killed (kill -9), and started again 8 s later. Transactions in flight may fail (the coordinator
#    moves in about 9 s), but what read_committed shows must be exactly the committed ones, and the threads must go on.
#    timeout.ms=5000, shorter than the move: samples and aborts time out while the coordinator is gone, and a
#    thread must get past a failed abort (its next sample starts a new producer) instead of failing to the end.
txn_coordinator() {
  local topic="faults-txn-$RANDOM$RANDOM" prefix="faults-txn-$RANDOM" victim i killer
  new_topic "$topic" || return 1
  [[ -f "$out/transactional.jmx" ]] || transaction_plan "$out/transactional.jmx" || return 1
  rm -f "$out/txn.jtl"
  (
    # The id exists once the first thread's producer has initialised its transactions (its first sample is in the JTL).
    for ((i = 0; i < 360; i++)); do
      [[ -f "$out/txn.jtl" && "$(wc -l <"$out/txn.jtl")" -ge 2 ]] && break
      sleep 0.5
    done
    sleep 6
    victim="$(txn_coordinator_of "$prefix-1")"
    if [[ -z "$victim" ]]; then echo "no coordinator found for $prefix-1" >"$out/txn-kill.txt"; exit 1; fi
    kill -9 "$(cat "$root/target/kafka/cluster/node$victim/kafka.pid")" 2>/dev/null
    echo "node $victim (coordinator of $prefix-1) killed at $(date +%s.%N)" >"$out/txn-kill.txt"
    sleep 8
    KAFKA_START_TIMEOUT=180 scripts/kafka start --nodes 3 >>"$out/txn-kill.txt" 2>&1
  ) &
  killer=$!
  PLAN="$out/transactional.jmx" run_plan txn -Jkafka.topic="$topic" -Jthreads=3 -Jloops=600 -Jtarget.rate=20 \
    -Jmessages.per.sample=10 -Jrecord.size=100 -Jpolicy=reliability -Jacks=all -Jproducer.scope=thread -Jaudit=true \
    -Jtimeout.ms=5000 -Jlinger.ms= -Jtxn.prefix="$prefix" -Jtxn.samples=5
  wait "$killer" || { cat "$out/txn-kill.txt"; return 1; }
  head -n 1 "$out/txn-kill.txt"
  local committed
  committed="$(committed_count "$topic" "$bootstrap" read_committed 15000)"
  find "$root" -maxdepth 1 -name 'hs_err_pid*.log' | grep . && { echo "a JVM crashed"; return 1; }
  verify txn-coordinator-killed "$out/txn.jtl" "$out/txn-summary.json" "$committed" "$(cat "$out/txn.rc")" \
    "$(cat "$out/txn.secs")" "$(sed -nE 's/.* killed at ([0-9.]+)$/\1/p' "$out/txn-kill.txt")" 8
}

# scripts/experiment failover --quick on this cluster, both settings.
failover_experiment() {
  scripts/experiment failover --quick --out "$out/failover" >"$out/failover.out" 2>&1 ||
    { tail -n 5 "$out/failover.out"; return 1; }
  grep -m1 '^\*\*' "$out/failover.out"
  verify failover-published "$out/failover"
}

# A kill command that fails, and a cluster of one broker: refused with the reason.
failover_refused() {
  scripts/experiment failover --quick --kill-cmd "false" --out "$out/failover-bad" >"$out/failover-bad.out" 2>&1
  local rc=$?
  tail -n 1 "$out/failover-bad.out"
  ((rc != 0)) && grep -q "the kill command failed (exit 1)" "$out/failover-bad.out" || return 1
  scripts/experiment failover --quick --bootstrap "${FAILOVER_SINGLE_BOOTSTRAP:-127.0.0.1:9092}" \
    --out "$out/failover-one" >"$out/failover-one.out" 2>&1
  rc=$?
  tail -n 1 "$out/failover-one.out"
  ((rc == 2)) && grep -q "has 1 broker(s) .*a failover needs at least 3" "$out/failover-one.out"
}

if [[ "$only" == transactions ]]; then
  check "transaction coordinator killed and restarted: read_committed = committed records, the threads recover" \
    txn_coordinator
  echo "faults time: $((SECONDS - suite_start)) s"
  summary
  exit
fi
if [[ "$only" == experiment ]]; then
  check "failover experiment --quick: both settings reported, reliability loses nothing" failover_experiment
  check "failover experiment: a failing kill command and a 1-broker cluster refused" failover_refused
  echo "faults time: $((SECONDS - suite_start)) s"
  summary
  exit
fi

check "fresh cluster: a new group with 3 threads reads all 1,000 records (no partition left unread)" fresh_group
check "slow consumer group, leader killed mid-read: 3,000 of 3,000 read, every partition to its end" \
  consumer_failover leader
check "slow consumer group, coordinator killed mid-read: 3,000 of 3,000 read, every partition to its end" \
  consumer_failover coordinator
if [[ "$only" == consumer ]]; then
  echo "faults time: $((SECONDS - suite_start)) s"
  summary
  exit
fi
check "reliability defaults, leader killed and restarted: JTL OK = acked = audit found = topic, 0 missing" reliability
check "negative control (acks=1, batches, leader killed): the audit's figures match the topic" control
check "audit read-back with one broker down: every try finds all messages" read_back
check "transaction coordinator killed and restarted: read_committed = committed records, the threads recover" \
  txn_coordinator
check "failover experiment --quick: both settings reported, reliability loses nothing" failover_experiment
check "failover experiment: a failing kill command and a 1-broker cluster refused" failover_refused
echo "faults time: $((SECONDS - suite_start)) s"
summary
