#!/usr/bin/env bash
# Bad-input battery: 109 hostile or mistaken inputs (127 with BATTERY_ALL=1) to the producer, consumer and lag samplers and
# the Kafka elements, each run by a real headless JMeter (one JVM per input) against the local broker. Each input must
# end with the expected response code and a phrase naming the cause, no JVM crash (hs_err file), no secret in any output,
# no file in its folder changed or added but JMeter's outputs (its fixtures include FIFOs, /dev/zero, oversized files),
# and JMeter exiting by itself within the input's bound. The table and the checks are in battery.py.
# Needs a built jar (scripts/build) and the broker with its SASL listener (scripts/kafka start --secure).
#   tests/battery/run.sh [ROW_ID...]   the CI rows (BATTERY_ALL=1: every row), or only the named ones;
#                                      BATTERY_JOBS=N JMeters at once (default 3)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 1
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$root/tests/lib/checks.sh"

export BATTERY_OUT="$root/target/battery"
export BATTERY_TOPIC="battery-$RANDOM$RANDOM"
export BATTERY_PARTITIONS=4
rm -rf "$BATTERY_OUT"
mkdir -p "$BATTERY_OUT"
rm -f "$root"/hs_err_pid*.log

if (($# > 0)); then rows=("$@"); else mapfile -t rows < <(python3 tests/battery/battery.py list); fi
start=$SECONDS
if ! scripts/kafka topics --create --topic "$BATTERY_TOPIC" --partitions "$BATTERY_PARTITIONS" \
  --replication-factor 1 >"$BATTERY_OUT/topic.log" 2>&1; then
  cat "$BATTERY_OUT/topic.log"
  echo "0 passed, 1 failed"
  exit 1
fi
# JVM starts dominate a row's time: run a few rows at once; each has its own folder, JTL and log.
printf '%s\n' "${rows[@]}" |
  xargs -P "${BATTERY_JOBS:-3}" -I{} python3 tests/battery/battery.py run {} >"$BATTERY_OUT/runs.log" 2>&1
for id in "${rows[@]}"; do
  check "battery $id" python3 tests/battery/battery.py check "$id"
done
python3 tests/battery/battery.py tally
echo "battery time: $((SECONDS - start)) s"
summary
