# shellcheck shell=bash
# shellcheck disable=SC2034 # STACK_DIR, TARGET_DIR, ... are used by the scripts that source this file
# Shared helpers for scripts/kafka, scripts/jmeter, scripts/jmeter-server and tests/stack.
# Source it; it sets REPO_ROOT from its own location so callers work from any cwd.

# scripts/lib/common.sh -> repo root is two levels up.
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
STACK_DIR="$REPO_ROOT/stack"
TARGET_DIR="$REPO_ROOT/target"

# The tools below parse numbers and print reports; keep their output locale-independent.
export LANG=C LC_ALL=C

info() { printf '%s\n' "$*" >&2; }
die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

# require_tool NAME HOW-TO-INSTALL: fail with a helpful message when a command is missing.
require_tool() {
  command -v "$1" >/dev/null 2>&1 || die "'$1' not found on PATH; install it with: $2"
}

# java_cmd: the java to use (JAVA_HOME wins, as in Kafka's and JMeter's own scripts).
java_cmd() {
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    printf '%s\n' "$JAVA_HOME/bin/java"
  else
    require_tool java "apt-get install -y openjdk-17-jdk-headless"
    command -v java
  fi
}

# require_java17: Kafka 4.x brokers and our sampler need Java 17+.
require_java17() {
  local java version major
  java="$(java_cmd)"
  version="$("$java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n1)"
  major="${version%%.*}"
  [[ "$major" =~ ^[0-9]+$ && "$major" -ge 17 ]] ||
    die "Java 17 or newer is needed, found '$version' at $java; install it with: apt-get install -y openjdk-17-jdk-headless"
}

# pom_property POM NAME: read <NAME>value</NAME> from a POM (versions are pinned only in the POMs).
pom_property() {
  local value
  value="$(sed -n "s:.*<$2>\([^<]*\)</$2>.*:\1:p" "$1" | head -n1)"
  [[ -n "$value" ]] || die "property <$2> not found in $1"
  printf '%s\n' "$value"
}

# file_hash FILE...: content hash used by assembly markers (a changed POM re-assembles).
file_hash() {
  cat "$@" | sha256sum | cut -d' ' -f1
}

# assemble_once DEST MARKER LABEL POM "SUBDIRS" [mvn -D args...]
# Runs `mvn package` on a download-only POM once; MARKER records the POM's hash so later runs skip Maven
# entirely (fast, no network). SUBDIRS (space-separated, relative to DEST) are emptied first, so a changed
# version never leaves old jars beside the new ones. A lock keeps two concurrent first runs apart.
assemble_once() {
  local dest="$1" marker="$2" label="$3" pom="$4" subdirs="$5"
  shift 5
  local want
  want="$(file_hash "$pom")"
  if [[ -f "$marker" && "$(cat "$marker")" == "$want" ]]; then
    return 0
  fi
  mkdir -p "$dest"
  exec {lock_fd}>"$dest/.assemble.lock"
  flock "$lock_fd"
  if [[ -f "$marker" && "$(cat "$marker")" == "$want" ]]; then # another process finished it meanwhile
    exec {lock_fd}>&-
    return 0
  fi
  require_tool mvn "apt-get install -y maven"
  require_java17
  info "assembling $label from Maven Central (first run only)…"
  local log="$dest/assemble.log" sub
  rm -f "$marker"
  for sub in $subdirs; do rm -rf "${dest:?}/$sub"; done
  # -q keeps Maven quiet; the full output still goes to a log that we show on failure.
  if ! (cd "$(dirname "$pom")" && mvn -q -B -f "$pom" package "$@") >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    exec {lock_fd}>&-
    die "assembling $label failed (full Maven output: $log)"
  fi
  printf '%s\n' "$want" >"$marker"
  exec {lock_fd}>&-
}

# pid_alive PIDFILE NEEDLE: true when PIDFILE names a live process whose command line contains NEEDLE.
# The NEEDLE check protects against a stale pid file whose number was reused by an unrelated process.
pid_alive() {
  local pidfile="$1" needle="$2" pid
  [[ -f "$pidfile" ]] || return 1
  pid="$(cat "$pidfile" 2>/dev/null)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ -r "/proc/$pid/cmdline" ]] || return 1
  grep -qF -- "$needle" < <(tr '\0' ' ' <"/proc/$pid/cmdline")
}

# port_open PORT [HOST]: true when something accepts TCP connections there (bash /dev/tcp, no extra tools).
port_open() {
  (exec 3<>"/dev/tcp/${2:-127.0.0.1}/$1") 2>/dev/null
}

# java_major JAVA: the feature version of that java (17, 21, 25, ...), empty when it does not run.
java_major() {
  local version
  version="$("$1" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n1)" || true
  printf '%s\n' "${version%%.*}"
}

# java_at_least MIN LABEL PREFERRED_HOME ENV_NAME: print a java of version MIN or newer — PREFERRED_HOME, JAVA_HOME,
# java on PATH, then the JDKs under /usr/lib/jvm (the newest first). Kafka and JMeter are content with 17, so the
# system default is often too old for the Quarkus servers (registry, Keycloak); ENV_NAME is named in the error.
java_at_least() {
  local min="$1" label="$2" preferred="$3" env_name="$4" candidates=() c major tried=() jdk
  [[ -n "$preferred" ]] && candidates+=("$preferred/bin/java")
  [[ -n "${JAVA_HOME:-}" ]] && candidates+=("$JAVA_HOME/bin/java")
  command -v java >/dev/null 2>&1 && candidates+=("$(command -v java)")
  while IFS= read -r jdk; do candidates+=("$jdk/bin/java"); done < <(find /usr/lib/jvm -mindepth 1 -maxdepth 1 -type d 2>/dev/null | sort -rV)
  for c in "${candidates[@]}"; do
    [[ -x "$c" ]] || continue
    major="$(java_major "$c")"
    if [[ "$major" =~ ^[0-9]+$ && "$major" -ge "$min" ]]; then
      printf '%s\n' "$c"
      return 0
    fi
    tried+=("$c (${major:-?})")
  done
  die "$label needs Java $min or newer; found only: ${tried[*]:-no java at all}. Install one (e.g. apt-get install -y openjdk-21-jdk-headless) or set $env_name to its folder"
}

# engine_openssl: choose, once, the OpenSSL the Rust engine is built with, and export the choice (and what openssl-sys
# needs for it) so that the build, the tests and the lint of this run, and the scripts they start, share one feature
# set and never rebuild each other's outputs. OpenSSL is linked statically either way (the .so in the jar needs no
# libssl at run time):
#   - system: the C compiler finds libssl.a, libcrypto.a and <openssl/ssl.h> (Debian: libssl-dev, installed with
#     apt-get when missing and this runs as root, as the lint installs shellcheck). The crate is built without its
#     default feature vendored-openssl, with OPENSSL_STATIC=1 and OpenSSL's directories for openssl-sys (librdkafka's
#     configure finds the same headers on the compiler's default path). No OpenSSL to compile: a shorter cold build.
#   - vendored: else (the crate's default feature: openssl-src compiles OpenSSL 3 from source), saying so.
# KAFKA_NATIVE_OPENSSL=system or =vendored forces one (system fails when it is not there); unset or auto chooses.
engine_openssl() {
  local want="${KAFKA_NATIVE_OPENSSL:-auto}" cc="${CC:-cc}" attempt ssl crypto inc log
  case "$want" in
    vendored) return 0 ;;
    system) [[ -n ${OPENSSL_STATIC:-} && -n ${OPENSSL_LIB_DIR:-} && -n ${OPENSSL_INCLUDE_DIR:-} ]] && return 0 ;;
    auto) ;;
    *) die "KAFKA_NATIVE_OPENSSL must be system, vendored or unset (auto), not '$want'" ;;
  esac
  for attempt in find install-then-find; do
    if [[ $attempt == install-then-find ]]; then
      if [[ $want != auto || "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then break; fi
      log="$(mktemp -t libssl-dev-install.XXXXXX)"
      info "installing libssl-dev (apt-get), to link the system's OpenSSL instead of compiling one..."
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libssl-dev >"$log" 2>&1 ||
        { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libssl-dev; } \
          >>"$log" 2>&1 || info "libssl-dev could not be installed (apt-get's output: $log)"
    fi
    # The static libraries the compiler's linker finds (it prints the bare name when it finds none), and the
    # directory it takes <openssl/ssl.h> from (the preprocessor's line markers name it): the very headers
    # librdkafka's configure compiles against.
    ssl="$("$cc" -print-file-name=libssl.a 2>/dev/null)" || ssl=""
    crypto="$("$cc" -print-file-name=libcrypto.a 2>/dev/null)" || crypto=""
    inc="$(printf '#include <openssl/ssl.h>\n' | "$cc" -E -x c - 2>/dev/null |
      sed -n 's:^# [0-9]* "\(/.*\)/openssl/ssl\.h".*:\1:p' | head -n1)" || inc=""
    if [[ $ssl == /* && -f $ssl && $crypto == /* && -f $crypto && -n $inc ]]; then
      ssl="$(dirname "$(realpath "$ssl")")"
      crypto="$(dirname "$(realpath "$crypto")")"
      if [[ $ssl == "$crypto" ]]; then
        export KAFKA_NATIVE_OPENSSL=system OPENSSL_STATIC=1 OPENSSL_LIB_DIR="$ssl" OPENSSL_INCLUDE_DIR="$inc"
        return 0
      fi
    fi
  done
  [[ $want == system ]] &&
    die "KAFKA_NATIVE_OPENSSL=system, but $cc finds no libssl.a, libcrypto.a and <openssl/ssl.h> (apt-get install libssl-dev)"
  info "note: no static system OpenSSL (libssl-dev: libssl.a, libcrypto.a, headers): OpenSSL is compiled from source (vendored), a longer cold build"
  export KAFKA_NATIVE_OPENSSL=vendored
}

# engine_cargo SUBCOMMAND ARGS...: cargo on the Rust engine (build, test, clippy) with the OpenSSL engine_openssl
# chooses: the one feature set every build, test and lint of the project uses.
engine_cargo() {
  local sub="$1"
  shift
  engine_openssl
  if [[ $KAFKA_NATIVE_OPENSSL == system ]]; then
    cargo "$sub" --no-default-features "$@"
  else
    cargo "$sub" "$@"
  fi
}
