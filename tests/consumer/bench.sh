#!/usr/bin/env bash
# Consumer throughput, the classic experiment: one prepared topic (6 partitions, 200k records of 200 B written by
# kafka-producer-perf-test), read from the start by kafka-consumer-perf-test, then by the native consumer sampler with
# 1, 3 and 6 JMeter threads (fresh group each, static assignment, perf-test columns from the engine), in one run.
#   tests/consumer/bench.sh [RECORDS] [PARTITIONS]
# Needs a built jar (scripts/build) and a running broker (scripts/kafka start). Not part of scripts/test.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
records="${1:-200000}"
partitions="${2:-6}"
bootstrap="${KAFKA_BOOTSTRAP:-127.0.0.1:9092}"
out="$root/target/consumer-bench"
mkdir -p "$out"
topic="consumer-bench-$RANDOM$RANDOM"

scripts/kafka topics --bootstrap-server "$bootstrap" --create --topic "$topic" --partitions "$partitions" \
  --replication-factor 1 >/dev/null
scripts/kafka perf-producer --bootstrap-server "$bootstrap" --topic "$topic" --num-records "$records" --record-size 200 \
  --throughput -1 --producer-props acks=1 linger.ms=5 batch.size=65536 | tail -n 1

echo "== kafka-consumer-perf-test"
scripts/kafka perf-consumer --bootstrap-server "$bootstrap" --topic "$topic" --messages "$records" \
  --group "bench-perf-$RANDOM" --timeout 60000 | tee "$out/perf-consumer.out" | grep -v '^WARN'
tool=$(grep -E '^[0-9]{4}-' "$out/perf-consumer.out" | tail -n 1 | awk -F', ' '{ printf "%.0f (fetch.nMsg.sec %.0f, rebalance %s ms)", $6, $10, $7 }')

declare -A native
for threads in 1 3 6; do
  echo "== jmeter-plans/consumer-throughput.jmx, $threads thread(s)"
  scripts/jmeter -n -t jmeter-plans/consumer-throughput.jmx -l "$out/threads-$threads.jtl" -j "$out/threads-$threads.log" \
    -Jkafka.bootstrap="$bootstrap" -Jkafka.topic="$topic" -Jthreads="$threads" -Jpoll.timeout.ms=2000 \
    -Jkafka.consumer.summary.file="$out/threads-$threads.json" >"$out/threads-$threads.out" 2>&1
  grep -E '^(start.time|[0-9]{4}-)' "$out/threads-$threads.out"
  native[$threads]=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(f\"{j['perf']['nMsg.sec']:.0f} ({j['records']} records, {j['rebalances']} rebalances)\")" "$out/threads-$threads.json")
done

echo
echo "topic $topic: $records records of 200 B on $partitions partitions"
printf '%-34s %s\n' "kafka-consumer-perf-test" "$tool records/s"
for threads in 1 3 6; do
  printf '%-34s %s\n' "native sampler, $threads thread(s)" "${native[$threads]} records/s"
done
