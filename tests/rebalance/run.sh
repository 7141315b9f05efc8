#!/usr/bin/env bash
# scripts/experiment consumer-rebalance --quick through JMeter against a real broker (REBALANCE_BOOTSTRAP, default
# the shared single node 127.0.0.1:9092, Kafka 4.x for the consumer protocol):
#   refused: an unknown protocol and a run too short for the group to change: exit 2 with the reason
#   quick:   the three protocols each read records and went through rebalances as the group grew and shrank; the
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
  python3 - "$out/quick" <<'PY'
import json, os, sys
d = sys.argv[1]
r = json.load(open(os.path.join(d, "consumer-rebalance.json")))
rows = {p["protocol"]: p for p in r["protocols"]}
assert sorted(rows) == ["classic", "consumer", "cooperative-sticky"], sorted(rows)
for name, p in rows.items():
    assert p["records"] > 0 and p["joins"] >= 6, (name, p["records"], p["joins"])
    assert p["rebalances"] > 0 and p["max_pause_ms"] is not None, (name, p["rebalances"], p["max_pause_ms"])
md = open(os.path.join(d, "consumer-rebalance.md")).read()
table = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith(("| protocol |", "|---"))]
assert len(table) == 3, md
for p in rows.values():
    row = next(line for line in table if line.startswith(f"| {p['label']} |"))
    assert row.split(" | ")[3] == str(p["rebalances"]) and int(row.split(" | ")[3]) > 0, row
assert os.path.getsize(os.path.join(d, "consumer-rebalance.png")) > 1000
page = open(os.path.join(d, "index.html")).read()
assert "href='consumer-rebalance.md'" in page and "src='consumer-rebalance.png'" in page
PY
}

check "an unknown protocol refused" refused unknown "--protocols: unknown banana" --protocols banana
check "a run too short refused" refused short "--seconds must be at least 18" --seconds 5
check "three protocols: rebalances counted and timed as the group grows and shrinks" quick
summary
