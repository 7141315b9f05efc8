#!/usr/bin/env python3
"""The rebalance suite's check on what scripts/experiment consumer-rebalance leaves in its folder.

Usage: checks.py CHECK ARG...   (run.sh calls each; CHECK is a function below, with dashes)
"""
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402


def published(folder):
    """The three protocols each read records, their first three members had their first assignment (their join),
    and they counted rebalances and a max pause. That the later joiners had theirs too is not asserted in a --quick
    run beside another suite: under KIP-848 the broker gives a newcomer partitions only once their owners have
    revoked them at a heartbeat of theirs (5 s apart by the broker's default), and a cooperative-sticky group under
    load was seen with its second, assigning phase not done 15 s after the first (4 of 6 members joined on an idle
    machine, 3 of 6 under load). The Markdown table has one row per protocol with the same rebalance count; each
    run's consumer summary has the six members' pauses adding up to the group's and its JTL marks the polls that
    followed a rebalance; the leaving thread's consumer closed when its thread ended, before the end of the test
    (jmeter.log); the chart and the link from index.html."""
    r = jtl.summary(os.path.join(folder, "consumer-rebalance.json"))
    rows = {p["protocol"]: p for p in r["protocols"]}
    assert sorted(rows) == ["classic", "consumer", "cooperative-sticky"], sorted(rows)
    for name, p in rows.items():
        assert p["records"] > 0 and p["joins"] >= 3, (name, p["records"], p["joins"])
        assert p["rebalances"] > 0 and p["max_pause_ms"] is not None, (name, p["rebalances"], p["max_pause_ms"])
    md = open(os.path.join(folder, "consumer-rebalance.md")).read()
    table = [line for line in md.splitlines()
             if line.startswith("| ") and not line.startswith(("| protocol |", "|---"))]
    assert len(table) == 3, md
    for p in rows.values():
        row = next(line for line in table if line.startswith(f"| {p['label']} |"))
        assert row.split(" | ")[3] == str(p["rebalances"]) and int(row.split(" | ")[3]) > 0, row
        # What the tester reads of the same run: each member's pauses in the consumer summary, adding up to the
        # group's, and the JTL rows of the polls that followed a rebalance marked.
        summary = jtl.summary(p["jtl"][:-len(".jtl")] + "-consumer-summary.json")
        consume = [s for s in jtl.rows(p["jtl"]) if s["label"].startswith("kafka-consume")]
        jtl.rebalance_pauses(summary, consume, threads=6, joined=3)
        # The leaving thread's consumer closed, and so left the group, when its thread ended, before the test's end.
        log = open(p["jtl"][:-len(".jtl")] + ".log", errors="replace").read().splitlines()
        ended = next(i for i, line in enumerate(log) if "Notifying test listeners of end of test" in line)
        left = [i for i, line in enumerate(log) if "kafka-consume-leaving: closed: " in line]
        assert left and left[0] < ended, (name, "the leaving consumer did not close before the end of the test")
    assert os.path.getsize(os.path.join(folder, "consumer-rebalance.png")) > 1000
    page = open(os.path.join(folder, "index.html")).read()
    assert "href='consumer-rebalance.md'" in page and "src='consumer-rebalance.png'" in page


if __name__ == "__main__":
    jtl.run_checks({f.__name__: f for f in (published,)}, "rebalance")
