# shellcheck shell=sh
# JMETER_HOME/bin/setenv.sh: JMeter's own bin/jmeter sources this file (if present) before it starts Java; it is
# the place JMeter documents for local settings. scripts/jmeter copies it into target/jmeter/bin/. It also works
# in a stock JMeter: copy it to that JMeter's bin/ (or add the flag below to JVM_ARGS by hand).
#
# JDK 22+ warns, and a later JDK will refuse, when a jar calls System::load without native access granted:
#   WARNING: A restricted method in java.lang.System has been called
# jmeter-kafka-native loads its engine that way, so grant it to the class path (JMeter's jars are unnamed
# modules). The flag is added only when this JVM accepts it (JDK 17+); an older JVM would refuse to start.
# POSIX sh: bin/jmeter is a /bin/sh script.

kafka_native_java="java"
if [ -n "$JAVA_HOME" ] && [ -x "$JAVA_HOME/bin/java" ]; then
  kafka_native_java="$JAVA_HOME/bin/java"
elif [ -n "$JRE_HOME" ] && [ -x "$JRE_HOME/bin/java" ]; then
  kafka_native_java="$JRE_HOME/bin/java"
fi
case " $JVM_ARGS $JMETER_OPTS " in
  *" --enable-native-access="*) ;; # the user chose already
  *)
    if "$kafka_native_java" --enable-native-access=ALL-UNNAMED -version >/dev/null 2>&1; then
      JMETER_OPTS="${JMETER_OPTS:+$JMETER_OPTS }--enable-native-access=ALL-UNNAMED"
    fi
    ;;
esac
unset kafka_native_java
