#!/usr/bin/env bash
# The assembled JMETER_HOME (target/jmeter) is a normal one: JMeter's own bin/jmeter, bin/jmeter-server,
# bin/stoptest.sh and bin/shutdown.sh work when called directly, as a user of the binary release calls them;
# bin/setenv.sh grants native access where the JDK knows the flag, so JDK 22+ prints no System::load warning.
# Needs no broker (the native-access plan points at a closed port). Opens UDP 4445 and TCP 1099: run it in a
# private network namespace on a shared machine, e.g.
#   unshare -n bash -c 'ip link set lo up && tests/jmeter-home/run.sh'
# Ends with "N passed, N failed". About 1 minute.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root" || exit 1
out="$root/target/jmeter-home-tests"
rm -rf "$out"
mkdir -p "$out"
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$root/tests/lib/checks.sh"
# shellcheck source=../../scripts/lib/common.sh source-path=SCRIPTDIR
source "$root/scripts/lib/common.sh"
# shellcheck source=../../scripts/lib/jmeter.sh source-path=SCRIPTDIR
source "$root/scripts/lib/jmeter.sh"

home="$JMETER_HOME_DIR"
bin="$home/bin"
temurin="$(compgen -G '/usr/lib/jvm/temurin-2[2-9]*' | head -n1)" # a JDK 22+ if the machine has one
restricted='WARNING: A restricted method in java.lang.System has been called'

# wait_for FILE TEXT SECONDS: true once FILE contains TEXT.
wait_for() {
  local deadline=$((SECONDS + $3))
  until grep -qF -- "$2" "$1" 2>/dev/null; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

# wait_exit PID SECONDS: true once PID has ended.
wait_exit() {
  local deadline=$((SECONDS + $2))
  while kill -0 "$1" 2>/dev/null; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

# kill_jmeter PID: end a JMeter started in the background through bin/jmeter, a shell script that runs java as its
# child (not with exec): the child first, then the script.
kill_jmeter() {
  pkill -TERM -P "$1" 2>/dev/null
  kill "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}

scripts_present() {
  local f
  for f in jmeter jmeter-server stoptest.sh shutdown.sh jmeter.sh heapdump.sh threaddump.sh setenv.sh; do
    [[ -f "$bin/$f" ]] || { echo "missing $bin/$f"; return 1; }
  done
  for f in jmeter jmeter-server stoptest.sh shutdown.sh; do
    [[ -x "$bin/$f" ]] || { echo "$bin/$f is not executable"; return 1; }
  done
  # JMeter's script, not one of ours: it carries the ASF header and its JAVA9_OPTS list
  if ! grep -q 'Licensed to the Apache Software Foundation' "$bin/jmeter" || ! grep -q 'JAVA9_OPTS=' "$bin/jmeter"; then
    echo "$bin/jmeter is not JMeter's own script"
    return 1
  fi
}

bin_version() {
  "$bin/jmeter" --version >"$out/version.out" 2>&1 || { cat "$out/version.out"; return 1; }
  grep -q "$JMETER_VERSION" "$out/version.out" || { echo "no $JMETER_VERSION in: $(cat "$out/version.out")"; return 1; }
}

# bin/jmeter -n from another folder: relative -l/-j land there, 2 threads x 5 loops of JavaTest are written.
bin_headless() {
  (cd "$out" && "$bin/jmeter" -n -t "$root/tests/stack/minimal.jmx" -l headless.jtl -j headless.log >headless.out 2>&1) ||
    { cat "$out/headless.out"; return 1; }
  local ok
  ok="$(grep -c ',java-test,.*,true,' "$out/headless.jtl")"
  [[ "$ok" == 10 ]] || { echo "$ok successful java-test rows, expected 10"; return 1; }
}

# An endless version of the smoke plan, to be stopped.
endless_plan() {
  sed -e 's|<stringProp name="LoopController.loops">5</stringProp>|<stringProp name="LoopController.loops">-1</stringProp>|' \
    -e 's|<boolProp name="LoopController.continue_forever">false</boolProp>|<boolProp name="LoopController.continue_forever">true</boolProp>|' \
    "$root/tests/stack/minimal.jmx" >"$out/endless.jmx"
  grep -q '"LoopController.loops">-1<' "$out/endless.jmx"
}

# stop_with SCRIPT COMMAND-WORD: run the endless plan, call bin/SCRIPT, and see JMeter take the command and end.
stop_with() {
  local script="$1" word="$2" name="${1%.sh}"
  (cd "$out" && exec "$bin/jmeter" -n -t endless.jmx -l "$name.jtl" -j "$name.log") >"$out/$name.out" 2>&1 &
  local pid=$! port
  if ! wait_for "$out/$name.out" "Waiting for possible Shutdown" 60; then
    echo "JMeter did not open its command port: $(tail -n 5 "$out/$name.out")"
    kill_jmeter "$pid"
    return 1
  fi
  # the port JMeter chose (4445, or the next free one when another JMeter holds it)
  port="$(sed -n 's/.*message on port \([0-9]*\).*/\1/p' "$out/$name.out" | head -n1)"
  sleep 1 # let samples run
  "$bin/$script" "$port" >"$out/$name.client.out" 2>&1 || { cat "$out/$name.client.out"; kill_jmeter "$pid"; return 1; }
  if ! wait_exit "$pid" 30; then
    echo "JMeter still runs 30 s after $script"
    kill_jmeter "$pid"
    return 1
  fi
  grep -q "Command: $word received" "$out/$name.out" "$out/$name.log" ||
    { echo "no 'Command: $word received' in $name.out / $name.log"; return 1; }
  local rows
  rows="$(($(wc -l <"$out/$name.jtl") - 1))"
  ((rows > 0)) || { echo "no samples before the stop"; return 1; }
  echo "$script: JMeter ended after $rows samples"
}

# bin/jmeter-server called as the JMeter docs say (SERVER_PORT, RMI without TLS on loopback), and a controller
# (bin/jmeter -R ... -X) that runs the smoke plan on it and then tells it to exit.
bin_server() {
  local dir="$out/server"
  mkdir -p "$dir"
  (cd "$dir" && SERVER_PORT=1099 exec "$bin/jmeter-server" -Djava.rmi.server.hostname=127.0.0.1 \
    -Jserver.rmi.ssl.disable=true -Jserver.rmi.localport=4000) >"$dir/server.out" 2>&1 &
  local pid=$!
  if ! wait_for "$dir/server.out" "Created remote object" 60; then
    echo "jmeter-server did not start: $(tail -n 5 "$dir/server.out")"
    kill_jmeter "$pid"
    return 1
  fi
  [[ -f "$dir/jmeter-server.log" ]] || { echo "no jmeter-server.log in the server's folder"; kill_jmeter "$pid"; return 1; }
  (cd "$dir" && "$bin/jmeter" -n -t "$root/tests/stack/minimal.jmx" -R 127.0.0.1:1099 -X \
    -Djava.rmi.server.hostname=127.0.0.1 -Jserver.rmi.ssl.disable=true -l controller.jtl -j controller.log \
    >controller.out 2>&1) || { cat "$dir/controller.out"; kill_jmeter "$pid"; return 1; }
  if ! wait_exit "$pid" 30; then
    echo "jmeter-server did not exit after the controller's -X"
    kill_jmeter "$pid"
    return 1
  fi
  local ok
  ok="$(grep -c ',java-test,.*,true,' "$dir/controller.jtl")"
  [[ "$ok" == 10 ]] || { echo "$ok successful rows from the remote engine, expected 10"; return 1; }
}

# setenv.sh adds the flag for a JVM that accepts it and not for one that refuses it (stand-in: a fake java).
setenv_probe() {
  local opts fake="$out/fake-jdk"
  opts="$(JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 JMETER_OPTS="" sh -c ". '$bin/setenv.sh'; printf '%s' \"\$JMETER_OPTS\"")"
  [[ "$opts" == "--enable-native-access=ALL-UNNAMED" ]] || { echo "JDK 17: JMETER_OPTS='$opts'"; return 1; }
  mkdir -p "$fake/bin"
  # shellcheck disable=SC2016 # $1 belongs to the fake java script
  printf '#!/bin/sh\necho "Unrecognized option: $1" >&2\nexit 1\n' >"$fake/bin/java"
  chmod +x "$fake/bin/java"
  opts="$(JAVA_HOME="$fake" JMETER_OPTS="-Dx=1" sh -c ". '$bin/setenv.sh'; printf '%s' \"\$JMETER_OPTS\"")"
  [[ "$opts" == "-Dx=1" ]] || { echo "a JVM without the flag: JMETER_OPTS='$opts'"; return 1; }
  # a user's own choice in JVM_ARGS is left alone
  opts="$(JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 JVM_ARGS="--enable-native-access=ALL-UNNAMED" JMETER_OPTS="" \
    sh -c ". '$bin/setenv.sh'; printf '%s' \"\$JMETER_OPTS\"")"
  [[ -z "$opts" ]] || { echo "flag added twice: JMETER_OPTS='$opts'"; return 1; }
}

# The producer plan loads the native engine (its one sample then fails fast on a closed port).
native_plan() {
  local name="$1"
  shift
  (cd "$out" && "$@" -n -t "$root/jmeter-plans/producer-baseline.jmx" -Jthreads=1 -Jloops=1 \
    -Jkafka.bootstrap=127.0.0.1:1 -Jtimeout.ms=500 -Jtopic.create=false -Jpreflight=off \
    -l "$name.jtl" -j "$name.log" >"$name.out" 2>&1)
  grep -q 'KafkaProducerSampler' "$out/$name.log" || { echo "the sampler did not run ($name.log)"; return 1; }
  grep -q ',kafka-produce,' "$out/$name.jtl" || { echo "no kafka-produce row in $name.jtl"; return 1; }
}

# JDK 22+: a stock launch without the flag warns (the negative control), bin/jmeter does not.
native_access_jdk22() {
  [[ -n "$temurin" ]] || { echo "no JDK 22+ under /usr/lib/jvm: cannot check"; return 1; }
  install_sampler_jar
  native_plan plain-java "$temurin/bin/java" -jar "$bin/ApacheJMeter.jar" || return 1
  grep -qF "$restricted" "$out/plain-java.out" ||
    { echo "negative control: no System::load warning without the flag on $temurin"; return 1; }
  JAVA_HOME="$temurin" native_plan jdk22 "$bin/jmeter" || return 1
  if grep -F -A3 "$restricted" "$out/jdk22.out"; then return 1; fi
  echo "$("$temurin/bin/java" -version 2>&1 | head -n1): warning without the flag, none through bin/jmeter"
}

# JDK 17 knows the flag too: the same plan runs through bin/jmeter with it, without complaint.
native_access_jdk17() {
  JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 native_plan jdk17 "$bin/jmeter" || return 1
  if grep -E 'Unrecognized option|restricted method' "$out/jdk17.out"; then return 1; fi
}

no_crash() {
  local f
  f="$(find "$out" -name 'hs_err_pid*.log' | head -n1)"
  [[ -z "$f" ]] || { echo "a JVM crashed: $f"; return 1; }
}

ensure_jmeter
check "bin/ holds JMeter's own jmeter, jmeter-server, stoptest.sh, shutdown.sh (executable) and our setenv.sh" scripts_present
check "bin/jmeter --version prints $JMETER_VERSION" bin_version
check "bin/jmeter -n runs a plan from another folder (10 rows OK)" bin_headless
check "an endless plan to stop" endless_plan
check "bin/stoptest.sh stops a running test (StopTestNow)" stop_with stoptest.sh StopTestNow
check "bin/shutdown.sh ends a running test (Shutdown)" stop_with shutdown.sh Shutdown
check "bin/jmeter-server serves a controller's plan (10 rows OK) and exits on -X" bin_server
check "bin/setenv.sh adds --enable-native-access only where the JVM accepts it" setenv_probe
check "JDK 22+: System::load warning without the flag, none through bin/jmeter" native_access_jdk22
check "JDK 17: bin/jmeter with the flag runs the producer plan cleanly" native_access_jdk17
check "no JVM crash (no hs_err_pid*.log)" no_crash
summary
