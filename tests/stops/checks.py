#!/usr/bin/env python3
"""The stops suite's books and checks: a stopped run's JTL, printed report, summary and topic side by side, and no
sample sent after a stop (a failed setup's one row: tests/lib/jtl.py one-failed-row).

Usage: checks.py CHECK ARG...   (run.sh calls each; CHECK is a function below, with dashes)
Prints what it saw; exits 1 with the reason at the first mismatch.
"""
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402


def books(results, output, summary, topic_messages, exit_code):
    """Prints one JSON line: the JTL's OK messages and rows, the last "records sent" line JMeter printed, the
    summary's counts and audit, the topic's message count and JMeter's exit code."""
    rows = jtl.rows(results)
    ok = sum(int(r["SampleCount"]) for r in rows if r["success"] == "true")
    perf = re.findall(r"^(\d+) records sent,", open(output).read(), re.M)
    s = jtl.summary(summary)
    print(json.dumps({"jtl_ok": ok, "jtl_rows": len(rows), "perf_records_sent": int(perf[-1]) if perf else None,
                      "sent": s["sent"], "acked": s["acked"], "acked_after_sample": s["acked_after_timeout"],
                      "failed": s["failed"], "errors": s["errors"], "stopped": s.get("stopped", False),
                      "audit": s.get("audit"), "topic": int(topic_messages), "exit": int(exit_code)}))


def nothing_sent_after(results, stop_ms):
    """No successful sample ended more than 200 ms after the stop (JMeter stamps a sample at its end: one ending later
    was sent after the stop)."""
    rows = jtl.rows(results)
    stop = int(stop_ms)
    late = [r for r in rows if r["success"] == "true" and int(r["timeStamp"]) > stop + 200]
    print(f"{len(rows)} rows, {len(late)} successful sample(s) sent after the stop")
    assert not late, f"the first: {late[0]}" if late else ""


if __name__ == "__main__":
    jtl.run_checks({f.__name__: f for f in (books, nothing_sent_after)}, "stops")
