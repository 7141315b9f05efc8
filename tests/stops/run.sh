#!/usr/bin/env bash
# Stops, kills and failed setups keep the books, through JMeter (scripts/jmeter -n, the baseline plan) against the
# single-node broker (which one: below):
#   setup:     200 threads on a dead broker (producer.scope=test) and 200 on a missing topic (scope=thread): one
#              failed sample with the cause, one ERROR line, a prompt exit; the previous run's summary file is gone
#   stop:      StopTestNow (bin/stoptest.sh) mid-run: the JTL's OK messages = the perf line's "records sent" =
#              the summary's acked, and acked + acknowledged-after-their-sample <= the topic's records <= sent
#   frozen:    StopTestNow right after the broker froze (SIGSTOP): JMeter ends within seconds, the audit skipped
#              with a note instead of blocking on the broker
#   sigterm:   SIGTERM to JMeter mid-run: exit 143, the perf line printed and the summary JSON written from the
#              shutdown hook (stopped, audit skipped with a note)
#   paced:     StopTestNow while the threads wait for their target.rate slot: no sample is sent after the stop
# Needs a built jar (scripts/build). The broker: with STOPS_PORT_BASE=P a single node of its own on 127.0.0.1:P
# (scripts/kafka --port-base P, started and stopped here: what scripts/test does, so that freezing it stops no other
# suite's broker); else the shared one on 9092 (started here if it is not running), or in a private namespace:
#   unshare -n bash -c 'ip link set lo up && tests/stops/run.sh'
# Ends with "N passed, N failed".
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$root/tests/lib/checks.sh"
verify() { python3 "$root/tests/stops/checks.py" "$@"; } # verify CHECK ARG...: one of tests/stops/checks.py
enter_work_dir stops
suite_start=$SECONDS
bin="$root/target/jmeter/bin"
node=() # the scripts/kafka option that selects this suite's node
pidfile="$root/target/kafka/single/kafka.pid"
if [[ -n "${STOPS_PORT_BASE:-}" ]]; then
  node=(--port-base "$STOPS_PORT_BASE")
  pidfile="$root/target/kafka/base-$STOPS_PORT_BASE/kafka.pid"
fi
bootstrap="127.0.0.1:${STOPS_PORT_BASE:-9092}"

started=0
if ! scripts/kafka status "${node[@]}" >/dev/null 2>&1; then
  started=1
  scripts/kafka start "${node[@]}" >"$out/kafka-start.log" 2>&1 ||
    { cat "$out/kafka-start.log"; echo "0 passed, 1 failed"; exit 1; }
fi
broker_pid="$(cat "$pidfile")"
finish() {
  kill -CONT "$broker_pid" 2>/dev/null # never leave a broker frozen
  if [[ $started == 1 ]]; then scripts/kafka stop "${node[@]}" >/dev/null 2>&1 || true; fi
}
trap finish EXIT

new_topic() { scripts/kafka topics --bootstrap-server "$bootstrap" --create --topic "$1" --partitions "$2" >/dev/null 2>&1; }

# start_plan NAME ARGS...: the baseline plan in the background ($jmeter_pid), output in $out/NAME.*.
start_plan() {
  local name="$1"
  shift
  baseline_plan "$name" -Jkafka.bootstrap="$bootstrap" -Jtopic.create=false "$@" >"$out/$name.out" 2>&1 &
  jmeter_pid=$!
}

# finish_plan NAME: waits (at most 120 s) for the plan started last; its exit code in NAME.rc.
finish_plan() {
  wait_exit "$jmeter_pid" 120 || { echo "JMeter still runs after 120 s"; kill -9 "$jmeter_pid"; }
  wait "$jmeter_pid"
  echo $? >"$out/$1.rc"
}

# stop_now NAME: StopTestNow on the port the JMeter of NAME listens on; the seconds it took to end in NAME.stop-secs.
stop_now() {
  local port t0
  port="$(sed -n 's/.*message on port \([0-9]*\).*/\1/p' "$out/$1.out" | head -n 1)"
  t0=$(date +%s.%N)
  "$bin/stoptest.sh" "$port" >"$out/$1.stop.out" 2>&1
  finish_plan "$1"
  echo "$(date +%s.%N) - $t0" | bc >"$out/$1.stop-secs"
}

# wait_rows NAME N: true once the JTL of NAME has N rows.
wait_rows() {
  local deadline=$((SECONDS + 60))
  until (($(wc -l 2>/dev/null <"$out/$1.jtl" || echo 0) > $2)); do
    ((SECONDS < deadline)) || { echo "fewer than $2 rows in $1.jtl after 60 s"; return 1; }
    sleep 0.3
  done
}

# books NAME TOPIC: JTL, printed report, summary and topic side by side (NAME-books.json, printed).
books() {
  verify books "$out/$1.jtl" "$out/$1.out" "$out/$1-summary.json" "$(topic_messages "$2" "$bootstrap")" "$(cat "$out/$1.rc")" \
    >"$out/$1-books.json"
  cat "$out/$1-books.json"
}

field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))' "$@"; }

# one_setup_failure NAME CODE PHRASE: JMeter ended by itself within 60 s, one failed row with CODE whose message has
# PHRASE, one ERROR line naming it, and the old summary planted before the run is gone.
one_setup_failure() {
  local name="$1" code="$2" phrase="$3"
  echo "$(cat "$out/$name.secs") s to exit, $(cat "$out/$name.rc") exit code"
  [[ "$(cat "$out/$name.rc")" == 0 ]] || { echo "JMeter exit $(cat "$out/$name.rc")"; tail -n 5 "$out/$name.out"; return 1; }
  (($(cat "$out/$name.secs") <= 60)) || { echo "took more than 60 s"; return 1; }
  jtl_says one-failed-row "$out/$name.jtl" "$code" "$phrase" || return 1
  local errors
  errors="$(grep -c ' ERROR ' "$out/$name.log")"
  grep ' ERROR ' "$out/$name.log" | cut -c1-220
  ((errors == 1)) || { echo "$errors ERROR lines in jmeter.log, expected 1"; return 1; }
  grep ' ERROR ' "$out/$name.log" | grep -qF -- "$phrase" || { echo "the ERROR line does not name the cause"; return 1; }
  [[ ! -e "$out/$name-summary.json" ]] || { echo "the previous run's summary is still there: $(cat "$out/$name-summary.json")"; return 1; }
}

# run_setup_failure NAME ARGS...: 200 threads whose setup fails, with an old success planted as the summary.
run_setup_failure() {
  local name="$1" start=$SECONDS
  shift
  echo '{"_format": "kafka-native summary 1", "acked": 1000, "failed": 0, "perf_line": "an old success", "run_id": "old"}' >"$out/$name-summary.json"
  start_plan "$name" -Jthreads=200 -Jloops=100 -Jrampup=1 "$@"
  finish_plan "$name"
  echo $((SECONDS - start)) >"$out/$name.secs"
}

dead_broker() {
  run_setup_failure dead -Jkafka.bootstrap=127.0.0.1:1 -Jproducer.scope=test
  one_setup_failure dead TRANSPORT "127.0.0.1:1"
}

missing_topic() {
  run_setup_failure missing -Jkafka.topic="stops-missing-$RANDOM$RANDOM" -Jproducer.scope=thread
  one_setup_failure missing UNKNOWN_TOPIC_OR_PART "does not exist"
}

# StopTestNow mid-run on 4 threads sending 200-message batches (acks=all, linger 20 ms): samples are in flight at the stop.
stop_books() {
  local topic="stops-books-$RANDOM$RANDOM"
  new_topic "$topic" 4 || return 1
  start_plan stop -Jkafka.topic="$topic" -Jthreads=4 -Jloops=100000 -Jmessages.per.sample=200 -Jacks=all \
    -Jrecord.size=1000 -Jlinger.ms=20
  wait_rows stop 50 || { kill "$jmeter_pid"; return 1; }
  stop_now stop
  books stop "$topic" >/dev/null
  cat "$out/stop-books.json"
  local f="$out/stop-books.json"
  [[ "$(field "$f" 'exit')" == 0 ]] || { echo "JMeter exit $(field "$f" 'exit')"; return 1; }
  [[ "$(field "$f" 'jtl_ok == perf_records_sent == acked')" == True ]] ||
    { echo "JTL OK, the perf line and the summary's acked disagree"; return 1; }
  [[ "$(field "$f" 'acked + acked_after_sample <= topic <= sent')" == True ]] ||
    { echo "the topic's records are not between acked + acked after their sample and sent"; return 1; }
  [[ "$(field "$f" 'stopped')" == True ]] || { echo "the summary does not say the test was stopped"; return 1; }
}

# The broker frozen (SIGSTOP: no answer, connections kept) 3 s into an audited run, StopTestNow a second later.
frozen_broker() {
  local topic="stops-frozen-$RANDOM$RANDOM"
  new_topic "$topic" 2 || return 1
  start_plan frozen -Jkafka.topic="$topic" -Jthreads=2 -Jloops=100000 -Jtarget.rate=50 -Jaudit=true \
    -Jaudit.timeout.ms=60000 -Jtimeout.ms=20000
  wait_rows frozen 100 || { kill "$jmeter_pid"; return 1; }
  kill -STOP "$broker_pid"
  sleep 1
  stop_now frozen
  kill -CONT "$broker_pid"
  echo "JMeter ended $(cat "$out/frozen.stop-secs") s after StopTestNow, exit $(cat "$out/frozen.rc")"
  grep -h "audit of run" "$out/frozen.out" | cut -c1-200
  [[ "$(cat "$out/frozen.rc")" == 0 ]] || { echo "JMeter exit $(cat "$out/frozen.rc")"; return 1; }
  [[ "$(echo "$(cat "$out/frozen.stop-secs") < 10" | bc)" == 1 ]] || { echo "the stop took 10 s or more"; return 1; }
  [[ -f "$out/frozen-summary.json" ]] || { echo "no summary written"; return 1; }
  [[ "$(field "$out/frozen-summary.json" 'audit.get("skipped", "")')" == *"StopTestNow"* ]] ||
    { echo "the summary's audit is not a skip note: $(field "$out/frozen-summary.json" 'audit')"; return 1; }
  grep -q "audit of run .* skipped" "$out/frozen.out" || { echo "no skip note on stdout"; return 1; }
}

# SIGTERM to the JVM 3 s into an audited run.
sigterm() {
  local topic="stops-term-$RANDOM$RANDOM"
  new_topic "$topic" 2 || return 1
  start_plan term -Jkafka.topic="$topic" -Jthreads=2 -Jloops=100000 -Jtarget.rate=50 -Jaudit=true
  wait_rows term 100 || { kill "$jmeter_pid"; return 1; }
  # scripts/jmeter runs JMeter's bin/jmeter, which execs java: the JVM is the newest java child of this plan.
  local jvm
  jvm="$(pgrep -n -f -- "java.* -j $out/term.log")"
  [[ -n "$jvm" ]] || { echo "no JVM found for the plan"; kill "$jmeter_pid"; return 1; }
  kill -TERM "$jvm"
  finish_plan term
  echo "exit $(cat "$out/term.rc")"
  grep -h "records sent\|audit of run" "$out/term.out" | cut -c1-200
  [[ "$(cat "$out/term.rc")" == 143 ]] || { echo "JMeter exit $(cat "$out/term.rc"), expected 143 (SIGTERM)"; return 1; }
  grep -q "records sent" "$out/term.out" || { echo "no perf line on stdout"; return 1; }
  [[ -f "$out/term-summary.json" ]] || { echo "no summary JSON written"; return 1; }
  [[ "$(field "$out/term-summary.json" 'stopped and acked > 0')" == True ]] ||
    { echo "the summary does not say stopped, or counts nothing acked"; return 1; }
  [[ "$(field "$out/term-summary.json" 'audit.get("skipped", "")')" == *"terminated"* ]] ||
    { echo "the audit was not skipped with a note: $(field "$out/term-summary.json" 'audit')"; return 1; }
}

# 4 threads at one sample per 2 s: nearly always waiting for their slot; StopTestNow 3 s in.
paced_stop() {
  local topic="stops-paced-$RANDOM$RANDOM"
  new_topic "$topic" 1 || return 1
  start_plan paced -Jkafka.topic="$topic" -Jthreads=4 -Jloops=100 -Jtarget.rate=0.5 -Jrecord.size=100
  wait_rows paced 4 || { kill "$jmeter_pid"; return 1; }
  sleep 1
  local stop_ms
  stop_ms=$(date +%s%3N)
  stop_now paced
  books paced "$topic" >/dev/null
  cat "$out/paced-books.json"
  verify nothing-sent-after "$out/paced.jtl" "$stop_ms" || return 1
  local f="$out/paced-books.json"
  [[ "$(field "$f" 'jtl_ok == acked == topic')" == True ]] || { echo "JTL OK, acked and topic disagree"; return 1; }
  (($(echo "$(cat "$out/paced.stop-secs") < 5" | bc))) || { echo "the stop took $(cat "$out/paced.stop-secs") s"; return 1; }
}

check "200 threads, dead broker, scope=test: one failed sample, one ERROR line, old summary removed" dead_broker
check "200 threads, missing topic, scope=thread: one failed sample, one ERROR line, old summary removed" missing_topic
check "StopTestNow mid-run: JTL OK = perf line records sent = summary acked; acked + late <= topic <= sent" stop_books
check "StopTestNow with the broker frozen: ends within 10 s, audit skipped with a note" frozen_broker
check "SIGTERM mid-run: exit 143, perf line and summary JSON written, audit skipped with a note" sigterm
check "StopTestNow during the target.rate pause: no sample sent after the stop" paced_stop
echo "stops time: $((SECONDS - suite_start)) s"
summary
