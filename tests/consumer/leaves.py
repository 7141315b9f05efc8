#!/usr/bin/env python3
"""Checks tests/consumer/thread-leaves.jmx's run the way a user reads it: a consumer thread that ends (its loop
count reached) leaves its group, so the thread that stays is given the partitions at once, and the summary still
counts what the ended thread read.

Usage: leaves.py JTL CONSUMER_SUMMARY OUT LOG WITHIN_S SESSION_TIMEOUT_MS
  JTL                 the run's CSV JTL (labels kafka-consume-stays and kafka-consume-leaves)
  CONSUMER_SUMMARY    its kafka.consumer.summary.file
  OUT, LOG            JMeter's console output and jmeter.log
  WITHIN_S            the staying thread's sample after its new assignment ends at most this long after the other
                      thread's last sample
  SESSION_TIMEOUT_MS  the group's session.timeout.ms: WITHIN_S must be well below it
Prints one line of figures; exits 1 with the reason on the first mismatch.
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402
from jtl import fail  # noqa: E402

jtl.PREFIX = "leaves check"


def records(rows):
    """The records of these consume samples, as their response messages count them."""
    total = 0
    for r in rows:
        m = re.match(r"(\d+) records?", r["responseMessage"])
        total += int(m.group(1)) if m else 0
    return total


def main():
    path, summary_path, out_path, log_path, within_s, session_ms = sys.argv[1:7]
    within_s, session_ms = float(within_s), int(session_ms)
    if within_s * 1000 * 2 > session_ms:
        fail(f"{within_s} s is not well below session.timeout.ms {session_ms}: the check would prove nothing")
    rows = jtl.rows(path)
    stays = [r for r in rows if r["label"] == "kafka-consume-stays"]
    leaves = [r for r in rows if r["label"] == "kafka-consume-leaves"]
    if not stays or not leaves:
        fail(f"{len(stays)} kafka-consume-stays and {len(leaves)} kafka-consume-leaves rows")
    jtl.none_bad(stays + leaves, lambda r: r["responseCode"] not in ("OK", "EMPTY"), "consume rows not OK or EMPTY")
    stayed, left = records(stays), records(leaves)
    if left == 0:
        fail(f"the leaving thread read nothing in its {len(leaves)} samples: it never held a partition")
    left_at = max(int(r["timeStamp"]) + int(r["elapsed"]) for r in leaves)
    if max(int(r["timeStamp"]) for r in stays) < left_at + within_s * 1000:
        fail(f"the staying thread ended less than {within_s} s after the other: nothing to see")
    # The staying thread's samples that followed a rebalance after the other thread ended: the partitions it was
    # given. Its join was rebalance #1, so this is #2 or later.
    after = [(int(r["timeStamp"]) + int(r["elapsed"]), int(m.group(1)), int(m.group(2))) for r in stays
             if (m := jtl.REBALANCE_MARK.search(r["responseMessage"])) and int(r["timeStamp"]) >= left_at]
    if not after:
        marks = [r["responseMessage"] for r in stays if jtl.REBALANCE_MARK.search(r["responseMessage"])]
        fail(f"the staying thread was given no partition after the other thread ended at {left_at}: "
             f"its rebalances {marks}")
    ended, number, pause = after[0]
    waited = (ended - left_at) / 1000
    if waited > within_s or number < 2:
        fail(f"the staying thread's rebalance #{number} ended {waited:.1f} s after the other thread's last sample, "
             f"expected #2 or later within {within_s} s (session.timeout.ms {session_ms})")
    summary = jtl.summary(summary_path)
    if summary["consumers"] != 2 or summary["records"] != stayed + left:
        fail(f"the summary counts {summary['consumers']} consumers and {summary['records']} records, the JTL 2 "
             f"threads and {stayed} + {left} records")
    members = summary["rebalance_pauses"]["threads"]
    if len(members) != 2 or max(t["count"] for t in members) < number:
        fail(f"the summary's rebalance_pauses {members}: expected 2 threads, one with {number} rebalances or more")
    out = open(out_path).read()
    headers = out.count("start.time, end.time, data.consumed.in.MB")
    if headers != 1:
        fail(f"{headers} consumer reports printed, expected one at the end of the test")
    closed = [line for line in open(log_path) if "kafka-consume-leaves: closed: " in line]
    if len(closed) != 1:
        fail(f"jmeter.log has {len(closed)} 'kafka-consume-leaves: closed:' lines")
    print(f"leaves check ok: the leaving thread read {left} records in {len(leaves)} samples; the staying thread's "
          f"rebalance #{number} (paused {pause} ms) ended {waited:.1f} s after it, session.timeout.ms {session_ms}; "
          f"summary: 2 consumers, {summary['records']} records ({stayed} + {left})")


if __name__ == "__main__":
    main()
