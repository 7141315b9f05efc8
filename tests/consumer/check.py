#!/usr/bin/env python3
"""Checks a consumer/end-to-end run the way a user reads it: the JTL (CSV) and the engine's JSON summaries.

Usage: check.py JTL [--consumer-summary F] [--producer-summary F] [--records N] [--match-producer]
                    [--no-rebalance] [--rebalanced N] [--pauses THREADS] [--joined N] [--ended-within S]
                    [--latency-below-ms MS] [--lag ok|growing] [--codes CODE,...]
  --records N          the consumers consumed exactly N records (summary and JTL agree)
  --match-producer     consumed records == the producers' acked count (exactly once, nothing lost)
  --no-rebalance       the consumer summary counts no rebalance
  --rebalanced N       the consumer summary counts at least N rebalances (group assignments)
  --pauses THREADS     the summary's rebalance_pauses has THREADS members whose figures add up to the group's,
                       and the JTL marks the samples that followed a rebalance (jtl.rebalance_pauses)
  --joined N           with --pauses: at least N of them were assigned partitions (default all)
  --ended-within S     the consume samples span at most S seconds (the threads stopped by themselves)
  --latency-below-ms   end-to-end latency: p50 > 0 and p99 below MS
  --lag ok             every lag sample passed and the kafka.lag column holds numbers, the last one 0
  --lag growing        at least one lag sample failed with LAG_GROWING
  --codes              the consume samples' response codes are all among these (default OK,EMPTY)
Prints one line of figures; exits 1 with the reason on the first mismatch.
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402
from jtl import fail  # noqa: E402

jtl.PREFIX = "check"


def main():
    ap = jtl.parser("jtl")
    ap.add_argument("--consumer-summary")
    ap.add_argument("--producer-summary")
    ap.add_argument("--records", type=int)
    ap.add_argument("--match-producer", action="store_true")
    ap.add_argument("--no-rebalance", action="store_true")
    ap.add_argument("--rebalanced", type=int, metavar="N", help="the consumer summary counts at least N rebalances")
    ap.add_argument("--pauses", type=int, metavar="THREADS")
    ap.add_argument("--joined", type=int, metavar="N", help="with --pauses: at least N members assigned partitions")
    ap.add_argument("--latency-below-ms", type=float)
    ap.add_argument("--ended-within", type=float, metavar="S", help="first to last consume sample within S seconds")
    ap.add_argument("--lag", choices=["ok", "growing"])
    ap.add_argument("--codes", default="OK,EMPTY")
    args = ap.parse_args()

    rows = jtl.rows(args.jtl)
    consume = [r for r in rows if r["label"] == "kafka-consume"]
    lag = [r for r in rows if r["label"] == "kafka-lag"]
    if not consume:
        fail("no kafka-consume rows in the JTL")
    codes = set(args.codes.split(","))
    jtl.none_bad(consume, lambda r: r["responseCode"] not in codes, f"consume rows with other codes than {sorted(codes)}")
    jtl_records = 0
    for r in consume:
        m = re.match(r"(\d+) records?", r["responseMessage"])
        jtl_records += int(m.group(1)) if m else 0
    figures = [f"{len(consume)} consume rows, {jtl_records} records in the JTL"]

    summary = None
    if args.consumer_summary:
        summary = jtl.summary(args.consumer_summary)
        if summary["records"] != jtl_records:
            fail(f"consumer summary says {summary['records']} records, the JTL {jtl_records}")
        if summary["check_failures"] != 0:
            fail(f"{summary['check_failures']} records failed the content check")
        for key in ("perf_header", "perf_row", "e2e_line"):
            if key not in summary:
                fail(f"consumer summary lacks {key}")
        figures.append(f"{summary['perf']['nMsg.sec']:.0f} records/s")
    if args.records is not None and jtl_records != args.records:
        fail(f"{jtl_records} records consumed, expected {args.records}")
    if args.match_producer:
        producer = jtl.summary(args.producer_summary)
        if producer["acked"] != jtl_records:
            fail(f"producers acked {producer['acked']}, consumers consumed {jtl_records}")
        figures.append(f"producers acked {producer['acked']}")
    if args.no_rebalance and summary["rebalances"] != 0:
        fail(f"{summary['rebalances']} rebalances with static assignment")
    if args.rebalanced is not None:
        if summary["rebalances"] < args.rebalanced:
            fail(f"{summary['rebalances']} rebalances counted, expected at least {args.rebalanced}")
        figures.append(f"{summary['rebalances']} rebalances, rebalance.time.ms {summary['perf']['rebalance.time.ms']}")
    if args.pauses is not None:
        count, total, longest, marked = jtl.rebalance_pauses(summary, consume, args.pauses, args.joined)
        figures.append(f"pauses: {count} in all, {total} ms, at most {longest} ms; {marked} samples marked")
    if args.ended_within is not None:
        span = (max(int(r["timeStamp"]) + int(r["elapsed"]) for r in consume) - min(int(r["timeStamp"]) for r in consume)) / 1000
        if span > args.ended_within:
            fail(f"the consumers read for {span:.0f} s, expected their threads to stop within {args.ended_within:.0f} s")
        figures.append(f"threads done in {span:.0f} s")
    if args.latency_below_ms is not None:
        e2e = summary["e2e_latency_us"]
        if not e2e["count"] or e2e["p50"] <= 0 or e2e["p99"] / 1000 >= args.latency_below_ms:
            fail(f"end-to-end latency out of bounds: {e2e}")
        figures.append(f"e2e p50 {e2e['p50'] / 1000:.1f} ms, p99 {e2e['p99'] / 1000:.1f} ms")
    if args.lag:
        if not lag:
            fail("no kafka-lag rows in the JTL")
        if "kafka.lag" not in lag[0]:
            fail("no kafka.lag column: run with -Jsample_variables=kafka.lag")
        growing = [r for r in lag if r["responseCode"] == "LAG_GROWING"]
        if args.lag == "ok":
            jtl.none_bad(lag, lambda r: r["responseCode"] != "OK", "lag rows failed")
            if not all(r["kafka.lag"].isdigit() for r in lag):
                fail(f"kafka.lag column: {[r['kafka.lag'] for r in lag]}")
            if lag[-1]["kafka.lag"] != "0":
                fail(f"the consumers did not catch up: last lag {lag[-1]['kafka.lag']}")
        elif not growing:
            fail(f"no LAG_GROWING verdict; lag column: {[r['kafka.lag'] for r in lag]}")
        figures.append(f"lag samples {len(lag)} ({len(growing)} LAG_GROWING), lag column {[r['kafka.lag'] for r in lag]}")
    print("check ok: " + ", ".join(figures))


if __name__ == "__main__":
    main()
