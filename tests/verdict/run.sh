#!/usr/bin/env bash
# The verdict for CI (issue 12), through JMeter's stock launcher (bin/ApacheJMeter.jar, as scripts/jmeter runs it):
# exit codes with passing and failing thresholds (JTL and dashboard still complete), the JUnit XML, an unmeasurable
# criterion, an invalid one, the verdict set in the plan's Kafka Connection (no -J; the property wins), a regression against a doctored baseline (and scripts/compare), the time breakdown's
# fields and consistency, the load generator's warning, lag and consumer criteria, and `scripts/experiment --quick`.
# Needs a built jar (scripts/build) and a running broker on 127.0.0.1:9092 (scripts/kafka start).
#   tests/verdict/run.sh [--no-experiment | --experiment-only]
# (--no-experiment skips the 2 minutes of scripts/experiment --quick; --experiment-only runs only that, in a folder of
# its own: scripts/test runs the two halves in different lanes.)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 1
mode="${1:-all}"
case "$mode" in
  all | --no-experiment) out="$root/target/verdict-tests" ;;
  --experiment-only) out="$root/target/verdict-experiment" ;;
  *) echo "usage: tests/verdict/run.sh [--no-experiment | --experiment-only]"; exit 2 ;;
esac
rm -rf "$out"
mkdir -p "$out"
# shellcheck source=tests/lib/checks.sh
source "$root/tests/lib/checks.sh"
verify() { python3 "$root/tests/verdict/checks.py" "$@"; } # verify CHECK ARG...: one of tests/verdict/checks.py

# run NAME [-J...]: the producer baseline plan, small, with the summary and JUnit report in $out; returns JMeter's exit.
run() {
  local name="$1"
  shift
  scripts/jmeter -n -t jmeter-plans/producer-baseline.jmx -l "$out/$name.jtl" -j "$out/$name.log" \
    -Jjmeter.save.saveservice.output_format=csv -Jkafka.topic="verdict-$name-$RANDOM$RANDOM" -Jthreads=2 -Jloops=500 \
    -Jkafka.summary.file="$out/$name-summary.json" -Jkafka.verdict.junit="$out/$name-junit.xml" "$@" \
    >"$out/$name.out" 2>&1
  local rc=$?
  echo "$name: jmeter exit $rc"
  grep -E '^(verdict|baseline|time breakdown|hint|WARNING)' "$out/$name.out"
  return $rc
}

exit_is() { # exit_is EXPECTED COMMAND...
  local want="$1"
  shift
  "$@"
  local rc=$?
  [[ $rc == "$want" ]] || { echo "exit code $rc, expected $want"; return 1; }
}

# The passing run and the regression run against its doctored summary are runs of the same test: same topic.
same_topic="verdict-same-$RANDOM$RANDOM"

jtl_rows() { python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(len(r))' "$1"; }

passing() {
  exit_is 0 run pass -Jaudit=true -Jkafka.topic="$same_topic" \
    '-Jkafka.verdict=error.rate<1%; p99<5s; records.per.sec>=10; audit.missing=0; audit.duplicates=0' &&
    grep -q '^verdict: PASS (5 criteria)$' "$out/pass.out" &&
    [[ "$(jtl_rows "$out/pass.jtl")" == 1000 ]]
}

# A failing verdict exits 3 only after JMeter's own end of test: the JTL has every row and the dashboard exists.
failing() {
  exit_is 3 run fail -e -o "$out/fail-report" '-Jkafka.verdict=error.rate<1%; p99<1us; records.per.sec>=100000000' &&
    grep -q '^verdict: p99 = .* (threshold < 0.0010 ms): FAIL$' "$out/fail.out" &&
    grep -q '^verdict: FAIL (2 of 3 criteria failed: p99, records.per.sec); jmeter -n exits with code 3$' "$out/fail.out" &&
    [[ "$(jtl_rows "$out/fail.jtl")" == 1000 ]] && [[ -f "$out/fail-report/index.html" ]] &&
    grep -q '\.\.\. end of run' "$out/fail.out"
}

junit_parses() {
  verify junit-agrees "$out/fail-junit.xml" "$out/fail-summary.json"
}

unmeasured() {
  exit_is 3 run unmeasured '-Jkafka.verdict=error.rate<1%; audit.missing=0' &&
    grep -q '^verdict: audit.missing not measured: no audit ran: set audit=true on the producer (threshold = 0): FAIL$' \
      "$out/unmeasured.out" &&
    verify junit-failure-types "$out/unmeasured-junit.xml" not-measured
}

invalid() {
  exit_is 3 run invalid '-Jkafka.verdict=p99<50ms; p98<5ms' &&
    grep -q "unknown metric 'p98' (did you mean p99?)" "$out/invalid.log" &&
    grep -q "records.per.sec" "$out/invalid.log" && grep -q '^verdict: FAIL: ' "$out/invalid.out"
}

# A baseline claiming 1000 times the passing run's throughput: whatever this machine's noise, this run is 99 % slower.
# The regression criterion is the worst change among throughput, p50 and p99, so a noisy p99 (once +288 %) may be the
# figure it reports: at least 99 %, whichever.
regression() {
  verify doctor-baseline "$out/pass-summary.json" "$out/doctored.json"
  exit_is 3 run regressed -Jaudit=true -Jkafka.topic="$same_topic" "-Jkafka.verdict.baseline=$out/doctored.json" \
    '-Jkafka.verdict=regression<10%' &&
    grep -Eq '^baseline .*doctored.json: throughput -99\.[0-9]% ' "$out/regressed.out" &&
    grep -Eq '^verdict: regression = (99|[1-9][0-9]{2,})(\.[0-9]+)? % \(threshold < 10 %\): FAIL$' "$out/regressed.out" &&
    exit_is 0 scripts/compare "$out/pass-summary.json" "$out/pass-summary.json" --max-regression 10 &&
    exit_is 1 scripts/compare "$out/doctored.json" "$out/pass-summary.json" --max-regression 10 | tee "$out/compare.out" &&
    grep -Eq '^throughput records/s .* -99\.[0-9]%  worse$' "$out/compare.out"
}

# The breakdown, over seed 001's sync settings with linger.ms=1 (10,000 messages: several statistics intervals): the line
# right after the perf line, the fields, local queue + round trip <= send->ack within 25 % (the parts are sampled per
# interval, the total is exact), and the linger hint with its evidence. One producer per thread: with the shared default
# the threads' messages do share batches, so linger is no waste there and the hint rightly stays silent.
breakdown() {
  exit_is 0 run breakdown -Jthreads=4 -Jloops=2500 -Jlinger.ms=1 -Jproducer.scope=thread &&
    grep -A1 -E '^10000 records sent' "$out/breakdown.out" | tail -n1 | grep -q '^time breakdown: send->ack ' &&
    grep -q '^hint: linger.ms=1 with one producer per thread and 1 message per sample adds about .* batches nothing' \
      "$out/breakdown.out" &&
    verify breakdown-consistent "$out/breakdown-summary.json"
}

# The generator's warning: its limits lowered so that this run's CPU passes them, and a control with limits above
# anything measurable (no warning).
generator() {
  exit_is 0 run hot -Jloops=1500 -Jtarget.rate=500 -Jkafka.generator.cpu.limit=0.01 -Jkafka.generator.machine.cpu.limit=100 &&
    grep -q "^WARNING the load generator was the bottleneck: JMeter's process (engine included) used .* of the .* cores on average (limit 0.01%, kafka.generator.cpu.limit)" "$out/hot.out" &&
    grep -q "the load generator was the bottleneck" "$out/hot.log" &&
    exit_is 0 run cool -Jkafka.generator.cpu.limit=100 -Jkafka.generator.machine.cpu.limit=100 &&
    ! grep -q "the load generator was the bottleneck" "$out/cool.out" &&
    verify generator-flagged "$out/hot-summary.json" "$out/cool-summary.json"
}

# Producers, one throttled consumer and the lag monitor (tests/consumer's "throttled" run): the lag grows, so
# lag=stable fails while the consumer's and producer's criteria pass; both summaries get the verdict block.
lag_and_consumer() {
  scripts/jmeter -n -t jmeter-plans/end-to-end.jmx -l "$out/e2e.jtl" -j "$out/e2e.log" -Jduration=12 -Jdrain=0 \
    -Jlag.delay=3 -Jlag.interval.ms=1000 -Jproducer.samples.per.minute=3000 -Jconsumers=1 -Jconsumer.think.ms=1000 \
    -Jmax.records=10 -Jaudit=false -Jcheck.sequence=false -Jkafka.summary.file="$out/e2e-producer.json" \
    -Jkafka.consumer.summary.file="$out/e2e-consumer.json" \
    '-Jkafka.verdict=lag=stable; consumer.records>=10; e2e.p99<60s; error.rate<1%' >"$out/e2e.out" 2>&1
  local rc=$?
  grep '^verdict' "$out/e2e.out"
  [[ $rc == 3 ]] &&
    grep -q '^verdict: lag = growing (threshold = stable): FAIL$' "$out/e2e.out" &&
    grep -q '^verdict: FAIL (1 of 4 criteria failed: lag); jmeter -n exits with code 3$' "$out/e2e.out" &&
    verify lag-growing "$out/e2e-producer.json" "$out/e2e-consumer.json"
}

# The verdict in the plan (the Kafka Connection's Verdict group), no -Jkafka.verdict: a copy of the baseline plan with
# the Verdict criteria and Verdict JUnit file fields filled in, as a tester would in the GUI.
plan_with_verdict() { # plan_with_verdict NAME CRITERIA: writes $out/NAME.jmx, its JUnit file $out/NAME-junit.xml
  verify plan-with-verdict jmeter-plans/producer-baseline.jmx "$out/$1.jmx" "$2" "$out/$1-junit.xml"
}

# run_plan_verdict PLAN NAME [-J...]: like run, on $out/PLAN.jmx, without any kafka.verdict* property.
run_plan_verdict() {
  local plan="$1" name="$2"
  shift 2
  scripts/jmeter -n -t "$out/$plan.jmx" -l "$out/$name.jtl" -j "$out/$name.log" \
    -Jjmeter.save.saveservice.output_format=csv -Jkafka.topic="verdict-$name-$RANDOM$RANDOM" -Jthreads=2 -Jloops=500 \
    -Jkafka.summary.file="$out/$name-summary.json" "$@" >"$out/$name.out" 2>&1
  local rc=$?
  echo "$name: jmeter exit $rc"
  grep -E '^verdict' "$out/$name.out"
  return $rc
}


plan_field_fails() {
  plan_with_verdict field-fail 'error.rate<1%; p99<1us' &&
    exit_is 3 run_plan_verdict field-fail field-fail &&
    grep -q '^verdict: FAIL (1 of 2 criteria failed: p99); jmeter -n exits with code 3$' "$out/field-fail.out" &&
    [[ "$(jtl_rows "$out/field-fail.jtl")" == 1000 ]] && verify junit-counts "$out/field-fail-junit.xml" 2 1
}

plan_field_passes() {
  plan_with_verdict field-pass 'error.rate<1%; records.per.sec>=10' &&
    exit_is 0 run_plan_verdict field-pass field-pass &&
    grep -q '^verdict: PASS (2 criteria)$' "$out/field-pass.out" && verify junit-counts "$out/field-pass-junit.xml" 2 0
}

# The failing plan again, with -Jkafka.verdict and -Jkafka.verdict.junit: the properties win over the fields.
property_wins() {
  exit_is 0 run_plan_verdict field-fail field-override '-Jkafka.verdict=error.rate<1%' \
    -Jkafka.verdict.junit="$out/field-override-junit.xml" &&
    grep -q '^verdict: PASS (1 criteria)$' "$out/field-override.out" &&
    grep -q "kafka.verdict: the JMeter property is used; it overrides the Verdict criteria field of Kafka Connection \[kafka\]" \
      "$out/field-override.log" &&
    verify junit-counts "$out/field-override-junit.xml" 1 0
}

sum_of() { sha256sum "$1" | cut -d' ' -f1; }

# refused NAME TEXT [-J...]: a run refused at setup: exit 3, the reason in the closing line, no sample acknowledged.
refused() {
  local name="$1" text="$2"
  shift 2
  exit_is 3 run "$name" "$@" &&
    grep -qF -- "$text" "$out/$name.out" &&
    grep -q '^verdict: FAIL: the test was refused at setup: ' "$out/$name.out" &&
    ! grep -q ',true,' "$out/$name.jtl"
}

# Report paths: the JTL, the plan, the baseline and a stranger's file are refused and left as they were.
reports_refused() {
  cp jmeter-plans/producer-baseline.jmx "$out/plan-copy.jmx"
  printf 'a file of someone else\n' >"$out/stranger.txt"
  local plan stranger
  plan="$(sum_of "$out/plan-copy.jmx")" stranger="$(sum_of "$out/stranger.txt")"
  refused summary-is-jtl "kafka.summary.file names '$out/summary-is-jtl.jtl', which is the -l results file (JTL)" \
    -Jkafka.summary.file="$out/summary-is-jtl.jtl" &&
    head -n1 "$out/summary-is-jtl.jtl" | grep -q '^timeStamp,elapsed,' &&
    scripts/jmeter -n -t "$out/plan-copy.jmx" -l "$out/junit-is-plan.jtl" -j "$out/junit-is-plan.log" \
      -Jkafka.topic="verdict-plan-$RANDOM" -Jthreads=1 -Jloops=5 -Jkafka.summary.file="$out/junit-is-plan-summary.json" \
      -Jkafka.verdict.junit="$out/plan-copy.jmx" '-Jkafka.verdict=error.rate<1%' >"$out/junit-is-plan.out" 2>&1
  local rc=$?
  echo "junit-is-plan: jmeter exit $rc"
  [[ $rc == 3 ]] && grep -qF "kafka.verdict.junit names '$out/plan-copy.jmx', which is the test plan (-t)" \
    "$out/junit-is-plan.out" && [[ "$(sum_of "$out/plan-copy.jmx")" == "$plan" ]] &&
    refused junit-is-stranger "an existing file that is not a kafka-native verdict JUnit report (it begins with 'a file of someone else')" \
      -Jkafka.verdict.junit="$out/stranger.txt" &&
    [[ "$(sum_of "$out/stranger.txt")" == "$stranger" ]]
}

# The natural CI set-up, baseline = the summary file: refused at setup, the previous summary kept byte for byte.
baseline_is_summary() {
  cp "$out/pass-summary.json" "$out/rolling.json"
  local before
  before="$(sum_of "$out/rolling.json")"
  refused rolling "kafka.summary.file names '$out/rolling.json', which is the baseline (kafka.verdict.baseline)" \
    -Jkafka.summary.file="$out/rolling.json" -Jkafka.verdict.baseline="$out/rolling.json" '-Jkafka.verdict=regression<10%' &&
    [[ "$(sum_of "$out/rolling.json")" == "$before" ]]
}

# A baseline of another test (another topic): the regression is not measured, with the difference named.
baseline_other_test() {
  exit_is 3 run other-test -Jaudit=true "-Jkafka.verdict.baseline=$out/pass-summary.json" '-Jkafka.verdict=regression<50%' &&
    grep -q "^verdict: regression not measured: the baseline '.*pass-summary.json' is a run of another test (samplers.producer 'kafka-produce'.topic: " \
      "$out/other-test.out" &&
    verify test-identity "$out/other-test-summary.json"
}

# A verdict that cannot pass on nothing: refused before any load, exit 3.
nothing_to_pass_on() {
  refused no-criterion "holds no criterion" '-Jkafka.verdict=;;;' &&
    refused infinite "'1e308s' is not a finite number" '-Jkafka.verdict=p99<1e308s' &&
    refused impossible "error.rate is never -1 % (it is 0 to 100 %)" '-Jkafka.verdict=error.rate<-1%' &&
    refused bad-limit "kafka.generator.cpu.limit=-5: a limit is a percentage above 0 and at most 100" \
      -Jkafka.generator.cpu.limit=-5 &&
    refused nan-limit "kafka.generator.gc.limit=NaN: a limit is a percentage" -Jkafka.generator.gc.limit=NaN
}

# No thread started: nothing measured, so the criterion fails (it was skipped: exit 0).
nothing_measured() {
  exit_is 3 run zero -Jthreads=0 '-Jkafka.verdict=records.per.sec>=1000' &&
    grep -q '^verdict: records.per.sec not measured: no producer sent anything in this run (threshold >= 1000): FAIL$' \
      "$out/zero.out"
}

# jmeterengine.force.system.exit=true: judged after every listener (the 1000 acknowledged are seen), exit 3 kept.
forced_exit() {
  exit_is 3 run forced -Jjmeterengine.force.system.exit=true '-Jkafka.verdict=acked>=1000; p99<1us' &&
    grep -q '^verdict: acked = 1000 (threshold >= 1000): PASS$' "$out/forced.out" &&
    grep -q '^verdict: FAIL (1 of 2 criteria failed: p99); jmeter -n exits with code 3$' "$out/forced.out"
}

experiment_quick() {
  scripts/experiment --quick --out "$out/experiments" >"$out/experiment.out" 2>&1
  local rc=$?
  tail -n 3 "$out/experiment.out"
  ((rc == 0)) && verify experiments-published "$out/experiments"
}

if [[ "$mode" == --experiment-only ]]; then
  check "scripts/experiment --quick outputs parse" experiment_quick
  summary
  exit
fi
check "verdict passes: exit 0, JTL complete" passing
check "verdict fails: exit 3 after the JTL and dashboard are complete" failing
check "JUnit XML parses: one case per criterion" junit_parses
check "an unmeasurable criterion fails" unmeasured
check "an invalid criterion is refused with the valid names, exit 3" invalid
check "regression against a doctored baseline, scripts/compare" regression
check "a baseline of another test is refused, the summary carries the test's identity" baseline_other_test
check "report paths: the JTL, the plan, a stranger's file are refused and untouched" reports_refused
check "baseline = summary file: refused at setup, the previous summary untouched" baseline_is_summary
check "no criterion, an infinite or impossible threshold, a bad generator limit: refused, exit 3" nothing_to_pass_on
check "-Jthreads=0: nothing measured, the criterion fails, exit 3" nothing_measured
check "jmeterengine.force.system.exit=true: the run's figures judged, exit 3" forced_exit
check "time breakdown present and consistent" breakdown
check "load-generator warning raised and not raised" generator
check "end-to-end plan: lag and consumer criteria judged" lag_and_consumer
check "verdict in the plan (Connection's Verdict fields, no -J): a failing criterion exits 3, JUnit written" plan_field_fails
check "verdict in the plan (Connection's Verdict fields, no -J): passing criteria exit 0" plan_field_passes
check "-Jkafka.verdict and -Jkafka.verdict.junit win over the Connection's fields" property_wins
if [[ "$mode" == all ]]; then
  check "scripts/experiment --quick outputs parse" experiment_quick
fi
summary
