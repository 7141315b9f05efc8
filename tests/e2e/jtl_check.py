#!/usr/bin/env python3
"""Checks a JMeter CSV results file (JTL) the way a user reads it.

Usage: jtl_check.py FILE --rows N [--messages M] [--all-ok] [--code CODE] [--summary JSON]
  --rows N       the JTL has exactly N sample rows
  --messages M   the sum of SampleCount (messages) is M (needs jmeter.save.saveservice.sample_count=true)
  --all-ok       every row is successful with response code OK and a positive sent-bytes count
  --summary F    the engine's JSON summary agrees: acked == messages, failed == 0
Prints one line of figures; exits 1 with the reason on the first mismatch.
"""
import argparse
import csv
import json
import sys


def fail(why):
    print(f"JTL check failed: {why}")
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--messages", type=int)
    ap.add_argument("--all-ok", action="store_true")
    ap.add_argument("--summary")
    args = ap.parse_args()

    with open(args.file, newline="") as f:
        rows = list(csv.DictReader(f))
    if len(rows) != args.rows:
        fail(f"{len(rows)} rows, expected {args.rows}")
    if args.all_ok:
        bad = [r for r in rows if r["success"] != "true" or r["responseCode"] != "OK" or int(r["sentBytes"]) <= 0]
        if bad:
            fail(f"{len(bad)} rows not OK, first: {bad[0]['responseCode']} {bad[0]['responseMessage']}")
    messages = sum(int(r.get("SampleCount") or 1) for r in rows)
    if args.messages is not None:
        if "SampleCount" not in rows[0]:
            fail("no SampleCount column: run with -Jjmeter.save.saveservice.sample_count=true")
        if messages != args.messages:
            fail(f"sum of SampleCount is {messages}, expected {args.messages}")
    if args.summary:
        with open(args.summary) as f:
            summary = json.load(f)
        if summary["acked"] != messages or summary["failed"] != 0:
            fail(f"summary says acked={summary['acked']} failed={summary['failed']}, JTL says {messages} messages")
    elapsed = sorted(int(r["elapsed"]) for r in rows)
    print(f"JTL ok: {len(rows)} rows, {messages} messages, median elapsed {elapsed[len(elapsed) // 2]} ms")


if __name__ == "__main__":
    main()
