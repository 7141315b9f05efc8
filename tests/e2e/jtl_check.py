#!/usr/bin/env python3
"""Checks a JMeter CSV results file (JTL) the way a user reads it.

Usage: jtl_check.py FILE --rows N [--messages M] [--all-ok] [--code CODE] [--summary JSON]
  --rows N       the JTL has exactly N sample rows
  --messages M   the sum of SampleCount (messages) is M (needs jmeter.save.saveservice.sample_count=true)
  --all-ok       every row is successful with response code OK and a positive sent-bytes count
  --summary F    the engine's JSON summary agrees: acked == messages, failed == 0
Prints one line of figures; exits 1 with the reason on the first mismatch.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402
from jtl import fail  # noqa: E402


def main():
    ap = jtl.parser("file")
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--messages", type=int)
    ap.add_argument("--all-ok", action="store_true")
    ap.add_argument("--summary")
    args = ap.parse_args()

    rows = jtl.rows(args.file)
    if len(rows) != args.rows:
        fail(f"{len(rows)} rows, expected {args.rows}")
    if args.all_ok:
        jtl.none_bad(rows, lambda r: r["success"] != "true" or r["responseCode"] != "OK" or int(r["sentBytes"]) <= 0,
                     "rows not OK")
    messages = sum(int(r.get("SampleCount") or 1) for r in rows)
    if args.messages is not None:
        jtl.need_sample_count(rows)
        if messages != args.messages:
            fail(f"sum of SampleCount is {messages}, expected {args.messages}")
    if args.summary:
        summary = jtl.summary(args.summary)
        if summary["acked"] != messages or summary["failed"] != 0:
            fail(f"summary says acked={summary['acked']} failed={summary['failed']}, JTL says {messages} messages")
    elapsed = sorted(int(r["elapsed"]) for r in rows)
    print(f"JTL ok: {len(rows)} rows, {messages} messages, median elapsed {elapsed[len(elapsed) // 2]} ms")


if __name__ == "__main__":
    main()
