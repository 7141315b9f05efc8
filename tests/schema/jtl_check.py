#!/usr/bin/env python3
"""Checks the JTL of jmeter-plans/schema-avro.jmx the way a user reads it.

Usage: jtl_check.py FILE --produced N [--consumed N] [--producer-code CODE] [--consumer-code CODE]
  --produced N       the producer rows' SampleCount adds up to N messages, every row OK (or all with CODE)
  --consumed N       the consumer rows' SampleCount adds up to N records, every row successful (OK or EMPTY)
  --consumer-code C  instead: at least one consumer row failed with response code C
Prints one line of figures; exits 1 with the reason on the first mismatch.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402
from jtl import fail  # noqa: E402


def main():
    ap = jtl.parser("file")
    ap.add_argument("--produced", type=int, required=True)
    ap.add_argument("--consumed", type=int)
    ap.add_argument("--producer-code")
    ap.add_argument("--consumer-code")
    args = ap.parse_args()
    rows = jtl.rows(args.file)
    if not rows:
        fail("no rows")
    jtl.need_sample_count(rows)
    producer = [r for r in rows if r["label"].startswith("kafka-produce")]
    consumer = [r for r in rows if r["label"].startswith("kafka-consume")]
    if args.producer_code:
        bad = [r for r in producer if r["responseCode"] != args.producer_code or r["success"] != "false"]
        if not producer or bad:
            fail(f"expected every producer row to fail with {args.producer_code}; first other: "
                 f"{(bad or [{}])[0].get('responseCode')} {(bad or [{}])[0].get('responseMessage')}")
        print(f"JTL ok: {len(producer)} producer rows failed with {args.producer_code}: {producer[0]['responseMessage'][:200]}")
        return
    jtl.none_bad(producer, lambda r: r["success"] != "true" or r["responseCode"] != "OK", "producer rows not OK", 300)
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
    jtl.none_bad(consumer, lambda r: r["success"] != "true", "consumer rows failed", 300)
    if args.consumed is not None and consumed != args.consumed:
        fail(f"consumers decoded {consumed} records, expected {args.consumed}")
    print(f"JTL ok: {produced} records produced in {len(producer)} samples, {consumed} read back and decoded, 0 decode errors")


if __name__ == "__main__":
    main()
