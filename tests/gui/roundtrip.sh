#!/usr/bin/env bash
# Round trip of a plan built on the Kafka elements: JMeter's GUI (under Xvfb) opens jmeter-plans/producer-baseline.jmx
# and saves it (File > Save As, through tests/gui/probe.groovy); a second GUI opens that saved plan and saves it again;
# then the twice-saved plan runs headless (jmeter -n) against the local broker. The JTL's rows and messages must
# match the topic's offsets. Needs a built jar (scripts/build) and a broker (scripts/kafka start); on a shared
# machine run it in a private network namespace:
#   unshare -n bash -c 'ip link set lo up && scripts/kafka start && tests/gui/roundtrip.sh; scripts/kafka stop'
# (scripts/test runs it outside a namespace, on the broker all its suites share.)
# Ends with "N passed, N failed".
set -uo pipefail
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
enter_work_dir gui-roundtrip
# shellcheck source=../../scripts/lib/common.sh source-path=SCRIPTDIR
source "$root/scripts/lib/common.sh"
# shellcheck source=../../scripts/lib/gui.sh source-path=SCRIPTDIR
source "$root/scripts/lib/gui.sh"
# shellcheck source=../../scripts/lib/jmeter.sh source-path=SCRIPTDIR
source "$root/scripts/lib/jmeter.sh"
# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$root/tests/gui/lib.sh"
trap 'gui_close; stop_xvfb' EXIT

plan="$root/jmeter-plans/producer-baseline.jmx"
topic="gui-roundtrip-$RANDOM$RANDOM"

# save_in_gui FROM TO: a GUI opens FROM, saves it as TO, and exits.
save_in_gui() {
  gui_open "$out/gui-$(basename "$2" .jmx)" "$1" && gui_cmd save "$2" >/dev/null || return 1
  gui_close
  python3 tests/gui/jmx.py same-plan "$plan" "$2"
}

runs_headless() {
  scripts/jmeter -n -t "$out/saved-twice.jmx" -l "$out/run.jtl" -j "$out/run.log" \
    -Jjmeter.save.saveservice.output_format=csv -Jjmeter.save.saveservice.sample_count=true \
    -Jkafka.topic="$topic" -Jthreads=3 -Jloops=100 -Jtopic.partitions=3 -Jkafka.summary.file="$out/summary.json" \
    >"$out/run.out" 2>&1 || { tail -n 5 "$out/run.out"; return 1; }
  python3 tests/e2e/jtl_check.py "$out/run.jtl" --rows 300 --messages 300 --all-ok --summary "$out/summary.json"
}

topic_matches() {
  local n
  n="$(scripts/kafka run org.apache.kafka.tools.GetOffsetShell --bootstrap-server 127.0.0.1:9092 --topic "$topic" \
    2>/dev/null | awk -F: '{ n += $3 } END { print n + 0 }')"
  echo "topic $topic holds $n messages"
  [[ "$n" == 300 ]]
}

ensure_gui_tools
ensure_jmeter
install_sampler_jar
start_xvfb "$out"
check "the GUI saves the baseline plan with its Kafka elements and settings" save_in_gui "$plan" "$out/saved.jmx"
check "a new GUI reopens the saved plan and saves it again, unchanged" save_in_gui "$out/saved.jmx" "$out/saved-twice.jmx"
stop_xvfb
check "the twice-saved plan runs headless: 300 rows, 300 messages, all OK, summary agrees" runs_headless
check "the topic holds exactly the 300 messages of the JTL" topic_matches
summary
