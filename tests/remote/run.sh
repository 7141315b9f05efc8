#!/usr/bin/env bash
# Remote engines: jmeter-plans/producer-baseline.jmx driven by one controller on two jmeter-server processes on
# loopback (scripts/jmeter-server: distinct RMI ports, java.rmi.server.hostname=127.0.0.1, RMI without TLS). Settings
# go to the servers with -G; a -J on the controller does not reach them (checked too: the load then goes to the
# plan's default topic). Checks the controller's JTL (sum of SampleCount = 2 x threads x loops) against the topic's
# offsets. Needs a built jar (scripts/build) and a broker on 127.0.0.1:9092 (scripts/kafka start). Uses TCP 1099,
# 1100, 4000, 4001: on a shared machine run it in a private network namespace, e.g.
#   unshare -n bash -c 'ip link set lo up && scripts/kafka start && tests/remote/run.sh; scripts/kafka stop'
# (scripts/test runs it outside a namespace, on the broker all its suites share.)
# Ends with "N passed, N failed". About 1.5 minutes.
set -uo pipefail
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
enter_work_dir remote-tests

threads=3
loops=40
servers=(1099:4000 1100:4001)
server_pids=()
run_id="$RANDOM$RANDOM"

# Messages in a topic: the sum of its partitions' end offsets (0 for a topic that does not exist).
topic_messages() {
  scripts/kafka run org.apache.kafka.tools.GetOffsetShell --bootstrap-server 127.0.0.1:9092 --topic "$1" 2>/dev/null |
    awk -F: '{ n += $3 } END { print n + 0 }'
}


# Each pid is JMeter's bin/jmeter (a shell script that runs java as its child, not with exec): end both.
stop_servers() {
  local pid
  for pid in "${server_pids[@]}"; do
    pkill -TERM -P "$pid" 2>/dev/null
    kill "$pid" 2>/dev/null
  done
  for pid in "${server_pids[@]}"; do wait "$pid" 2>/dev/null; done
  server_pids=()
}
trap stop_servers EXIT

# Two engines in one folder, as the README shows: each with its own log (-j), else both would write
# ./jmeter-server.log.
start_servers() {
  local s port lport
  mkdir -p "$out/servers"
  for s in "${servers[@]}"; do
    port="${s%%:*}" lport="${s##*:}"
    (cd "$out/servers" && exec "$root/scripts/jmeter-server" --port "$port" --local-port "$lport" -j "s$port.log") \
      >"$out/servers/s$port.out" 2>&1 &
    server_pids+=($!)
  done
  for s in "${servers[@]}"; do
    port="${s%%:*}"
    wait_for "$out/servers/s$port.out" "Created remote object" 90 ||
      { echo "server $port did not start: $(tail -n 5 "$out/servers/s$port.out")"; return 1; }
    grep -q "server_port=$port\|Creating JMeter server" "$out/servers/s$port.log" ||
      { echo "server $port: its log s$port.log is missing or empty"; return 1; }
  done
}

# controller NAME ARGS...: the baseline plan on both engines; the JTL is written by the controller.
controller() {
  local name="$1"
  shift
  (cd "$out" && "$root/scripts/jmeter" -n -t "$root/jmeter-plans/producer-baseline.jmx" \
    -R 127.0.0.1:1099,127.0.0.1:1100 -l "$name.jtl" -j "$name.log" \
    -Jjmeter.save.saveservice.output_format=csv -Jjmeter.save.saveservice.sample_count=true "$@" \
    >"$name.out" 2>&1)
  local rc=$?
  cat "$out/$name.out"
  return $rc
}

# rows_and_count JTL: "ROWS SUM-OF-SampleCount OK-ROWS" of a CSV JTL.
rows_and_count() {
  jtl_says counts "$1" | cut -d' ' -f1,2,4
}

G_TOPIC="remote-g-$run_id"
J_TOPIC="remote-j-$run_id"

global_props() {
  local before after
  before="$(topic_messages "$G_TOPIC")"
  controller global -Gkafka.topic="$G_TOPIC" -Gthreads="$threads" -Gloops="$loops" -Gtopic.partitions=4 \
    -Grecord.size=256 || return 1
  local want=$((${#servers[@]} * threads * loops)) rows count ok
  read -r rows count ok < <(rows_and_count "$out/global.jtl")
  after="$(topic_messages "$G_TOPIC")"
  echo "controller JTL: $rows rows, SampleCount sum $count, $ok OK; topic $G_TOPIC grew $before -> $after"
  [[ "$count" == "$want" ]] || { echo "SampleCount sum $count, expected 2 x $threads x $loops = $want"; return 1; }
  [[ "$rows" == "$want" && "$ok" == "$want" ]] || { echo "expected $want rows, all OK"; return 1; }
  (((after - before) == want)) || { echo "topic grew by $((after - before)), expected $want"; return 1; }
  # each engine ran its own copy of the plan
  local s port
  for s in "${servers[@]}"; do
    port="${s%%:*}"
    grep -q "127.0.0.1:$port" "$out/global.out" || { echo "the controller did not use the engine on $port"; return 1; }
  done
}

# A jmeter-server engine is a JVM without GUI that JMeter does not flag as non-GUI: it still reads the Kafka
# Producer's settings once per thread (only value, key and headers are prepared before each sample), as jmeter -n does.
engines_read_once() {
  local s port log
  for s in "${servers[@]}"; do
    port="${s%%:*}"
    log="$out/servers/s$port.log"
    grep "KafkaProducer: settings are read once per thread" "$log" | head -n 1
    grep -q "KafkaProducer: settings are read once per thread; JMeter prepares only \[value, key, headers\] before" \
      "$log" || { echo "engine $port prepares every setting before each sample ($log)"; return 1; }
  done
}

# The trap -G avoids: -J sets the property on the controller only, so the engines use the plan's default topic.
local_props_stay_local() {
  local default_topic=jmeter-baseline before after n
  before="$(topic_messages "$default_topic")"
  controller local -Jkafka.topic="$J_TOPIC" -Gthreads=1 -Gloops=5 -Gtopic.partitions=4 || return 1
  after="$(topic_messages "$default_topic")"
  n="$(topic_messages "$J_TOPIC")"
  echo "topic $J_TOPIC (named with -J on the controller) holds $n messages; $default_topic grew $before -> $after"
  (((after - before) == 10)) || { echo "the plan's default topic grew by $((after - before)), expected 10"; return 1; }
  [[ "$n" == 0 ]] || { echo "-J reached the engines: the premise of the README's advice is wrong"; return 1; }
  local rows count ok
  read -r rows count ok < <(rows_and_count "$out/local.jtl")
  [[ "$count" == 10 && "$ok" == 10 ]] || { echo "expected 10 OK messages sent elsewhere, got $count ($ok OK)"; return 1; }
}

# Every distributed example in the README passes the plan's settings with -G: a -J in a command with -R/-r may only
# set what the controller itself uses (how it saves the JTL, its RMI settings).
docs_use_g() {
  python3 "$root/tests/remote/checks.py" docs-use-g "$root/README.md"
}

no_crash() {
  local f
  f="$(find "$out" -name 'hs_err_pid*.log' | head -n1)"
  [[ -z "$f" ]] || { echo "a JVM crashed: $f"; return 1; }
}

check "README: every distributed example passes plan settings with -G" docs_use_g
check "two jmeter-server engines start on loopback (ports 1099, 1100)" start_servers
check "-G: controller JTL SampleCount sum = 2 x $threads x $loops = topic growth" global_props
check "the engines read the producer's settings once per thread (only value, key, headers per sample)" engines_read_once
check "-J on the controller does not reach the engines (the plan's default topic gets the load)" local_props_stay_local
stop_servers
check "no JVM crash (no hs_err_pid*.log)" no_crash
summary
