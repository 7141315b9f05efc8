#!/usr/bin/env bash
# scripts/experiment capacity through JMeter against a real broker (CAPACITY_BOOTSTRAP, default the shared single
# node 127.0.0.1:9092):
#   refused:   --p99 0 and --p99 -1, a plan whose producer's rate no property drives: exit 2 with the reason
#   broken:    a plan that fails every sample (records over the broker's limit) stops after its first step with
#              that sample's error
#   quota:     a producer quota (producer_byte_rate for this suite's own client.id) throttles the broker on purpose:
#              the knee found is within 15 % of the quota's rate, the bound named is the quota, and the outputs
#              (JSON, a table row per step, the chart, index.html's link) are complete
#   unmet:     an SLO no rate meets under that quota (every rate tried above it): says so with the lowest rate tried
#   lag:       --lag-not-growing with one consumer thread slowed on purpose (10 records a poll, 100 ms apart: about
#              90 records/s): 40 records/s passes, 160 fails on the consumer lag alone, and the knee is bounded by
#              it; --lag-not-growing 0 and a plan without a consumer are refused
#   step-load: scripts/experiment step-load --quick: 2, 4, 6 threads each seen sampling in its own step, records/s,
#              p99 and generator CPU per step, the last step judged, the outputs linked from index.html
# Needs a built jar (scripts/build) and the broker. Ends with "N passed, N failed".
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$root/tests/lib/checks.sh"
enter_work_dir capacity
bootstrap="${CAPACITY_BOOTSTRAP:-127.0.0.1:9092}"
# A client.id of this run's own: the quota throttles this suite's producer only, never another suite's on the broker.
client="capacity-quota-$$"
record=10000
quota=3000000 # bytes/s: 300 records/s of 10,000 B
quota_rate=$((quota / record))

quota_config() {
  scripts/kafka configs --bootstrap-server "$bootstrap" --entity-type clients --entity-name "$client" "$@" \
    >>"$out/quota.log" 2>&1
}

# refused NAME TEXT ARGS...: scripts/experiment capacity ARGS exits 2 and its error names TEXT.
refused() {
  local name="$1" text="$2"
  shift 2
  scripts/experiment capacity "$@" --out "$out/$name" >"$out/$name.out" 2>&1
  local rc=$?
  tail -n 1 "$out/$name.out"
  ((rc == 2)) && grep -qF -- "$text" "$out/$name.out"
}

broken() {
  scripts/experiment capacity --p99 100 --quick --record-size 2000000 --bootstrap "$bootstrap" --out "$out/broken" \
    >"$out/broken.out" 2>&1
  local rc=$?
  tail -n 1 "$out/broken.out"
  ((rc == 2)) && grep -q "every sample of step 1 .* failed, so the search stopped: MSG_SIZE_TOO_LARGE" "$out/broken.out" &&
    ! grep -q "capacity step 2" "$out/broken.out"
}

quota_knee() {
  # Warm-up longer than the 11 s over which the broker averages a quota: a fresh client's first seconds may burst.
  scripts/experiment capacity --p99 200 --record-size "$record" --warmup 12 --step-seconds 8 --bisections 3 \
    --start-rate $((quota_rate * 6 / 10)) --extra-properties "client.id=$client" --bootstrap "$bootstrap" \
    --out "$out/quota" >"$out/quota.out" 2>&1 || { tail -n 5 "$out/quota.out"; return 1; }
  python3 tests/capacity/checks.py quota-knee "$out/quota" "$quota_rate"
}

unmet() {
  # Every rate tried is at least 5× the quota's: throttled, each step falls behind its schedule.
  scripts/experiment capacity --p99 200 --record-size "$record" --quick --warmup 3 --down-steps 1 \
    --start-rate $((quota_rate * 10)) --extra-properties "client.id=$client" --bootstrap "$bootstrap" \
    --out "$out/unmet" >"$out/unmet.out" 2>&1 || { tail -n 5 "$out/unmet.out"; return 1; }
  grep -m1 '^\*\*' "$out/unmet.out"
  local lowest
  lowest="$(python3 -c "print(f'{$quota_rate * 5:,}')")" # as the report writes it: 1,500
  grep -q "no rate met the SLO (.*): the lowest tried, $lowest records/s, failed" "$out/unmet.out"
}

lag_bound() {
  scripts/experiment capacity --p99 1000 --quick --bisections 0 --factor 4 --start-rate 40 --lag-not-growing 1 \
    --threads 4 --partitions 4 --record-size 200 --prop consumer.think.ms=100 --prop max.records=10 \
    --bootstrap "$bootstrap" --out "$out/lag" >"$out/lag.out" 2>&1 || { tail -n 5 "$out/lag.out"; return 1; }
  grep -m1 '^\*\*' "$out/lag.out"
  python3 tests/capacity/checks.py lag-bounded "$out/lag"
}

step_load() {
  # Into the quota run's folder: its index.html then links both experiments.
  scripts/experiment step-load --quick --record-size 200 --p99 60000 --bootstrap "$bootstrap" --out "$out/quota" \
    >"$out/step-load.out" 2>&1 || { tail -n 5 "$out/step-load.out"; return 1; }
  grep -m1 '^\*\*' "$out/step-load.out"
  python3 tests/capacity/checks.py step-load-published "$out/quota"
}

check "--p99 0 refused" refused p99-zero "--p99 must be greater than 0 (got 0)" --p99 0
check "--p99 -1 refused" refused p99-negative "--p99 must be greater than 0 (got -1)" --p99 -1
check "a plan without the rate property refused" refused no-rate-property \
  "has no Kafka Producer whose target rate reads the property 'target.rate'" --p99 10 \
  --plan jmeter-plans/consumer-throughput.jmx
check "a plan failing every sample stops at once with its first error" broken
check "--lag-not-growing 0 refused" refused lag-zero "--lag-not-growing must be at least 1 consumer thread (got 0)" \
  --p99 10 --lag-not-growing 0
check "--lag-not-growing with a plan without a consumer refused" refused lag-no-consumer \
  "has no Kafka Consumer nor Kafka Lag Monitor" --p99 10 --lag-not-growing 2 --plan jmeter-plans/producer-baseline.jmx
check "a slowed consumer group: the step it cannot keep up with fails on lag, the knee bounded by it" lag_bound
if quota_config --alter --add-config "producer_byte_rate=$quota"; then
  check "a producer quota of $quota_rate records/s: the knee within 15 %" quota_knee
  check "an SLO no rate meets: said, with the lowest rate tried" unmet
else
  check "the producer quota could be set (see $out/quota.log)" false
fi
quota_config --alter --delete-config producer_byte_rate || true
check "step load: a table row per step, generator CPU, the last step judged" step_load
summary
