# shellcheck shell=bash
# Shared by the end-to-end test scripts (source it): named checks, each printed PASS or FAIL, and the closing
# "N passed, N failed" line whose exit status says whether all passed.

passed=0
failed=0

# The repository root, from this file's place (tests/lib/checks.sh).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# enter_work_dir NAME: cd to the repository root and start an empty $out = target/NAME for this run's files.
enter_work_dir() {
  cd "$root" || exit 1
  out="$root/target/$1"
  rm -rf "$out"
  mkdir -p "$out"
}

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

# topic_messages TOPIC [BOOTSTRAP]: the messages in TOPIC, the sum of its partitions' end offsets (a fresh topic:
# only this run's), at BOOTSTRAP (default the local broker, 127.0.0.1:9092).
topic_messages() {
  scripts/kafka run org.apache.kafka.tools.GetOffsetShell --bootstrap-server "${2:-127.0.0.1:9092}" --topic "$1" \
    2>/dev/null | awk -F: '{ n += $3 } END { print n + 0 }'
}

# baseline_plan NAME ARGS...: runs jmeter-plans/producer-baseline.jmx (or $PLAN) headless, CSV JTL with sample counts, its files
# $out/NAME.jtl, $out/NAME.log and the engine's summary $out/NAME-summary.json; ARGS are more JMeter options.
baseline_plan() {
  local name="$1"
  shift
  scripts/jmeter -n -t "${PLAN:-jmeter-plans/producer-baseline.jmx}" -l "$out/$name.jtl" -j "$out/$name.log" \
    -Jjmeter.save.saveservice.output_format=csv -Jjmeter.save.saveservice.sample_count=true \
    -Jkafka.summary.file="$out/$name-summary.json" "$@"
}

# check NAME COMMAND...: runs the command and counts it; a failing check does not stop the others.
check() {
  local name="$1" began=$SECONDS
  shift
  if "$@"; then
    echo "PASS $name ($((SECONDS - began)) s)"
    passed=$((passed + 1))
  else
    echo "FAIL $name ($((SECONDS - began)) s)"
    failed=$((failed + 1))
  fi
}

# The closing line; returns non-zero when any check failed.
summary() {
  echo "$passed passed, $failed failed"
  ((failed == 0))
}

# jtl_says QUESTION JTL ARG...: tests/lib/jtl.py's answer about a JTL (counts, error-codes, one-failed-row,
# stopped-at-first-failure; see that file).
jtl_says() { python3 "$root/tests/lib/jtl.py" "$@"; }

# stopped_at_first_failure JTL CODE WORD...: a plan with a mistake stopped at once: one or two rows (one per thread
# that started), each failed with CODE and a message that names every WORD.
stopped_at_first_failure() { jtl_says stopped-at-first-failure "$@"; }
