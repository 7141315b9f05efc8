#!/usr/bin/env bash
# Schema-aware records (issue 14) against a REAL schema registry: Apicurio Registry started here by
# scripts/registry (with HTTPS too), stopped at the end.
#   - the engine's schema tests against the registry (cargo test --test schema_registry)
#   - interop with the reference implementation (tests/schema/interop: the Apache Avro Java library, schema
#     ids looked up through the registry's REST API), both ways: records our encoder framed are decoded by
#     Java, records Java encoded are decoded by our decoder
# Needs a built engine (scripts/build); builds the example and the interop jar itself. Run it outside a
# network namespace once (Maven Central for the registry and Avro), then anywhere.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="$root/target/schema-test"
rm -rf "$out"
mkdir -p "$out"
# shellcheck source=../lib/checks.sh
source "$root/tests/lib/checks.sh"

registry_url="http://127.0.0.1:${REGISTRY_PORT:-8081}/apis/ccompat/v7"
registry_tls_url="https://localhost:${REGISTRY_TLS_PORT:-8443}/apis/ccompat/v7"
schemas="$root/tests/schema/schemas"

started_registry=0
cleanup() {
  if [[ $started_registry == 1 ]]; then scripts/registry stop >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

build() {
  cargo build --release --locked -p kafka-native --example schema_records &&
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

if scripts/registry status >/dev/null 2>&1; then
  scripts/registry stop >/dev/null # a plain-HTTP registry from elsewhere: restart it with HTTPS as well
fi
if ! scripts/registry start --tls; then
  echo "the schema registry did not start"
  echo "0 passed, 1 failed"
  exit 1
fi
started_registry=1

engine_tests() {
  SCHEMA_REGISTRY_URL="$registry_url" SCHEMA_REGISTRY_TLS_URL="$registry_tls_url" \
    SCHEMA_REGISTRY_CA="$root/target/registry/tls/ca.pem" \
    cargo test --release --locked -p kafka-native --test schema_registry 2>&1 | tee "$out/engine.log"
  local rc=${PIPESTATUS[0]}
  # a registry that does not answer makes the tests skip: that is a failure here
  ! grep -q '^SKIPPED: no schema registry' "$out/engine.log" && ((rc == 0))
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

check "engine against the registry (cargo test --test schema_registry)" engine_tests
check "interop: our Avro records decoded by the Apache Avro Java library" rust_to_java
check "interop: Apache Avro Java records decoded by our decoder" java_to_rust
check "JSON Schema and Protobuf records round trip through the registry" formats_round_trip
summary
