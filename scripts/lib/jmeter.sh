# shellcheck shell=bash
# JMeter helpers shared by scripts/jmeter and scripts/jmeter-server. Source after common.sh.

JMETER_POM="$STACK_DIR/jmeter/pom.xml"
JMETER_VERSION="$(pom_property "$JMETER_POM" jmeter.version)" # pinned only in stack/jmeter/pom.xml
JMETER_HOME_DIR="$TARGET_DIR/jmeter"
SAMPLER_GLOB_PREFIX="jmeter-kafka-native-"

# ensure_jmeter: lay out target/jmeter once (bin/, lib/, lib/ext/ are rebuilt only when the POM changes), then
# put our bin/setenv.sh beside JMeter's own bin/jmeter (which sources it: see stack/jmeter/setenv.sh).
ensure_jmeter() {
  assemble_once "$JMETER_HOME_DIR" "$JMETER_HOME_DIR/.assembled" "Apache JMeter $JMETER_VERSION" \
    "$JMETER_POM" "bin lib .build" "-Djmeter.home=$JMETER_HOME_DIR"
  # JMeter's launcher expects lib/junit/ (JUnit sampler's folder) even when empty.
  mkdir -p "$JMETER_HOME_DIR/lib/junit"
  local bin="$JMETER_HOME_DIR/bin" f
  # the tarball's modes survive unpacking on most systems; make sure, as the scripts call each other
  for f in jmeter jmeter-server jmeter.sh stoptest.sh shutdown.sh heapdump.sh threaddump.sh create-rmi-keystore.sh; do
    [[ -f "$bin/$f" ]] || die "$bin/$f is missing: remove $JMETER_HOME_DIR/.assembled and run scripts/jmeter again"
    [[ -x "$bin/$f" ]] || chmod 755 "$bin/$f"
  done
  cmp -s "$STACK_DIR/jmeter/setenv.sh" "$bin/setenv.sh" || cp "$STACK_DIR/jmeter/setenv.sh" "$bin/setenv.sh"
}

# newest_sampler_jar: the newest java-sampler/target/jmeter-kafka-native-*.jar (not -sources/-javadoc/-tests).
newest_sampler_jar() {
  local f newest=""
  for f in "$REPO_ROOT/java-sampler/target/$SAMPLER_GLOB_PREFIX"*.jar; do
    [[ -f "$f" ]] || continue
    case "${f##*/}" in *-sources.jar | *-javadoc.jar | *-tests.jar) continue ;; esac
    if [[ -z "$newest" || "$f" -nt "$newest" ]]; then newest="$f"; fi
  done
  [[ -n "$newest" ]] && printf '%s\n' "$newest"
  return 0
}

# install_sampler_jar: put the project's sampler into lib/ext, replacing any other version there, so JMeter
# never sees two copies. The copy goes through a temporary name and a rename: a JMeter that is running at
# that moment keeps reading the jar it opened, and two concurrent launches cannot see a half-written file.
install_sampler_jar() {
  local jar ext name
  jar="$(newest_sampler_jar)"
  [[ -n "$jar" ]] || return 0
  ext="$JMETER_HOME_DIR/lib/ext"
  name="${jar##*/}"
  if ! cmp -s "$jar" "$ext/$name"; then
    local tmp
    tmp="$(mktemp "$ext/.sampler.XXXXXX")" # no .jar suffix: JMeter ignores it
    cp "$jar" "$tmp"
    chmod 644 "$tmp"
    mv -f "$tmp" "$ext/$name"
  fi
  local f
  for f in "$ext/$SAMPLER_GLOB_PREFIX"*.jar; do
    [[ -f "$f" && "${f##*/}" != "$name" ]] && rm -f "$f"
  done
  return 0
}

# run_jmeter ARGS...: JMeter's own bin/jmeter (its JVM options: HEAP, GC_ALGO, JVM_ARGS, JMETER_OPTS, JAVA_HOME,
# the --add-opens list), plus --enable-native-access from our bin/setenv.sh.
run_jmeter() {
  exec "$JMETER_HOME_DIR/bin/jmeter" "$@"
}

# run_jmeter_server ARGS...: JMeter's own bin/jmeter-server (port from SERVER_PORT, log jmeter-server.log).
# JMeter refuses a second -j, and bin/jmeter-server passes one: with a -j of the caller's, start the same server
# (bin/jmeter -s -Dserver_port=...) through bin/jmeter instead.
run_jmeter_server() {
  local a
  for a in "$@"; do
    case "$a" in -j | --jmeterlogfile | --jmeterlogfile=*)
      exec "$JMETER_HOME_DIR/bin/jmeter" "-Dserver_port=${SERVER_PORT:-1099}" -s "$@" ;;
    esac
  done
  exec "$JMETER_HOME_DIR/bin/jmeter-server" "$@"
}

PLUGINS_MANAGER_POM="$STACK_DIR/plugins-manager/pom.xml"
PLUGINS_MANAGER_DIR="$TARGET_DIR/plugins-manager"

# ensure_plugins_manager: fetch JMeter Plugins Manager and cmdrunner once into target/plugins-manager/
# (lib/ext/jmeter-plugins-manager-<v>.jar, lib/cmdrunner-<v>.jar), ready to copy into a JMETER_HOME.
ensure_plugins_manager() {
  assemble_once "$PLUGINS_MANAGER_DIR" "$PLUGINS_MANAGER_DIR/.assembled" "JMeter Plugins Manager" \
    "$PLUGINS_MANAGER_POM" "lib .build" "-Dpm.home=$PLUGINS_MANAGER_DIR"
}
