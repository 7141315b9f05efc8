#!/usr/bin/env bash
# Scale (issue 13): 400 JMeter threads, one message per sample, default settings (the threads share a pool of
# producer.pool.size producers), to completion. Asserts what a user sees: the JTL's row count, no error, the topic's offsets; no timing is asserted.
# Needs a built jar (scripts/build) and a running broker (scripts/kafka start).
set -uo pipefail
# shellcheck source=../lib/checks.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.sh"
enter_work_dir scale

THREADS=400
LOOPS=10
topic="scale-$RANDOM$RANDOM"

topic_messages() {
  scripts/kafka run org.apache.kafka.tools.GetOffsetShell --bootstrap-server 127.0.0.1:9092 --topic "$1" 2>/dev/null |
    awk -F: '{ n += $3 } END { print n + 0 }'
}

scripts/kafka topics --create --topic "$topic" --partitions 16 --replication-factor 1 >"$out/topic.log" 2>&1
scripts/jmeter -n -t jmeter-plans/producer-baseline.jmx -l "$out/scale.jtl" -j "$out/scale.log" \
  -Jjmeter.save.saveservice.output_format=csv -Jkafka.topic="$topic" -Jthreads=$THREADS -Jloops=$LOOPS -Jrampup=0 \
  -Jrecord.size=200 -Jtopic.create=false >"$out/scale.out" 2>&1
rc=$?

rows() { python3 -c 'import csv,sys; print(sum(1 for _ in csv.DictReader(open(sys.argv[1]))))' "$out/scale.jtl"; }
errors() { python3 -c 'import csv,sys; print(sum(r["success"] != "true" for r in csv.DictReader(open(sys.argv[1]))))' "$out/scale.jtl"; }

check "JMeter exits 0 (rc $rc)" test "$rc" -eq 0
check "the JTL has $((THREADS * LOOPS)) rows ($(rows 2>/dev/null))" test "$(rows 2>/dev/null)" = $((THREADS * LOOPS))
check "no sample failed ($(errors 2>/dev/null) errors)" test "$(errors 2>/dev/null)" = 0
check "the topic holds $((THREADS * LOOPS)) messages ($(topic_messages "$topic"))" test "$(topic_messages "$topic")" = $((THREADS * LOOPS))
check "no JVM crash log" test -z "$(find "$root" -maxdepth 1 -name 'hs_err_pid*.log')"
summary
