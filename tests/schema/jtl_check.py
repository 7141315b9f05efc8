#!/usr/bin/env python3
"""Checks the JTL of jmeter-plans/schema-avro.jmx the way a user reads it.

Usage: jtl_check.py FILE --produced N [--consumed N] [--producer-code CODE] [--consumer-code CODE]
  --produced N       the producer rows' SampleCount adds up to N messages, every row OK (or all with CODE)
  --consumed N       the consumer rows' SampleCount adds up to N records, every row successful (OK or EMPTY)
  --consumer-code C  instead: at least one consumer row failed with response code C
Prints one line of figures; exits 1 with the reason on the first mismatch.
"""
import argparse
import csv
import sys


def fail(why):
    print(f"JTL check failed: {why}")
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--produced", type=int, required=True)
    ap.add_argument("--consumed", type=int)
    ap.add_argument("--producer-code")
    ap.add_argument("--consumer-code")
    args = ap.parse_args()
    with open(args.file, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        fail("no rows")
    if "SampleCount" not in rows[0]:
        fail("no SampleCount column: run with -Jjmeter.save.saveservice.sample_count=true")
    producer = [r for r in rows if r["label"].startswith("kafka-produce")]
    consumer = [r for r in rows if r["label"].startswith("kafka-consume")]
    if args.producer_code:
        bad = [r for r in producer if r["responseCode"] != args.producer_code or r["success"] != "false"]
        if not producer or bad:
            fail(f"expected every producer row to fail with {args.producer_code}; first other: "
                 f"{(bad or [{}])[0].get('responseCode')} {(bad or [{}])[0].get('responseMessage')}")
        print(f"JTL ok: {len(producer)} producer rows failed with {args.producer_code}: {producer[0]['responseMessage'][:200]}")
        return
    bad = [r for r in producer if r["success"] != "true" or r["responseCode"] != "OK"]
    if bad:
        fail(f"{len(bad)} producer rows not OK, first: {bad[0]['responseCode']} {bad[0]['responseMessage'][:300]}")
    produced = sum(int(r["SampleCount"]) for r in producer)
    if produced != args.produced:
        fail(f"producers sent {produced} messages, expected {args.produced}")
    consumed = sum(int(r["SampleCount"]) for r in consumer if r["success"] == "true" and r["responseCode"] == "OK")
    if args.consumer_code:
        failed = [r for r in consumer if r["responseCode"] == args.consumer_code]
        if not failed:
            fail(f"no consumer row failed with {args.consumer_code}")
        print(f"JTL ok: {produced} produced; consumer failed with {args.consumer_code}: {failed[0]['responseMessage'][:200]}")
        return
    bad = [r for r in consumer if r["success"] != "true"]
    if bad:
        fail(f"{len(bad)} consumer rows failed, first: {bad[0]['responseCode']} {bad[0]['responseMessage'][:300]}")
    if args.consumed is not None and consumed != args.consumed:
        fail(f"consumers decoded {consumed} records, expected {args.consumed}")
    print(f"JTL ok: {produced} records produced in {len(producer)} samples, {consumed} read back and decoded, 0 decode errors")


if __name__ == "__main__":
    main()
