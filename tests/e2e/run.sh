#!/usr/bin/env bash
# End to end: JMeter (assembled by scripts/jmeter, with only our jar added to lib/ext) runs the provided
# plans headless against the local broker; the JTL, the engine's summary and the topic's offsets must agree.
# Needs a built jar (scripts/build) and a running broker (scripts/kafka start).
set -uo pipefail
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
enter_work_dir e2e
verify() { python3 tests/e2e/checks.py "$@"; } # verify CHECK ARG...: one of tests/e2e/checks.py

# Runs the baseline plan (or $PLAN); extra -J options follow the name.
run_plan() {
  local name="$1"
  shift
  baseline_plan "$name" "$@" >"$out/$name.out" 2>&1
  local rc=$?
  cat "$out/$name.out"
  return $rc
}

baseline() {
  local topic="e2e-baseline-$RANDOM$RANDOM"
  run_plan baseline -Jkafka.topic="$topic" -Jthreads=4 -Jloops=250 -Jrecord.size=1024 -Jtopic.partitions=16 -e -o "$out/report" &&
    python3 tests/e2e/jtl_check.py "$out/baseline.jtl" --rows 1000 --messages 1000 --all-ok --summary "$out/baseline-summary.json" &&
    grep -Eq '^1000 records sent, [0-9.]+ records/sec \([0-9.]+ MB/sec\), [0-9.]+ ms avg latency, [0-9.]+ ms max latency, [0-9]+ ms 50th, [0-9]+ ms 95th, [0-9]+ ms 99th, [0-9]+ ms 99.9th\.$' "$out/baseline.out" &&
    [[ -f "$out/report/index.html" ]] || return 1
  [[ "$(topic_messages "$topic")" == 1000 ]] || { echo "topic $topic holds $(topic_messages "$topic") messages, expected 1000"; return 1; }
}

# Issue 4's acceptance run: 100,000 messages in batch samples, audited. JTL sample counts = summary acked =
# audit found = the topic's offsets, with no duplicates and nothing missing.
batch_audit() {
  local topic="e2e-batch-$RANDOM$RANDOM"
  run_plan batch -Jkafka.topic="$topic" -Jthreads=4 -Jloops=250 -Jmessages.per.sample=100 -Jlinger.ms=5 \
    -Jrecord.size=200 -Jaudit=true -Jpolicy=reliability -Jacks=all &&
    python3 tests/e2e/jtl_check.py "$out/batch.jtl" --rows 1000 --messages 100000 --all-ok --summary "$out/batch-summary.json" &&
    grep -Eq '^audit of run [0-9a-f-]+: 100000 acked, 100000 found, 0 missing, 0 duplicates, 0 unexpected' "$out/batch.out" &&
    verify audit-complete "$out/batch-summary.json" ||
    return 1
  [[ "$(topic_messages "$topic")" == 100000 ]] || { echo "topic $topic holds $(topic_messages "$topic") messages, expected 100000"; return 1; }
  # The same audit on demand, from the run id in the summary.
  local run_id
  run_id="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run_id"])' "$out/batch-summary.json")"
  scripts/audit --topic "$topic" --run-id "$run_id" | tee "$out/audit.out" &&
    grep -q "100000 found, 0 missing, 0 duplicates" "$out/audit.out"
}

# Failures are counted exactly: every oversized message fails with the broker's or the client's reason.
oversized() {
  local topic="e2e-big-$RANDOM$RANDOM"
  run_plan big -Jkafka.topic="$topic" -Jthreads=2 -Jloops=5 -Jrecord.size=2000000
  verify oversized-counted "$out/big.jtl" "$out/big-summary.json"
}

# XML results (output_format=xml): every Kafka sample is a <sample> row that JMeter can read back, a batch sample
# counts its messages (sc) and its failed messages (ec); JMeter logs no "Error trying to record a sample".
xml_results() {
  local topic="e2e-xml-$RANDOM$RANDOM"
  run_plan xml -Jkafka.topic="$topic" -Jthreads=2 -Jloops=5 -Jmessages.per.sample=3 -Jrecord.size=2000000 \
    -Jjmeter.save.saveservice.output_format=xml >/dev/null
  if grep -q "Error trying to record a sample" "$out/xml.log"; then
    grep -m 3 -A 2 "Error trying to record a sample" "$out/xml.log"
    return 1
  fi
  verify xml-results-counted "$out/xml.jtl"
}

# The pre-flight check warns (once) when threads outnumber the topic's partitions, and the test still runs.
preflight_warns() {
  local topic="e2e-few-$RANDOM$RANDOM"
  run_plan few -Jkafka.topic="$topic" -Jthreads=4 -Jloops=5 -Jtopic.partitions=2 &&
    python3 tests/e2e/jtl_check.py "$out/few.jtl" --rows 20 --all-ok &&
    [[ "$(grep -c 'pre-flight: topic .* has 2 partition(s) for 4 producing threads' "$out/few.log")" == 1 ]]
}

# value.mode=jmeter, key and headers: evaluated by JMeter for every sample (the Kafka Producer's per-sample fields;
# its other settings are read once per thread, and outside the GUI JMeter no longer prepares them before each sample).
per_sample_value() {
  local topic="e2e-value-$RANDOM$RANDOM" plan="$out/jmeter-value.jmx"
  sed -e 's|<stringProp name="valueMode">fixed</stringProp>|<stringProp name="valueMode">jmeter</stringProp>|' \
    -e 's|<stringProp name="value" />|<stringProp name="value">v-${__threadNum}-${__counter(FALSE,)}</stringProp>|' \
    -e 's|<stringProp name="key" />|<stringProp name="key">k-${__threadNum}-${__counter(TRUE,)}</stringProp>|' \
    -e 's|<stringProp name="headers" />|<stringProp name="headers">user=u${__threadNum};n=${__counter(TRUE,)}</stringProp>|' \
    jmeter-plans/producer-baseline.jmx >"$plan"
  { grep -q 'valueMode">jmeter<' "$plan" && grep -q 'name="key">k-' "$plan" && grep -q 'name="headers">user=' "$plan"; } ||
    { echo "the baseline plan's valueMode/value/key/headers fields changed: update this check"; return 1; }
  PLAN="$plan" run_plan value -Jkafka.topic="$topic" -Jthreads=2 -Jloops=50 -Jtopic.partitions=2 -Jkey.mode=fixed &&
    python3 tests/e2e/jtl_check.py "$out/value.jtl" --rows 100 --messages 100 --all-ok || return 1
  scripts/kafka console-consumer --bootstrap-server 127.0.0.1:9092 \
    --topic "$topic" --from-beginning --max-messages 100 --timeout-ms 30000 --property print.key=true \
    --property print.headers=true >"$out/value.txt" 2>"$out/value.err"
  verify fields-per-sample "$out/value.txt"
}

# A plan with a mistake stops at once with one readable failed sample per thread, not thousands.
bad_config() {
  run_plan bad -Jkafka.topic=e2e-bad -Jthreads=2 -Jloops=100 -Jacks=banana -Jtopic.create=false
  stopped_at_first_failure "$out/bad.jtl" CONFIG_ERROR acks banana
}

# SASL_SSL with SCRAM-SHA-512 (the broker must run with `scripts/kafka start --secure`): the right password
# sends, a wrong one fails with an authentication error, and neither password appears in the JTL or the logs.
# Passwords go in a properties file (-q): JMeter itself logs every -J value.
secure() {
  local creds="$root/target/kafka/secure/credentials.env"
  [[ -f "$creds" ]] || { echo "no $creds: start the broker with scripts/kafka start --secure"; return 1; }
  # shellcheck disable=SC1090
  source "$creds"
  local topic="e2e-secure-$RANDOM$RANDOM" wrong="wrong-$RANDOM$RANDOM"
  local sasl="security.protocol=SASL_SSL;sasl.mechanism=SCRAM-SHA-512;sasl.username=$KAFKA_SECURE_USER;ssl.ca.location=$KAFKA_CA_PEM"
  printf 'extra.properties=%s;sasl.password=%s\n' "$sasl" "$KAFKA_SECURE_PASSWORD" >"$out/secure.properties"
  printf 'extra.properties=%s;sasl.password=%s\n' "$sasl" "$wrong" >"$out/secure-bad.properties"
  run_plan secure -q "$out/secure.properties" -Jkafka.bootstrap="$KAFKA_SASL_SSL_BOOTSTRAP" -Jkafka.topic="$topic" \
    -Jthreads=2 -Jloops=50 -Jtopic.partitions=2 &&
    python3 tests/e2e/jtl_check.py "$out/secure.jtl" --rows 100 --messages 100 --all-ok --summary "$out/secure-summary.json" ||
    return 1
  run_plan secure-bad -q "$out/secure-bad.properties" -Jkafka.bootstrap="$KAFKA_SASL_SSL_BOOTSTRAP" \
    -Jkafka.topic="$topic" -Jthreads=2 -Jloops=50 -Jtimeout.ms=5000 -Jtopic.create=false
  verify wrong-password-stops "$out/secure-bad.jtl" || return 1
  if grep -rlF -e "$KAFKA_SECURE_PASSWORD" -e "$wrong" "$out"/secure*.jtl "$out"/secure*.log "$out"/secure*.out "$out"/secure*.json; then
    echo "a password appears in the files above"
    return 1
  fi
}

check "baseline plan: 1000 rows OK = summary = topic, dashboard written" baseline
check "batch mode, audited: 100,000 messages = JTL counts = summary = audit = topic" batch_audit
check "oversized messages: 10 failures, each MSG_SIZE_TOO_LARGE, counted exactly" oversized
check "XML results: every sample a <sample> row with its messages and failures counted" xml_results
check "pre-flight warns once when threads outnumber partitions" preflight_warns
check "JMeter evaluates value (value.mode=jmeter), key and headers for every sample (100 distinct of each in the topic)" per_sample_value
check "bad parameter: one clear failed sample, test stopped" bad_config
check "SASL_SSL: right password sends, wrong one fails with an authentication error, no password in any output" secure
summary
