#!/usr/bin/env bash
# The laptop case: a JVM in which the native engine does not load (another CPU, or a library that is not there).
# The plans still open and save in the GUI, and a headless run of the baseline plan ends with ONE failed sample
# saying the engine is built for linux-x86_64 and to run the plan on a Linux load generator; the other threads end
# without repeating it. Two ways to hide the engine, each in its own JVM:
#   - JVM_ARGS=-Dos.arch=aarch64: the JVM reports another CPU, as on an Apple laptop (the jar's platform check);
#   - JVM_ARGS=-Dkafka.native.library=/nonexistent: the library cannot be found.
# The GUI part runs tests/gui/run.sh with -Dos.arch=aarch64 on the plan that holds every Kafka element (open,
# forms, save, reopen).
# Needs a built jar (scripts/build), no broker; run it in a private network namespace:
#   unshare -n bash -c 'ip link set lo up && tests/laptop/run.sh'
# Ends with "N passed, N failed".
set -uo pipefail
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
enter_work_dir laptop

# run_hidden NAME JVM-ARG: the baseline plan, 4 threads x 50 samples, in a JVM where the engine does not load.
run_hidden() {
  local name="$1"
  JVM_ARGS="$2" timeout 120 scripts/jmeter -n -t jmeter-plans/producer-baseline.jmx -l "$out/$name.jtl" \
    -j "$out/$name.log" -Jjmeter.save.saveservice.output_format=csv -Jthreads=4 -Jloops=50 \
    -Jkafka.summary.file="$out/$name-summary.json" >"$out/$name.out" 2>&1
  echo "$?" >"$out/$name.rc"
}

# one_clear_sample NAME: JMeter ended by itself (exit 0), the JTL has exactly one row, failed with
# ENGINE_UNAVAILABLE and a message naming linux-x86_64 and a Linux load generator.
one_clear_sample() {
  local name="$1"
  [[ "$(cat "$out/$name.rc")" == 0 ]] || { echo "JMeter exit $(cat "$out/$name.rc")"; tail -n 5 "$out/$name.out"; return 1; }
  jtl_says one-failed-row "$out/$name.jtl" ENGINE_UNAVAILABLE "built for linux-x86_64" "Linux x86_64 load generator"
}

no_crash() {
  local f
  f="$(find "$out" "$root/target/gui-tests" -name 'hs_err_pid*.log' 2>/dev/null | head -n1)"
  [[ -z "$f" ]] || { echo "a JVM crashed: $f"; return 1; }
}

run_hidden other-cpu -Dos.arch=aarch64
check "another CPU (-Dos.arch=aarch64): one failed sample, ENGINE_UNAVAILABLE, says linux-x86_64 and where to run" \
  one_clear_sample other-cpu
check "another CPU: the reason is the platform (jmeter.log: 'this JVM runs on linux/aarch64')" \
  grep -q "this JVM runs on linux/aarch64" "$out/other-cpu.log"
run_hidden no-library -Dkafka.native.library=/nonexistent
check "no library (-Dkafka.native.library=/nonexistent): one failed sample, ENGINE_UNAVAILABLE, says where to run" \
  one_clear_sample no-library
check "no library: the reason names the missing file" grep -q "/nonexistent: no such file" "$out/no-library.log"

# The GUI with the engine hidden: the plan that holds every Kafka element (Connection, Producer, Consumer, Lag
# Monitor) opens, shows their forms, saves and is reopened. The gui suite opens every shipped plan with the engine
# loaded; what differs here is only whether each element's class and form load without the engine.
gui_ok() {
  GUI_PLANS="$root/jmeter-plans/end-to-end.jmx" JVM_ARGS=-Dos.arch=aarch64 tests/gui/run.sh >"$out/gui.out" 2>&1
  local rc=$?
  grep -E '^(PASS|FAIL)|passed,' "$out/gui.out"
  return "$rc"
}
check "GUI with the engine hidden (-Dos.arch=aarch64): tests/gui/run.sh passes (open, forms, save, reopen)" gui_ok
check "no JVM crash (no hs_err_pid*.log)" no_crash
summary
