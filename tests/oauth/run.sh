#!/usr/bin/env bash
# OAUTHBEARER with OIDC against a real identity provider, and mutual TLS, through JMeter: Keycloak
# (scripts/keycloak, realm stack/keycloak/kafka-realm.json, 60-s tokens) and a broker of this suite's own
# (scripts/kafka --port-base OAUTH_PORT_BASE start --secure --oauth: token listeners checking audience and
# issuer against Keycloak's keys, an mTLS listener, SCRAM for comparison). A long run must refresh its tokens
# with no failed sample; each bad input fails one sample with a clear message within seconds; no secret appears
# in any output. The schema registry (Apicurio with OIDC, scripts/registry --oidc, on ports OAUTH_PORT_BASE+9
# and +10) takes bearer tokens of the same client, and client certificates behind tests/oauth/forward.py --mtls (+11). Needs a built jar (scripts/build). Starts Keycloak, the broker
# and the registry unless they run, and stops what it started. OAUTH_LONG_SECONDS (default 110) is the long run's
# length: 2 refreshes need more than 96 s.
# The long run, the token endpoint's outage, the refused certificates and the registry's runs start at once, in the
# background; the other checks run beside them.
set -uo pipefail
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
enter_work_dir oauth
verify() { python3 "$root/tests/oauth/checks.py" "$@"; } # verify CHECK ARG...: one of tests/oauth/checks.py

BASE="${OAUTH_PORT_BASE:-14192}"
LONG="${OAUTH_LONG_SECONDS:-110}"
DIR="$root/target/kafka/base-$BASE/oauth"
started_keycloak=0
started_kafka=0
# The schema registry with OIDC (Apicurio, its own ports and run files beside any shared registry)
REG_URL="http://127.0.0.1:$((BASE + 9))/apis/ccompat/v7"
REG_MTLS_URL="https://127.0.0.1:$((BASE + 11))/apis/ccompat/v7" # tests/oauth/forward.py --mtls in front of it
registry() {
  REGISTRY_PORT=$((BASE + 9)) REGISTRY_MANAGEMENT_PORT=$((BASE + 10)) REGISTRY_RUN_DIR="$root/target/registry/run-oauth-$BASE" \
    scripts/registry "$@"
}
started_registry=0

cleanup() {
  if ((started_registry)); then registry stop >/dev/null 2>&1; fi
  if ((started_kafka)); then scripts/kafka --port-base "$BASE" stop >/dev/null 2>&1; fi
  if ((started_keycloak)); then scripts/keycloak stop >/dev/null 2>&1; fi
}
trap cleanup EXIT

scripts/keycloak status >/dev/null 2>&1 || started_keycloak=1
t0=$SECONDS
scripts/keycloak start || { echo "Keycloak did not start"; echo "0 passed, 1 failed"; exit 1; }
echo "Keycloak ready after $((SECONDS - t0)) s"
scripts/kafka --port-base "$BASE" status >/dev/null 2>&1 || started_kafka=1
scripts/kafka --port-base "$BASE" start --secure --oauth || { echo "the broker did not start"; echo "0 passed, 1 failed"; exit 1; }
# shellcheck disable=SC1091
source "$DIR/oauth.env"
# shellcheck disable=SC1090 # this node's own secure client settings (scripts/kafka --port-base writes them there)
source "$root/target/kafka/base-$BASE/secure/credentials.env"
SCRAM_BOOTSTRAP="127.0.0.1:$((BASE + 2))"
BROKER_LOG="$root/target/kafka/base-$BASE/logs/server.log"

# q NAME PROPS...: a JMeter -q file $out/NAME.properties whose extra.properties are PROPS joined by ';'.
q() {
  local name="$1" IFS=';'
  shift
  printf 'extra.properties=%s\n' "$*" >"$out/$name.properties"
}
OIDC=(security.protocol=SASL_PLAINTEXT sasl.mechanism=OAUTHBEARER sasl.oauthbearer.method=oidc
  "sasl.oauthbearer.token.endpoint.url=$KAFKA_OAUTH_TOKEN_URL" "sasl.oauthbearer.client.id=$KAFKA_OAUTH_CLIENT_ID")
SECRET="sasl.oauthbearer.client.secret=$KAFKA_OAUTH_CLIENT_SECRET"

# plan NAME BOOTSTRAP ARGS...: the baseline plan with $out/NAME.properties; its stdout in $out/NAME.out and the
# milliseconds from JMeter's start to the first acknowledged sample in $out/NAME.first.
plan() {
  local name="$1" bootstrap="$2" start
  shift 2
  start="$(date +%s%3N)"
  baseline_plan "$name" -q "$out/$name.properties" -Jkafka.bootstrap="$bootstrap" "$@" >"$out/$name.out" 2>&1
  verify first-ok-after "$out/$name.jtl" "$start" >"$out/$name.first"
}

# all_ok NAME ROWS: every one of ROWS rows succeeded.
all_ok() {
  python3 tests/e2e/jtl_check.py "$out/$1.jtl" --rows "$2" --messages "$2" --all-ok --summary "$out/$1-summary.json"
}

# fails_fast NAME SECONDS CODE WORD...: the plan stopped at its first sample, which failed with CODE and a
# message naming every WORD, within SECONDS of the sample's start.
fails_fast() {
  local name="$1" secs="$2"
  shift 2
  stopped_at_first_failure "$out/$name.jtl" "$@" || return 1
  verify failed-within "$out/$name.jtl" "$secs"
}

bad_run() { # bad_run NAME BOOTSTRAP: a short plan that is expected to fail at once
  plan "$1" "$2" -Jkafka.topic="oauth-bad-$RANDOM" -Jthreads=1 -Jloops=20 -Jtimeout.ms=10000 -Jtopic.create=false
}

# The long run: 60-s tokens, librdkafka asks for a new one at 80 % of its life (48 s); two producers (one per
# thread) share each token. The broker re-authenticates sessions at the token's expiry, so a refresh that did not
# happen fails samples. It runs in the background from the suite's start (it mostly waits on its rate), the other
# checks beside it; long_check reads its result last.
long_run() {
  q long "${OIDC[@]}" "$SECRET" "sasl.oauthbearer.extensions=logicalCluster=lkc-local,traceId=long$$"
  local rate=10 loops=$((LONG * 10))
  plan long "$KAFKA_OAUTH_BOOTSTRAP" -Jkafka.topic="oauth-long-$RANDOM$RANDOM" -Jthreads=2 -Jloops="$loops" \
    -Jtarget.rate="$rate" -Jproducer.scope=thread -Jtopic.partitions=2
  all_ok long $((2 * loops)) || return 1
  grep -E '^oauth: ' "$out/long.out"
  verify refreshed "$out/long-summary.json" "$LONG" || return 1
  # the refreshed tokens carry the SASL extensions too: the broker saw them with more than one token
  verify extensions-seen "$BROKER_LOG" "traceId=long$$" 2
}
long_check() {
  wait "${bg_pid[long_run]}"
  local rc=$?
  cat "$out/long_run.bg"
  return "$rc"
}

# The token endpoint goes down mid-test: the plan reaches Keycloak through tests/oauth/forward.py, which is stopped
# 3 s after the first token was fetched and started again 25 s later. With 15-s tokens (client jmeter-short)
# librdkafka asks for a new one at 12 s, which fails, and again every 10 s. Samples succeed while the token lives,
# fail with TOKEN_ERROR naming the endpoint and the cause once it has expired, and succeed again after the next
# refresh; the summary counts the failed refreshes. Writes $out/outage.times: first fetch, stop, restart (epoch ms).
outage_run() {
  local port=$((BASE + 7)) fpid jm
  [[ "$KAFKA_OAUTH_TOKEN_URL" =~ ^http://([^/:]+):([0-9]+)(/.*)$ ]] ||
    { echo "not an http://host:port/ token URL: $KAFKA_OAUTH_TOKEN_URL"; return 1; }
  local host="${BASH_REMATCH[1]}" kport="${BASH_REMATCH[2]}" url="http://127.0.0.1:$port${BASH_REMATCH[3]}"
  echo "$url" >"$out/outage.url"
  local oidc=("${OIDC[@]/#sasl.oauthbearer.token.endpoint.url=*/sasl.oauthbearer.token.endpoint.url=$url}")
  q outage "${oidc[@]/#sasl.oauthbearer.client.id=*/sasl.oauthbearer.client.id=jmeter-short}" \
    sasl.oauthbearer.client.secret=jmeter-short-secret
  python3 tests/oauth/forward.py 127.0.0.1 "$port" "$host" "$kport" >>"$out/forward.log" 2>&1 &
  fpid=$!
  plan outage "$KAFKA_OAUTH_BOOTSTRAP" -Jkafka.topic="oauth-outage-$RANDOM" -Jthreads=1 -Jloops=220 \
    -Jtarget.rate=4 -Jtimeout.ms=2000 -Jtopic.partitions=1 &
  jm=$!
  wait_for "$out/forward.log" " connection" 60 || { kill "$fpid" "$jm"; echo "no token request came"; return 1; }
  local first stopped
  first="$(awk '/ connection$/ { print $1; exit }' "$out/forward.log")"
  sleep 3
  kill "$fpid" && wait "$fpid" 2>/dev/null
  stopped="$(date +%s%3N)"
  sleep 25
  python3 tests/oauth/forward.py 127.0.0.1 "$port" "$host" "$kport" >>"$out/forward.log" 2>&1 &
  fpid=$!
  echo "$first $stopped $(date +%s%3N)" >"$out/outage.times"
  wait "$jm"
  kill "$fpid"
}

outage_check() {
  wait "${bg_pid[outage_run]}"
  cat "$out/outage_run.bg"
  [[ -s "$out/outage.times" ]] || return 1
  # shellcheck disable=SC2046 # three numbers
  verify outage-seen "$out/outage.jtl" "$out/outage-summary.json" "$(cat "$out/outage.url")" $(cat "$out/outage.times")
}

# OIDC over TLS, and the time to the first acknowledged sample against SCRAM-SHA-512 on the same broker.
first_ack() {
  q oidc-ssl security.protocol=SASL_SSL "ssl.ca.location=$KAFKA_CA_PEM" "${OIDC[@]:1}" "$SECRET"
  plan oidc-ssl "$KAFKA_OAUTH_SSL_BOOTSTRAP" -Jkafka.topic="oauth-ssl-$RANDOM" -Jthreads=1 -Jloops=20 -Jtopic.partitions=1
  all_ok oidc-ssl 20 || return 1
  q scram security.protocol=SASL_PLAINTEXT sasl.mechanism=SCRAM-SHA-512 "sasl.username=$KAFKA_SECURE_USER" \
    "sasl.password=$KAFKA_SECURE_PASSWORD"
  plan scram "$SCRAM_BOOTSTRAP" -Jkafka.topic="oauth-scram-$RANDOM" -Jthreads=1 -Jloops=20 -Jtopic.partitions=1
  all_ok scram 20 || return 1
  q oidc-first "${OIDC[@]}" "$SECRET"
  plan oidc-first "$KAFKA_OAUTH_BOOTSTRAP" -Jkafka.topic="oauth-first-$RANDOM" -Jthreads=1 -Jloops=20 -Jtopic.partitions=1
  all_ok oidc-first 20 || return 1
  echo "JMeter start to first acknowledged sample: OIDC $(cat "$out/oidc-first.first") ms (SASL_PLAINTEXT), $(cat "$out/oidc-ssl.first") ms (SASL_SSL); SCRAM-SHA-512 $(cat "$out/scram.first") ms"
}

# Producers, consumers (a group), the lag monitor and the audit's read-back in one plan, every client on tokens:
# every acked message consumed once, lag ok, each client kind served by the shared token.
end_to_end() {
  q e2e "${OIDC[@]}" "$SECRET"
  scripts/jmeter -n -t jmeter-plans/end-to-end.jmx -q "$out/e2e.properties" -Jkafka.bootstrap="$KAFKA_OAUTH_BOOTSTRAP" \
    -l "$out/e2e.jtl" -j "$out/e2e.log" -Jjmeter.save.saveservice.output_format=csv -Jsample_variables=kafka.lag \
    -Jkafka.summary.file="$out/e2e-producer.json" -Jkafka.consumer.summary.file="$out/e2e-consumer.json" \
    -Jduration=12 -Jdrain=8 -Jlag.delay=3 -Jlag.interval.ms=1500 -Jproducer.samples.per.minute=3000 >"$out/e2e.out" 2>&1 &&
    python3 tests/consumer/check.py "$out/e2e.jtl" --consumer-summary "$out/e2e-consumer.json" \
      --producer-summary "$out/e2e-producer.json" --match-producer --no-rebalance --latency-below-ms 5000 --lag ok &&
    grep -E '^oauth: ' "$out/e2e.out"
}

unreachable() {
  q unreachable "${OIDC[@]/#sasl.oauthbearer.token.endpoint.url=*/sasl.oauthbearer.token.endpoint.url=http://127.0.0.1:1/token}" "$SECRET"
  bad_run unreachable "$KAFKA_OAUTH_BOOTSTRAP"
  fails_fast unreachable 12 TOKEN_ERROR "cannot reach the token endpoint http://127.0.0.1:1/token" "Connection refused"
}

not_http() {
  q not-http "${OIDC[@]/#sasl.oauthbearer.token.endpoint.url=*/sasl.oauthbearer.token.endpoint.url=ftp://127.0.0.1/token}" "$SECRET"
  bad_run not-http "$KAFKA_OAUTH_BOOTSTRAP"
  fails_fast not-http 5 CONFIG_ERROR "sasl.oauthbearer.token.endpoint.url" "is not an http:// or https:// URL"
}

html_answer() {
  # the realm's logout page: another endpoint of the same realm, a likely slip
  q html "${OIDC[@]/#sasl.oauthbearer.token.endpoint.url=*/sasl.oauthbearer.token.endpoint.url=$KAFKA_OAUTH_ISSUER/protocol/openid-connect/logout}" "$SECRET"
  bad_run html "$KAFKA_OAUTH_BOOTSTRAP"
  fails_fast html 12 TOKEN_ERROR "answered HTTP 200 with text/html" "not a JSON token answer"
}

# Keycloak's JWKS endpoint answers a POST with JSON, and no token in it.
json_without_token() {
  q no-token "${OIDC[@]/#sasl.oauthbearer.token.endpoint.url=*/sasl.oauthbearer.token.endpoint.url=$KAFKA_OAUTH_ISSUER/protocol/openid-connect/certs}" "$SECRET"
  bad_run no-token "$KAFKA_OAUTH_BOOTSTRAP"
  fails_fast no-token 12 TOKEN_ERROR "certs refused client jmeter-load: HTTP 405 Method Not Allowed (HTTP 405)" "is it the token endpoint?"
}

wrong_secret() {
  q wrong-secret "${OIDC[@]}" "sasl.oauthbearer.client.secret=not-the-secret-$$"
  bad_run wrong-secret "$KAFKA_OAUTH_BOOTSTRAP"
  fails_fast wrong-secret 12 AUTHENTICATION "refused client jmeter-load" "HTTP 401" "check sasl.oauthbearer.client.id and sasl.oauthbearer.client.secret"
}

scope_rejected() {
  q scope "${OIDC[@]}" "$SECRET" sasl.oauthbearer.scope=kafka-admin
  bad_run scope "$KAFKA_OAUTH_BOOTSTRAP"
  fails_fast scope 12 TOKEN_ERROR "invalid_scope" "kafka-admin" "check sasl.oauthbearer.scope"
}

no_token_url() {
  q no-url "${OIDC[@]/#sasl.oauthbearer.token.endpoint.url=*/}" "$SECRET"
  bad_run no-url "$KAFKA_OAUTH_BOOTSTRAP"
  fails_fast no-url 5 CONFIG_ERROR "sasl.oauthbearer.token.endpoint.url: missing"
}

# A token of another audience: Keycloak gives it, the broker refuses it.
wrong_audience() {
  q audience "${OIDC[@]/#sasl.oauthbearer.client.id=*/sasl.oauthbearer.client.id=jmeter-wrong-audience}" \
    sasl.oauthbearer.client.secret=wrong-audience-secret
  bad_run audience "$KAFKA_OAUTH_BOOTSTRAP"
  fails_fast audience 15 AUTHENTICATION "invalid_token" "audience"
}

# SASL extensions: the broker (stack/kafka/oauth/ExtensionsCheck.java) takes its own logicalCluster and refuses
# another, so the refusal shows that the extension reached it; a malformed list is a setup error that says why.
extensions() {
  q ext-ok "${OIDC[@]}" "$SECRET" "sasl.oauthbearer.extensions=logicalCluster=lkc-local,traceId=ok$$"
  plan ext-ok "$KAFKA_OAUTH_BOOTSTRAP" -Jkafka.topic="oauth-ext-$RANDOM" -Jthreads=1 -Jloops=20
  all_ok ext-ok 20 || return 1
  verify extensions-seen "$BROKER_LOG" "traceId=ok$$" 1 || return 1
  q ext-wrong "${OIDC[@]}" "$SECRET" "sasl.oauthbearer.extensions=logicalCluster=lkc-other"
  bad_run ext-wrong "$KAFKA_OAUTH_BOOTSTRAP"
  fails_fast ext-wrong 15 AUTHENTICATION "lkc-other" "check sasl.oauthbearer.extensions" || return 1
  q ext-bad "${OIDC[@]}" "$SECRET" "sasl.oauthbearer.extensions=auth=x"
  bad_run ext-bad "$KAFKA_OAUTH_BOOTSTRAP"
  fails_fast ext-bad 5 CONFIG_ERROR "sasl.oauthbearer.extensions: the key 'auth' is reserved"
}

MTLS=(security.protocol=SSL "ssl.ca.location=$KAFKA_CA_PEM" "ssl.certificate.location=$KAFKA_CLIENT_CERT")
mtls_good() {
  q mtls "${MTLS[@]}" "ssl.key.location=$KAFKA_CLIENT_KEY_ENCRYPTED" "ssl.key.password=$KAFKA_CLIENT_KEY_PASSWORD"
  plan mtls "$KAFKA_MTLS_BOOTSTRAP" -Jkafka.topic="oauth-mtls-$RANDOM" -Jthreads=1 -Jloops=20 -Jtopic.partitions=1
  all_ok mtls 20
}

mtls_bad() {
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$out/other.key" 2>/dev/null || return 1
  openssl x509 -in "$KAFKA_CA_PEM" -outform DER -out "$out/ca.der" || return 1
  q mtls-mismatch "${MTLS[@]}" "ssl.key.location=$out/other.key"
  bad_run mtls-mismatch "$KAFKA_MTLS_BOOTSTRAP"
  fails_fast mtls-mismatch 5 CONFIG_ERROR "the client key (ssl.key.location) does not match the client certificate" || return 1
  q mtls-password "${MTLS[@]}" "ssl.key.location=$KAFKA_CLIENT_KEY_ENCRYPTED" "ssl.key.password=wrong-key-pass-$$"
  bad_run mtls-password "$KAFKA_MTLS_BOOTSTRAP"
  fails_fast mtls-password 5 CONFIG_ERROR "ssl.key.location" "ssl.key.password its password (wrong or missing)" || return 1
  q mtls-ca "${MTLS[@]/#ssl.ca.location=*/ssl.ca.location=$out/ca.der}" "ssl.key.location=$KAFKA_CLIENT_KEY"
  bad_run mtls-ca "$KAFKA_MTLS_BOOTSTRAP"
  fails_fast mtls-ca 5 CONFIG_ERROR "ssl.ca.location" "is not a PEM file"
}

# The certificates the broker or the client refuse, made here with openssl: the broker's certificate checked
# against another CA (unknown CA) and under an address it does not name (127.0.0.2, through tests/oauth/forward.py;
# hostname verification is on by default), a client certificate of another CA (the broker refuses it), client
# certificates of the right CA that expired or are not valid yet, and no client certificate at all. Each fails the first sample with what to change.
mtls_refused_run() {
  local d="$out/certs" ca_key fpid
  ca_key="$(dirname "$KAFKA_CA_PEM")/ca.key"
  mkdir -p "$d"
  {
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=another CA" -keyout "$d/other-ca.key" \
      -out "$d/other-ca.pem" -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign &&
      openssl req -new -key "$KAFKA_CLIENT_KEY" -subj /CN=jmeter-load -out "$d/client.csr" &&
      openssl x509 -req -in "$d/client.csr" -CA "$d/other-ca.pem" -CAkey "$d/other-ca.key" -set_serial 7 -days 2 \
        -out "$d/untrusted.pem" &&
      : >"$d/index.txt" && echo 01 >"$d/serial" &&
      printf '%s\n' "[ca]" "default_ca = local" "[local]" "database = $d/index.txt" "new_certs_dir = $d" \
        "serial = $d/serial" "default_md = sha256" "policy = any" "unique_subject = no" "x509_extensions = client" \
        "[any]" "commonName = supplied" "[client]" "basicConstraints = CA:FALSE" "extendedKeyUsage = clientAuth" \
        >"$d/ca.cnf" &&
      # openssl ca, not x509 -req: only it sets both dates, and OpenSSL 3.0's x509 has no -not_before
      openssl ca -batch -config "$d/ca.cnf" -cert "$KAFKA_CA_PEM" -keyfile "$ca_key" -notext -in "$d/client.csr" \
        -startdate 20200101000000Z -enddate 20200102000000Z -out "$d/expired.pem" &&
      openssl ca -batch -config "$d/ca.cnf" -cert "$KAFKA_CA_PEM" -keyfile "$ca_key" -notext -in "$d/client.csr" \
        -startdate 20990101000000Z -enddate 21000101000000Z -out "$d/future.pem"
  } >"$d/openssl.log" 2>&1 || { tail -n 5 "$d/openssl.log"; return 1; }
  local good=(security.protocol=SSL "ssl.ca.location=$KAFKA_CA_PEM" "ssl.key.location=$KAFKA_CLIENT_KEY")
  q tls-unknown-ca "${good[@]/#ssl.ca.location=*/ssl.ca.location=$d/other-ca.pem}" "ssl.certificate.location=$KAFKA_CLIENT_CERT"
  bad_run tls-unknown-ca "$KAFKA_MTLS_BOOTSTRAP"
  q tls-untrusted "${good[@]}" "ssl.certificate.location=$d/untrusted.pem"
  bad_run tls-untrusted "$KAFKA_MTLS_BOOTSTRAP"
  q tls-expired "${good[@]}" "ssl.certificate.location=$d/expired.pem"
  bad_run tls-expired "$KAFKA_MTLS_BOOTSTRAP"
  q tls-future "${good[@]}" "ssl.certificate.location=$d/future.pem"
  bad_run tls-future "$KAFKA_MTLS_BOOTSTRAP"
  q tls-no-cert security.protocol=SSL "ssl.ca.location=$KAFKA_CA_PEM"
  bad_run tls-no-cert "$KAFKA_MTLS_BOOTSTRAP"
  python3 tests/oauth/forward.py 127.0.0.2 "$((BASE + 8))" "${KAFKA_MTLS_BOOTSTRAP%:*}" "${KAFKA_MTLS_BOOTSTRAP##*:}" \
    >"$out/forward-tls.log" 2>&1 &
  fpid=$!
  q tls-hostname "${good[@]}" "ssl.certificate.location=$KAFKA_CLIENT_CERT"
  bad_run tls-hostname "127.0.0.2:$((BASE + 8))"
  kill "$fpid"
}

mtls_refused_check() {
  wait "${bg_pid[mtls_refused_run]}"
  cat "$out/mtls_refused_run.bg"
  local d="$out/certs"
  fails_fast tls-unknown-ca 12 SSL "the broker's certificate (subject CN=localhost" \
    "is signed by a CA that ssl.ca.location ('$d/other-ca.pem') does not hold (unknown CA" || return 1
  fails_fast tls-untrusted 12 SSL "the broker refused the client certificate (ssl.certificate.location '$d/untrusted.pem' (subject CN=jmeter-load, issued by CN=another CA)" \
    "use a certificate signed by a CA in the broker's trust store" || return 1
  fails_fast tls-expired 5 CONFIG_ERROR "ssl.certificate.location: the client certificate '$d/expired.pem'" \
    "expired on Jan  2 00:00:00 2020 GMT" "use a renewed certificate" || return 1
  fails_fast tls-future 5 CONFIG_ERROR "ssl.certificate.location: the client certificate '$d/future.pem'" \
    "is not valid before Jan  1 00:00:00 2099 GMT" || return 1
  fails_fast tls-no-cert 12 SSL "the broker requires a client certificate (its listener has ssl.client.auth=required) and got none" \
    "set ssl.certificate.location and ssl.key.location" || return 1
  fails_fast tls-hostname 12 SSL "the broker's certificate does not name 127.0.0.2" \
    "hostname mismatch: it names DNS:localhost, IP:127.0.0.1" "ssl.endpoint.identification.algorithm=none"
}

# The schema registry with a bearer token of the same OIDC client: Apicurio (scripts/registry --oidc) checks each
# request's token against Keycloak's keys, issuer and audience (kafka-broker). The schema plan (producers, then a
# consumer resolving the ids) with schema.registry.auth=oauthbearer: every record produced and decoded, one token
# fetched for the registry and the Kafka clients together; a wrong client secret fails naming the registry and
# Keycloak's 401; a token of another audience is refused by the registry itself (REGISTRY_AUTH_FAILED). Runs beside
# the long run: the registry starts in a few seconds, the plans are short.
registry_run() {
  registry start --oidc "$KAFKA_OAUTH_ISSUER" --oidc-audience kafka-broker || return 1
  local code topic="oauth-registry-$RANDOM$RANDOM" schemas="$root/tests/schema/schemas"
  code="$(curl -s -o /dev/null -w '%{http_code}' "$REG_URL/subjects")"
  [[ "$code" == 401 ]] || { echo "the registry answered HTTP $code to a request without a token, not 401"; return 1; }
  echo "$topic" >"$out/registry.topic"
  q registry-token "${OIDC[@]}" "$SECRET"
  q registry-wrong "${OIDC[@]}" "sasl.oauthbearer.client.secret=not-the-secret-$$-registry"
  q registry-audience "${OIDC[@]/#sasl.oauthbearer.client.id=*/sasl.oauthbearer.client.id=jmeter-wrong-audience}" \
    sasl.oauthbearer.client.secret=wrong-audience-secret
  # schema_plan NAME ARGS...: the schema plan against this registry with $out/NAME.properties
  schema_plan() {
    local name="$1"
    shift
    timeout 150 scripts/jmeter -n -t jmeter-plans/schema-avro.jmx -q "$out/$name.properties" -l "$out/$name.jtl" \
      -j "$out/$name.log" -Jjmeter.save.saveservice.output_format=csv -Jjmeter.save.saveservice.sample_count=true \
      -Jkafka.bootstrap="$KAFKA_OAUTH_BOOTSTRAP" -Jschema.registry.url="$REG_URL" -Jschema.registry.auth=oauthbearer \
      -Jschema.file="$schemas/order.avsc" -Jschema.rules.file="$schemas/order.rules" -Jtopic.partitions=1 \
      -Jkafka.summary.file="$out/$name-producer.json" -Jkafka.consumer.summary.file="$out/$name-consumer.json" \
      "$@" >"$out/$name.out" 2>&1
  }
  schema_plan registry-token -Jkafka.topic="$topic" -Jproducers=2 -Jloops=10 -Jmessages.per.sample=5 -Jconsumers=1
  # no consumers: they would fail alike, sample after sample
  schema_plan registry-wrong -Jkafka.topic="$topic-wrong" -Jproducers=1 -Jloops=3 -Jconsumers=0
  schema_plan registry-audience -Jkafka.topic="$topic-audience" -Jproducers=1 -Jloops=3 -Jconsumers=0
  # Mutual TLS to the registry, with the bearer token: the registry behind tests/oauth/forward.py --mtls (HTTPS with
  # the broker's certificate, client certificates of the local CA required), the same client identity as on the
  # Kafka mTLS listener, its encrypted key's password in the -q file. Then the same plan without a certificate.
  local secure fwd tls
  secure="$(dirname "$KAFKA_CA_PEM")"
  python3 tests/oauth/forward.py --mtls "$secure/broker.pem" "$secure/broker.key" "$KAFKA_CA_PEM" \
    127.0.0.1 "$((BASE + 11))" 127.0.0.1 "$((BASE + 9))" >"$out/registry-mtls.forward" 2>&1 &
  fwd=$!
  tls=(-Jschema.registry.url="$REG_MTLS_URL" -Jschema.registry.ssl.ca.location="$KAFKA_CA_PEM")
  q registry-mtls "${OIDC[@]}" "$SECRET"
  echo "schema.registry.ssl.key.password=$KAFKA_CLIENT_KEY_PASSWORD" >>"$out/registry-mtls.properties"
  q registry-mtls-nocert "${OIDC[@]}" "$SECRET"
  schema_plan registry-mtls "${tls[@]}" -Jschema.registry.ssl.certificate.location="$KAFKA_CLIENT_CERT" \
    -Jschema.registry.ssl.key.location="$KAFKA_CLIENT_KEY_ENCRYPTED" -Jkafka.topic="$topic-mtls" -Jproducers=1 \
    -Jloops=5 -Jmessages.per.sample=2 -Jconsumers=1
  schema_plan registry-mtls-nocert "${tls[@]}" -Jkafka.topic="$topic-nocert" -Jproducers=1 -Jloops=3 -Jconsumers=0
  kill "$fwd"
}

registry_check() {
  wait "${bg_pid[registry_run]}" || { cat "$out/registry_run.bg"; return 1; }
  cat "$out/registry_run.bg"
  python3 tests/schema/jtl_check.py "$out/registry-token.jtl" --produced 100 --consumed 100 || return 1
  python3 - "$out/registry-token-producer.json" <<'PY' || return 1
import json, sys
oauth = json.load(open(sys.argv[1])).get("oauth") or {}
if oauth.get("tokens_fetched") != 1:
    sys.exit(f"expected one token for the registry and the Kafka clients, the summary says {oauth}")
print(f"one token served the registry and the Kafka clients: {oauth}")
PY
  local auth
  auth="Authorization: Bearer $(curl -s -d grant_type=client_credentials -d client_id="$KAFKA_OAUTH_CLIENT_ID" \
    -d client_secret="$KAFKA_OAUTH_CLIENT_SECRET" "$KAFKA_OAUTH_TOKEN_URL" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')"
  curl -sf -H "$auth" "$REG_URL/subjects" | grep -q "\"$(cat "$out/registry.topic")-value\"" ||
    { echo "the registry does not list the subject $(cat "$out/registry.topic")-value"; return 1; }
  python3 tests/schema/jtl_check.py "$out/registry-wrong.jtl" --produced 0 --producer-code AUTHENTICATION || return 1
  jtl_message_has "$out/registry-wrong.jtl" "no token for the schema registry at $REG_URL (schema.registry.auth=oauthbearer, client jmeter-load)" \
    "refused client jmeter-load" "(HTTP 401)" "check sasl.oauthbearer.client.id and sasl.oauthbearer.client.secret" || return 1
  python3 tests/schema/jtl_check.py "$out/registry-audience.jtl" --produced 0 --producer-code REGISTRY_AUTH_FAILED || return 1
  jtl_message_has "$out/registry-audience.jtl" "the schema registry at $REG_URL refused the request (HTTP 401)" \
    "the registry did not accept the bearer token of client jmeter-wrong-audience" || return 1
  python3 tests/schema/jtl_check.py "$out/registry-mtls.jtl" --produced 10 --consumed 10 || return 1
  echo "mutual TLS to the registry: 10 records produced and decoded through $REG_MTLS_URL"
  python3 tests/schema/jtl_check.py "$out/registry-mtls-nocert.jtl" --produced 0 --producer-code REGISTRY_UNREACHABLE || return 1
  jtl_message_has "$out/registry-mtls-nocert.jtl" "cannot reach the schema registry at $REG_MTLS_URL" \
    "a registry that requires a client certificate ends the connection when none is sent" \
    "set schema.registry.ssl.certificate.location and schema.registry.ssl.key.location" || return 1
  grep -q "handshake refused: .*PEER_DID_NOT_RETURN_A_CERTIFICATE" "$out/registry-mtls.forward" ||
    { echo "the registry's TLS front did not refuse a handshake without a certificate:"; cat "$out/registry-mtls.forward"; return 1; }
}

# jtl_message_has JTL WORD...: the first failed row's message holds every WORD.
jtl_message_has() {
  python3 - "$@" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["success"] == "false"]
if not rows:
    sys.exit("no failed row")
message = rows[0]["responseMessage"]
missing = [w for w in sys.argv[2:] if w not in message]
if missing:
    sys.exit(f"the message lacks {missing}: {message}")
PY
}

# No secret, key password or token in any output of the suite (the -q files hold them, and are not outputs).
secret_scan() {
  local files
  mapfile -t files < <(find "$out" -type f \( -name '*.jtl' -o -name '*.log' -o -name '*.out' -o -name '*.json' \))
  ((${#files[@]} > 10)) || { echo "only ${#files[@]} output files"; return 1; }
  # a token is a JWT: base64url of '{"alg"' begins eyJhbGciOi
  if grep -lE -e "$KAFKA_OAUTH_CLIENT_SECRET|wrong-audience-secret|jmeter-short-secret|not-the-secret-$$|$KAFKA_CLIENT_KEY_PASSWORD|wrong-key-pass-$$|$KAFKA_SECURE_PASSWORD|eyJhbGciOi" "${files[@]}"; then
    echo "a secret or a token appears in the files above"
    return 1
  fi
  echo "no secret in ${#files[@]} output files"
}

# background NAME_run: runs it beside what follows, its output in $out/NAME_run.bg, its pid in bg_pid[NAME_run].
declare -A bg_pid
background() {
  "$1" >"$out/$1.bg" 2>&1 &
  bg_pid[$1]=$!
}

registry status >/dev/null 2>&1 || started_registry=1
# OAUTH_CHECKS="wrong_secret mtls_bad ..." runs only those (while working on one; outage_check and
# mtls_refused_check start their runs themselves then).
if [[ -n "${OAUTH_CHECKS:-}" ]]; then
  for c in $OAUTH_CHECKS; do
    [[ "$c" == *_check ]] && background "${c%_check}_run"
    check "$c" "$c"
  done
  summary
  exit
fi
background outage_run
background mtls_refused_run
background registry_run
background long_run
check "OIDC over SASL_SSL; time to the first acknowledged sample, OIDC against SCRAM" first_ack
check "producers, consumers, lag monitor and audit in one plan, all on tokens" end_to_end
check "token endpoint unreachable: TOKEN_ERROR within seconds" unreachable
check "token endpoint not http(s): CONFIG_ERROR" not_http
check "token endpoint answers HTML: TOKEN_ERROR that says so" html_answer
check "token endpoint answers JSON without a token: TOKEN_ERROR" json_without_token
check "wrong client secret: AUTHENTICATION (401) naming the settings" wrong_secret
check "scope rejected by the identity provider: TOKEN_ERROR invalid_scope" scope_rejected
check "OAUTHBEARER with no token URL: CONFIG_ERROR" no_token_url
check "token of another audience: the broker refuses it, the sample says why" wrong_audience
check "SASL extensions: the broker's own logicalCluster sends, another is refused, a malformed list is a setup error" extensions
check "mTLS: client certificate with an encrypted key sends" mtls_good
check "mTLS: key not matching the certificate, wrong key password, CA not PEM: each a clear setup error" mtls_bad
check "token endpoint down mid-test: samples ok while the token lives, TOKEN_ERROR naming the endpoint once it expired, ok again when it is back" outage_check
check "mTLS: unknown CA, client certificate the broker refuses, expired and not yet valid client certificate, no client certificate, hostname mismatch: each says what to change" mtls_refused_check
check "schema registry with a bearer token of the same OIDC client: records produced and decoded, one token; wrong secret and refused token each say so; mutual TLS to it, and no client certificate says what to set" registry_check
check "OIDC for ${LONG} s with 60-s tokens: 0 failed samples, refreshes counted, one token per round for two producers, SASL extensions with every token" long_check
check "no secret or token in any JTL, log, stdout or summary" secret_scan
summary
