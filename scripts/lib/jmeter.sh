# shellcheck shell=bash
# JMeter helpers shared by scripts/jmeter and scripts/jmeter-server. Source after common.sh.

JMETER_POM="$STACK_DIR/jmeter/pom.xml"
JMETER_VERSION="$(pom_property "$JMETER_POM" jmeter.version)" # pinned only in stack/jmeter/pom.xml
JMETER_HOME_DIR="$TARGET_DIR/jmeter"
SAMPLER_GLOB_PREFIX="jmeter-kafka-native-"

# ensure_jmeter: lay out target/jmeter once (bin/, lib/, lib/ext/ are rebuilt only when the POM changes).
ensure_jmeter() {
  assemble_once "$JMETER_HOME_DIR" "$JMETER_HOME_DIR/.assembled" "Apache JMeter $JMETER_VERSION" \
    "$JMETER_POM" "bin lib .build" "-Djmeter.home=$JMETER_HOME_DIR"
  # JMeter's launcher expects lib/junit/ (JUnit sampler's folder) even when empty.
  mkdir -p "$JMETER_HOME_DIR/lib/junit"
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

# run_jmeter ARGS...: JMeter's launcher with the JVM options of JMeter's own bin/jmeter script.
run_jmeter() {
  local java
  java="$(java_cmd)"
  # Java 9+: JMeter (XStream, its GUI, report templates) reflects into these JDK packages.
  local opens=(
    --add-opens java.desktop/sun.awt=ALL-UNNAMED
    --add-opens java.desktop/sun.swing=ALL-UNNAMED
    --add-opens java.desktop/javax.swing.text.html=ALL-UNNAMED
    --add-opens java.desktop/java.awt=ALL-UNNAMED
    --add-opens java.desktop/java.awt.font=ALL-UNNAMED
    --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/java.lang.invoke=ALL-UNNAMED
    --add-opens java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens java.base/java.util=ALL-UNNAMED
    --add-opens java.base/java.text=ALL-UNNAMED
  )
  local heap="${HEAP:--Xms1g -Xmx1g -XX:MaxMetaspaceSize=256m}"
  local gc="${GC_ALGO:--XX:+UseG1GC -XX:MaxGCPauseMillis=100 -XX:G1ReservePercent=20}"
  local lang="${JMETER_LANGUAGE:--Duser.language=en -Duser.region=EN}"
  # Word splitting of these variables is intended: each holds a list of JVM flags, as in JMeter's script.
  # shellcheck disable=SC2086
  exec "$java" "${opens[@]}" -server -XX:+HeapDumpOnOutOfMemoryError $heap $gc \
    -Djava.security.egd=file:/dev/urandom $lang ${JVM_ARGS:-} \
    -jar "$JMETER_HOME_DIR/bin/ApacheJMeter.jar" "$@"
}
