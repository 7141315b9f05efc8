#!/usr/bin/env bash
# JMeter Plugins Manager installs our jar into a CLEAN JMeter, offline: the catalogue is a local file
# (scripts/plugins-repo: packaging/plugins-manager/jmeter-kafka-native.json with the version substituted, the jar
# beside it) named by jpgc.repo.address; PluginManagerCMD (kg.apc:jmeter-plugins-manager 1.3 through
# kg.apc:cmdrunner 2.3, both from Maven Central) lists it, installs it into lib/ext and reports it installed; then
# that JMeter runs the producer plan and the topic holds what the JTL says.
# Needs a built jar (scripts/build) and a broker on 127.0.0.1:9092 (scripts/kafka start). The first run downloads
# the manager with Maven; after that no network is needed, so it can run in a private network namespace, e.g.
#   unshare -n bash -c 'ip link set lo up && scripts/kafka start && tests/plugins-manager/run.sh; scripts/kafka stop'
# (scripts/test runs it outside a namespace, on the broker all its suites share.)
# Ends with "N passed, N failed". About 30 s.
set -uo pipefail
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
enter_work_dir plugins-manager-tests
# shellcheck source=../../scripts/lib/common.sh source-path=SCRIPTDIR
source "$root/scripts/lib/common.sh"
# shellcheck source=../../scripts/lib/jmeter.sh source-path=SCRIPTDIR
source "$root/scripts/lib/jmeter.sh"

home="$out/jmeter" # the clean JMeter
repo="$out/repo"
jar="$(newest_sampler_jar)"
jar_name="${jar##*/}"
version="${jar_name#jmeter-kafka-native-}"
version="${version%.jar}"
topic="pm-$RANDOM$RANDOM"

# pm COMMAND [PARAMS]: PluginManagerCMD in the clean JMeter, reading the local catalogue. This is the command line
# of the bin/PluginsManagerCMD.sh that the manager's installer writes, except for the runner's file name: 1.3's
# script names lib/cmdrunner-2.2.jar, and Maven Central's current runner is 2.3.
pm() {
  local runner
  runner="$(compgen -G "$home/lib/cmdrunner-*.jar" | head -n1)"
  java -Djava.awt.headless=true "-Djpgc.repo.address=$repo/repo.json" -jar "$runner" \
    --tool org.jmeterplugins.repository.PluginManagerCMD "$@"
}

# A copy of the assembled JMeter as the binary release has it: none of our files (jar, bin/setenv.sh).
clean_home() {
  cp -a "$JMETER_HOME_DIR" "$home" || return 1
  rm -rf "$home/.build" "$home/.assembled" "$home/.assemble.lock" "$home/assemble.log" "$home/bin/setenv.sh"
  rm -f "$home/lib/ext/jmeter-kafka-native-"*.jar
  ! compgen -G "$home/lib/ext/jmeter-kafka-native-*" >/dev/null || { echo "our jar is still in $home/lib/ext"; return 1; }
}

# The manager's documented install: its jar into lib/ext, cmdrunner into lib, then its installer writes bin/.
install_manager() {
  cp "$PLUGINS_MANAGER_DIR"/lib/ext/jmeter-plugins-manager-*.jar "$home/lib/ext/" &&
    cp "$PLUGINS_MANAGER_DIR"/lib/cmdrunner-*.jar "$home/lib/" || return 1
  java -cp "$(compgen -G "$home/lib/ext/jmeter-plugins-manager-*.jar")" \
    org.jmeterplugins.repository.PluginManagerCMDInstaller || return 1
  [[ -x "$home/bin/PluginsManagerCMD.sh" ]] || { echo "the installer wrote no bin/PluginsManagerCMD.sh"; return 1; }
}

catalogue() {
  scripts/plugins-repo --out "$repo" || return 1
  python3 tests/plugins-manager/checks.py catalogue-entry "$repo/repo.json" "$version" "$jar_name" || return 1
  cmp -s "$jar" "$repo/$jar_name" || { echo "the repository's jar differs from $jar"; return 1; }
}

not_installed_before() {
  pm status >"$out/status-before.out" 2>&1 || { cat "$out/status-before.out"; return 1; }
  tail -n1 "$out/status-before.out"
  ! grep -q 'jmeter-kafka-native' <(tail -n1 "$out/status-before.out")
}

available() {
  pm available >"$out/available.out" 2>&1 || { cat "$out/available.out"; return 1; }
  tail -n1 "$out/available.out"
  grep -qF "jmeter-kafka-native=[$version]" <(tail -n1 "$out/available.out")
}

# PluginManagerCMD downloads, then a separate JVM of the manager's (SafeDeleter) moves the jar into lib/ext.
install_plugin() {
  pm install "jmeter-kafka-native=$version" >"$out/install.out" 2>&1 || { cat "$out/install.out"; return 1; }
  local dest="$home/lib/ext/$jar_name" deadline=$((SECONDS + 30))
  until [[ -f "$dest" ]] && cmp -s "$jar" "$dest"; do
    ((SECONDS < deadline)) || { echo "no $jar_name in lib/ext 30 s after install"; ls "$home/lib/ext"; return 1; }
    sleep 0.5
  done
  ls -l "$dest"
}

installed_status() {
  pm status >"$out/status-after.out" 2>&1 || { cat "$out/status-after.out"; return 1; }
  tail -n1 "$out/status-after.out"
  grep -qF "jmeter-kafka-native=$version" <(tail -n1 "$out/status-after.out")
}

topic_messages() {
  scripts/kafka run org.apache.kafka.tools.GetOffsetShell --bootstrap-server 127.0.0.1:9092 --topic "$1" 2>/dev/null |
    awk -F: '{ n += $3 } END { print n + 0 }'
}

# The clean JMeter, through its own bin/jmeter, runs the shipped producer plan with the installed jar.
plan_runs() {
  (cd "$out" && "$home/bin/jmeter" -n -t "$root/jmeter-plans/producer-baseline.jmx" -l run.jtl -j run.log \
    -Jjmeter.save.saveservice.output_format=csv -Jjmeter.save.saveservice.sample_count=true \
    -Jkafka.topic="$topic" -Jthreads=2 -Jloops=50 -Jtopic.partitions=2 >run.out 2>&1) ||
    { cat "$out/run.out"; return 1; }
  grep -q "lib/ext/$jar_name" "$out/run.log" || grep -q 'KafkaProducerSampler' "$out/run.log" ||
    { echo "the sampler did not run"; return 1; }
  python3 tests/e2e/jtl_check.py "$out/run.jtl" --rows 100 --messages 100 --all-ok || return 1
  local n
  n="$(topic_messages "$topic")"
  [[ "$n" == 100 ]] || { echo "topic $topic holds $n messages, expected 100"; return 1; }
}

no_crash() {
  local f
  f="$(find "$out" -name 'hs_err_pid*.log' | head -n1)"
  [[ -z "$f" ]] || { echo "a JVM crashed: $f"; return 1; }
}

[[ -n "$jar" ]] || die "no java-sampler/target/jmeter-kafka-native-*.jar: run scripts/build first"
ensure_jmeter
ensure_plugins_manager
check "a clean JMeter (no jar of ours, no setenv.sh)" clean_home
check "Plugins Manager 1.3 installed the documented way (bin/PluginsManagerCMD.sh written)" install_manager
check "scripts/plugins-repo writes the catalogue entry (version $version, downloadUrl beside it)" catalogue
check "status before: not installed" not_installed_before
check "available (from the local catalogue): jmeter-kafka-native=[$version]" available
check "install: lib/ext/$jar_name, identical to the built jar" install_plugin
check "status after: jmeter-kafka-native=$version installed (markerClass found)" installed_status
check "the clean JMeter runs the producer plan: 100 rows OK = 100 messages in the topic" plan_runs
check "no JVM crash (no hs_err_pid*.log)" no_crash
summary
