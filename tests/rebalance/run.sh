#!/usr/bin/env bash
# scripts/experiment consumer-rebalance --quick through JMeter against a real broker (REBALANCE_BOOTSTRAP, default
# the shared single node 127.0.0.1:9092, Kafka 4.x for the consumer protocol):
#   refused: an unknown protocol and a run too short for the group to change: exit 2 with the reason
#   quick:   the three protocols each read records and went through rebalances as the group grew and shrank (the
#            leaving thread's consumer closed when its thread ended, before the test did); the
#            table has a row per protocol, and the JSON, the chart and index.html's link are there
# Needs a built jar (scripts/build) and the broker. Ends with "N passed, N failed".
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$root/tests/lib/checks.sh"
enter_work_dir rebalance
bootstrap="${REBALANCE_BOOTSTRAP:-127.0.0.1:9092}"

# refused NAME TEXT ARGS...: scripts/experiment consumer-rebalance ARGS exits 2 and its error names TEXT.
refused() {
  local name="$1" text="$2"
  shift 2
  scripts/experiment consumer-rebalance "$@" --out "$out/$name" >"$out/$name.out" 2>&1
  local rc=$?
  tail -n 1 "$out/$name.out"
  ((rc == 2)) && grep -qF -- "$text" "$out/$name.out"
}

quick() {
  scripts/experiment consumer-rebalance --quick --bootstrap "$bootstrap" --out "$out/quick" >"$out/quick.out" 2>&1 ||
    { tail -n 5 "$out/quick.out"; return 1; }
  grep -m1 '^\*\*' "$out/quick.out"
  python3 tests/rebalance/checks.py published "$out/quick"
}

check "an unknown protocol refused" refused unknown "--protocols: unknown banana" --protocols banana
check "a run too short refused" refused short "--seconds must be at least 18" --seconds 5
check "three protocols: rebalances counted and timed as the group grows and shrinks" quick
summary
