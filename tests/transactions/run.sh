#!/usr/bin/env bash
# Transactional producer, end to end: JMeter runs the baseline plan with transactional.id.prefix against the local
# broker; the JTL's committed messages must equal what a read_committed consumer (Kafka's own) reads, aborted
# transactions must be invisible to it, a second test with the same prefix must fence the first (which then fails
# with FENCED and ends by itself), and bad settings must stop the test with a clear CONFIG_ERROR.
# Needs a built jar (scripts/build) and a running broker (scripts/kafka start). About 3 minutes.
set -uo pipefail
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
# shellcheck source=plan.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/plan.sh"
enter_work_dir transactions
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

# 50 % aborts: 2 threads x 50 transactions of 20 records. JTL: 50 OK + 50 ABORTED rows; read_committed sees exactly
# the OK rows' records, read_uncommitted all of them; the summary and the audit agree.
aborts() {
  local topic="kafka4-txn-$RANDOM$RANDOM"
  txn_run aborts -Jkafka.topic="$topic" -Jthreads=2 -Jloops=50 -Jmessages.per.sample=20 -Jaudit=true \
    -Jtxn.prefix="kafka4-aborts-$RANDOM" -Jtxn.abort.percent=50 || { tail -n 20 "$out/aborts.out"; return 1; }
  local committed uncommitted
  committed="$(committed_count "$topic" "$bootstrap")"
  uncommitted="$(committed_count "$topic" "$bootstrap" read_uncommitted)"
  grep -E '^audit of run [0-9a-f-]+: 1000 acked, 1000 found, 0 missing, 0 duplicates, 0 unexpected' "$out/aborts.out" &&
    grep -E '^transactions: 50 committed \(1000 records\), 50 aborted' "$out/aborts.out" &&
    python3 - "$out/aborts.jtl" "$out/aborts-summary.json" "$committed" "$uncommitted" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
committed, uncommitted = int(sys.argv[3] or -1), int(sys.argv[4] or -1)
assert len(rows) == 100 and all(r["success"] == "true" for r in rows), [r for r in rows if r["success"] != "true"][:2]
codes = {c: sum(1 for r in rows if r["responseCode"] == c) for c in ("OK", "ABORTED")}
assert codes == {"OK": 50, "ABORTED": 50}, codes
ok_messages = sum(int(r["SampleCount"]) for r in rows if r["responseCode"] == "OK")
assert ok_messages == committed == 1000, (ok_messages, committed)
assert uncommitted == 2000, uncommitted
t = json.load(open(sys.argv[2]))["transactions"]
assert (t["committed"], t["aborted"], t["failed"], t["records_committed"], t["records_aborted"]) == (50, 50, 0, 1000, 1000), t
assert 0 < t["commit_us"]["p50"] <= t["commit_us"]["p99"], t
print(f"JTL OK messages {ok_messages} = read_committed {committed}; read_uncommitted {uncommitted}; {t}")
PY
}

# transaction.samples=5: every fifth sample commits; the others are OK rows in an open transaction, all committed.
multi_sample() {
  local topic="kafka4-txn-$RANDOM$RANDOM"
  txn_run multi -Jkafka.topic="$topic" -Jthreads=1 -Jloops=20 -Jmessages.per.sample=10 -Jtxn.prefix="kafka4-multi-$RANDOM" \
    -Jtxn.samples=5 || { tail -n 20 "$out/multi.out"; return 1; }
  local committed
  committed="$(committed_count "$topic" "$bootstrap")"
  [[ "$committed" == 200 ]] || { echo "read_committed read $committed records, expected 200"; return 1; }
  python3 - "$out/multi.jtl" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 20 and all(r["responseCode"] == "OK" for r in rows), rows[:1]
ends = [i for i, r in enumerate(rows) if r["responseMessage"].endswith("transaction committed")]
assert ends == [4, 9, 14, 19], ends
print("commits at samples", [i + 1 for i in ends])
PY
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
    python3 - "$out/first.jtl" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
fenced = [i for i, r in enumerate(rows) if r["responseCode"] == "FENCED"]
assert fenced, {r["responseCode"] for r in rows}
first = fenced[0]
assert all(r["success"] == "true" for r in rows[:first]), "failures before the fencing"
assert all(r["success"] == "false" for r in rows[first:]), "a sample succeeded after the producer was fenced"
m = rows[first]["responseMessage"]
assert "fenced" in m and "transactional.id.prefix" in m, m
print(f"{first} samples OK, then {len(rows) - first} failed, the first with: {m[:160]}")
PY
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
summary
