#!/usr/bin/env bash
# Schema-aware records (issue 14) against a REAL schema registry: Apicurio Registry started here by
# scripts/registry (with HTTPS too; one already serving HTTPS is used as it is), stopped at the end if started
# here; Kafka is started too unless a broker runs.
#   - the engine's schema tests against the registry (cargo test --test schema_registry)
#   - JMeter runs jmeter-plans/schema-avro.jmx: Avro, JSON Schema and Protobuf records produced through the
#     sampler with schemas from files and from the registry, read back by the consumer sampler with 0 decode
#     errors (JTL checked); a JMeter JSON value encoded; a value that does not match refused (RECORD_INVALID)
#   - interop with the reference implementation (tests/schema/interop: the Apache Avro Java library, schema
#     ids looked up through the registry's REST API), both ways: records our encoder framed are decoded by
#     Java, records Java encoded are decoded by our decoder
# Needs a built jar (scripts/build); builds the example and the interop jar itself. Run it outside a
# network namespace once (Maven Central for the registry and Avro), then anywhere.
set -uo pipefail
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
# For engine_cargo (the build's OpenSSL and features), keeping this suite's locale (common.sh sets LANG=C LC_ALL=C).
caller_locale="$(export -p | grep -E '^declare -x (LANG|LC_ALL)=')"
# shellcheck source=../../scripts/lib/common.sh source-path=SCRIPTDIR
source "$root/scripts/lib/common.sh"
unset LANG LC_ALL
eval "$caller_locale"
enter_work_dir schema-test

registry_url="http://127.0.0.1:${REGISTRY_PORT:-8081}/apis/ccompat/v7"
registry_tls_url="https://localhost:${REGISTRY_TLS_PORT:-8443}/apis/ccompat/v7"
schemas="$root/tests/schema/schemas"

started_registry=0
started_kafka=0
cleanup() {
  if [[ $started_registry == 1 ]]; then scripts/registry stop >/dev/null 2>&1 || true; fi
  if [[ $started_kafka == 1 ]]; then scripts/kafka stop >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

build() {
  engine_cargo build --release --locked -p kafka-native --example schema_records &&
    mvn -q -B -Dstyle.color=never -f tests/schema/interop/pom.xml package
}
if ! build >"$out/build.log" 2>&1; then
  tail -n 30 "$out/build.log"
  echo "building the schema tools failed (log: $out/build.log)"
  echo "0 passed, 1 failed"
  exit 1
fi
records="$root/target/release/examples/schema_records"
interop() { "$(scripts/registry java)" -cp "$root/target/schema-interop/schema-interop-1.jar:$root/target/schema-interop/libs/*" interop.Interop "$@"; }

if scripts/registry status 2>/dev/null | grep -q ', tls)'; then
  echo "using the running registry (HTTP and HTTPS)" # e.g. scripts/test's, shared with the bench
else
  if scripts/registry status >/dev/null 2>&1; then
    scripts/registry stop >/dev/null # a plain-HTTP registry from elsewhere: restart it with HTTPS as well
  fi
  if ! scripts/registry start --tls; then
    echo "the schema registry did not start"
    echo "0 passed, 1 failed"
    exit 1
  fi
  started_registry=1
fi
if ! scripts/kafka status --nodes 1 >/dev/null 2>&1; then
  scripts/kafka start || { echo "Kafka did not start"; echo "0 passed, 1 failed"; exit 1; }
  started_kafka=1
fi
# On a fresh broker the group coordinator (and __consumer_offsets) appears on first use; a static-assignment
# consumer that asks for committed offsets before that gets NOT_COORDINATOR. Ask for a group once, until the
# coordinator answers, so that the consumer samplers below do not race it.
for _ in $(seq 1 30); do
  if scripts/kafka groups --describe --group kn-schema-warmup 2>&1 | grep -q "does not exist"; then break; fi
  sleep 1
done

engine_tests() {
  # Here a registry that does not answer fails the tests (a plain cargo test prints SKIPPED and passes them).
  SCHEMA_REGISTRY_URL="$registry_url" SCHEMA_REGISTRY_TLS_URL="$registry_tls_url" \
    SCHEMA_REGISTRY_CA="$root/target/registry/tls/ca.pem" SCHEMA_REGISTRY_REQUIRED=1 \
    engine_cargo test --release --locked -p kafka-native --test schema_registry 2>&1 |
    tee "$out/engine.log"
  local rc=${PIPESTATUS[0]}
  ((rc == 0)) && grep -Eq '^test result: ok\. [1-9][0-9]* passed; 0 failed; 0 ignored' "$out/engine.log"
}

# Our encoder → the Apache Avro Java library: 1000 records with rules, ids looked up by Java.
rust_to_java() {
  local topic="interop-r2j-$RANDOM"
  "$records" encode --topic "$topic" --count 1000 --out "$out/r2j.b64" \
    --set value.mode=avro --set value.schema.file="$schemas/order.avsc" \
    --set value.schema.rules.file="$schemas/order.rules" --set schema.registry.url="$registry_url" &&
    interop decode "$registry_url" "$out/r2j.b64" --seq id 1 | tee "$out/r2j.out" &&
    grep -qx '1000 passed, 0 failed' "$out/r2j.out"
}

# The Apache Avro Java library → our decoder: 1000 records Java registered and encoded; field id = 0, 1, ...
java_to_rust() {
  local subject="interop-j2r-$RANDOM-value"
  interop encode "$registry_url" "$subject" "$schemas/order.avsc" 1000 "$out/j2r.b64" &&
    "$records" decode --in "$out/j2r.b64" --set value.decode=avro --set schema.registry.url="$registry_url" \
      | tee "$out/j2r.out" &&
    grep -qx '1000 passed, 0 failed' "$out/j2r.out" &&
    # the first record Java wrote has id 0: the decoder's field assertion sees it
    head -n 1 "$out/j2r.b64" >"$out/j2r-first.b64" &&
    "$records" decode --in "$out/j2r-first.b64" --set value.decode=avro --set schema.registry.url="$registry_url" \
      --set value.assert=id=0 | grep -qx '1 passed, 0 failed'
}

# JSON Schema and Protobuf records from files, read back by our decoder through the registry.
formats_round_trip() {
  local mode file extra ok=0
  for mode in json-schema protobuf; do
    case "$mode" in
      json-schema) file="$schemas/customer.schema.json"; extra=(--set value.schema.rules.file="$schemas/customer.rules") ;;
      protobuf) file="$schemas/order.proto"; extra=(--set "value.schema.rules=id = seq(1)") ;;
    esac
    "$records" encode --topic "formats-$RANDOM" --count 500 --out "$out/$mode.b64" --set value.mode="$mode" \
      --set value.schema.file="$file" --set schema.registry.url="$registry_url" "${extra[@]}" &&
      "$records" decode --in "$out/$mode.b64" --set value.decode="$mode" --set schema.registry.url="$registry_url" \
        | tee "$out/$mode.out" && grep -qx '500 passed, 0 failed' "$out/$mode.out" || ok=1
  done
  return $ok
}

# run_plan NAME -J...: jmeter-plans/schema-avro.jmx headless; the JTL as CSV with sample counts.
run_plan() {
  local name="$1"
  shift
  scripts/jmeter -n -t jmeter-plans/schema-avro.jmx -l "$out/$name.jtl" -j "$out/$name.log" \
    -Jjmeter.save.saveservice.output_format=csv -Jjmeter.save.saveservice.sample_count=true \
    -Jschema.registry.url="$registry_url" -Jkafka.summary.file="$out/$name-producer.json" \
    -Jkafka.consumer.summary.file="$out/$name-consumer.json" "$@" >"$out/$name.out" 2>&1
  local rc=$?
  tail -n 5 "$out/$name.out"
  return $rc
}

# 2 producer threads x 50 samples x 10 messages = 1000 records; every one read back and decoded.
avro_file_topic=""
jmeter_avro_file() {
  avro_file_topic="schema-avro-file-$RANDOM$RANDOM"
  run_plan avro-file -Jkafka.topic="$avro_file_topic" -Jproducers=2 -Jloops=50 -Jmessages.per.sample=10 \
    -Jschema.file="$schemas/order.avsc" -Jschema.rules.file="$schemas/order.rules" -Jvalue.assert=currency=EUR &&
    python3 tests/schema/jtl_check.py "$out/avro-file.jtl" --produced 1000 --consumed 1000
}

# The same schema, now read from the registry (the subject the first run registered), with an inline rule.
jmeter_avro_registry() {
  [[ -n "$avro_file_topic" ]] || return 1
  run_plan avro-registry -Jkafka.topic="schema-avro-reg-$RANDOM$RANDOM" -Jproducers=2 -Jloops=25 \
    "-Jschema.file= " -Jschema.subject="$avro_file_topic-value" -Jschema.version=latest "-Jschema.rules.file= " \
    -Jschema.rules="currency = fixed(CHF)" -Jvalue.assert=currency=CHF &&
    python3 tests/schema/jtl_check.py "$out/avro-registry.jtl" --produced 500 --consumed 500
}

jmeter_json_schema() {
  run_plan json-schema -Jkafka.topic="schema-json-$RANDOM$RANDOM" -Jvalue.mode=json-schema -Jproducers=2 \
    -Jloops=25 -Jschema.file="$schemas/customer.schema.json" -Jschema.rules.file="$schemas/customer.rules" &&
    python3 tests/schema/jtl_check.py "$out/json-schema.jtl" --produced 500 --consumed 500
}

# Protobuf from the file (first message), then from the registry by subject with the second message (Refund).
jmeter_protobuf() {
  local topic="schema-proto-$RANDOM$RANDOM"
  run_plan protobuf-file -Jkafka.topic="$topic" -Jvalue.mode=protobuf -Jproducers=2 -Jloops=25 \
    -Jschema.file="$schemas/order.proto" "-Jschema.rules.file= " "-Jschema.rules=id = seq(1)" &&
    python3 tests/schema/jtl_check.py "$out/protobuf-file.jtl" --produced 500 --consumed 500 &&
    run_plan protobuf-registry -Jkafka.topic="$topic-refunds" -Jvalue.mode=protobuf -Jproducers=1 -Jloops=20 \
      "-Jschema.file= " -Jschema.subject="$topic-value" -Jschema.message=shop.v1.Refund "-Jschema.rules.file= " \
      "-Jschema.rules=order_code = template(R-{seq})" -Jvalue.assert=order_code=R-0 -Jconsumers=1 \
      -Jmessages.per.sample=1 &&
    # one consumer, one record asserted R-0 ... every record but the first fails the assertion: ASSERTION_FAILED
    python3 tests/schema/jtl_check.py "$out/protobuf-registry.jtl" --produced 20 --consumer-code ASSERTION_FAILED
}

# The Kafka Producer's and Consumer's Registry password field (from a -q file, as its tooltip advises): the run works
# (the registry here does not ask for credentials) and the password is in no output: JTL, jmeter.log, stdout, summaries.
password_never_shown() {
  local secret="kn-Secret-$RANDOM$RANDOM"
  printf 'schema.registry.username=load-test\nschema.registry.password=%s\n' "$secret" >"$out/secret.properties"
  run_plan secret -q "$out/secret.properties" -Jkafka.topic="schema-secret-$RANDOM$RANDOM" -Jproducers=1 -Jloops=5 \
    -Jconsumers=1 -Jschema.file="$schemas/order.avsc" -Jschema.rules.file="$schemas/order.rules" &&
    python3 tests/schema/jtl_check.py "$out/secret.jtl" --produced 50 --consumed 50 &&
    if grep -l "$secret" "$out"/secret.jtl "$out"/secret.log "$out"/secret.out "$out"/secret-*.json; then
      echo "the registry password appears in the files above"
      return 1
    fi
}

# A JMeter-built JSON value encoded against the schema; then one that does not match is refused, per sample.
jmeter_json_input() {
  local record='{"id": 7, "code": "J7", "status": "PAID", "ref": "0d9c5c4e-33a1-4d0f-8f5e-000000000007", "created": 1764547200000, "updated": 1764547200000000, "delivery_day": 20423, "total": "10.50", "currency": "EUR", "note": null, "customer": {"id": 1, "name": "Ann", "email": "ann@example.com", "tier": "gold", "address": {"street": "S", "city": "C", "zip": "1", "country": "DE"}}, "lines": [], "tags": ["x"], "attributes": {}, "gift": true, "weight_kg": 1.5}'
  run_plan json-input -Jkafka.topic="schema-input-$RANDOM$RANDOM" -Jproducers=1 -Jloops=20 -Jschema.input=jmeter \
    "-Jschema.rules.file= " -Jvalue="$record" -Jvalue.assert=customer.tier=gold -Jconsumers=1 &&
    python3 tests/schema/jtl_check.py "$out/json-input.jtl" --produced 200 --consumed 200 &&
    run_plan json-input-bad -Jkafka.topic="schema-input-bad-$RANDOM$RANDOM" -Jproducers=1 -Jloops=3 \
      -Jschema.input=jmeter "-Jschema.rules.file= " '-Jvalue={"id": "seven"}' -Jconsumers=1 &&
    python3 tests/schema/jtl_check.py "$out/json-input-bad.jtl" --produced 0 --producer-code RECORD_INVALID
}

check "engine against the registry (cargo test --test schema_registry)" engine_tests
check "interop: our Avro records decoded by the Apache Avro Java library" rust_to_java
check "interop: Apache Avro Java records decoded by our decoder" java_to_rust
check "JSON Schema and Protobuf records round trip through the registry" formats_round_trip
check "JMeter: Avro from a file, 1000 records produced and decoded by the consumer sampler" jmeter_avro_file
check "JMeter: Avro with the schema from the registry (subject, latest)" jmeter_avro_registry
check "JMeter: JSON Schema from a file, produced and decoded" jmeter_json_schema
check "JMeter: Protobuf from a file and from the registry (second message), decoded; assertion failures coded" jmeter_protobuf
check "JMeter: a JSON value from JMeter encoded as Avro; a mismatching one refused (RECORD_INVALID)" jmeter_json_input
check "JMeter: the Registry password field is in no JTL, log or summary" password_never_shown
if [[ -n "$(find "$root" -maxdepth 3 -name 'hs_err_pid*.log' -newer "$out/build.log" 2>/dev/null)" ]]; then
  check "no JVM crash (hs_err_pid*.log)" false
fi
summary
