"""Shared by the JTL checkers (tests/*/jtl_check.py, tests/consumer/check.py): read a JMeter CSV results file and its
JSON summaries, and stop at the first mismatch with its reason.

A checker imports it after putting this folder on its path:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
Run as a command, it answers the questions every suite asks of a JTL (tests/lib/checks.sh wraps them):
    jtl.py counts JTL                          "ROWS MESSAGES ERRORS OK-ROWS" (SampleCount, ErrorCount)
    jtl.py error-codes JTL                     "CODE=N ..." of the failed messages
    jtl.py stopped-at-first-failure JTL CODE WORD...
    jtl.py one-failed-row JTL CODE WORD...
"""
import argparse
import collections
import csv
import json
import re
import sys

# The first word of a failure line; a checker may name itself ("check failed: ...").
PREFIX = "JTL check"


def fail(why):
    """Prints why the check failed and exits 1."""
    print(f"{PREFIX} failed: {why}")
    sys.exit(1)


def parser(positional):
    """A command-line parser whose first argument, named `positional`, is the JTL file."""
    p = argparse.ArgumentParser()
    p.add_argument(positional)
    return p


def rows(path):
    """The JTL's sample rows, as dicts keyed by its CSV header."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def summary(path):
    """One of the engine's JSON summaries."""
    with open(path) as f:
        return json.load(f)


# A consume sample that ended a rebalance's pause: its response message ends "; after rebalance #N: paused X ms".
REBALANCE_MARK = re.compile(r"; after rebalance #(\d+): paused (\d+) ms$")


def rebalance_pauses(consumer_summary, consume_rows, threads, joined=None):
    """What a user reads of a group's rebalances: the consumer summary's rebalance_pauses has one entry per member
    (`threads` of them), each with max <= total and at least `joined` (default all) with count >= 1 (a join); the group's count and total are their
    sums, its max the longest, its count the summary's rebalances; and the JTL marks between 1 and count consume
    samples, none with a pause above the group's max. Returns (count, total ms, max ms, marked samples)."""
    pauses = consumer_summary["rebalance_pauses"]
    members = pauses["threads"]
    if len(members) != threads:
        fail(f"rebalance_pauses has {len(members)} threads, expected {threads}: {members}")
    for t in members:
        if t["max_ms"] > t["total_ms"]:
            fail(f"thread {t['thread']}: {t['count']} rebalance(s), max {t['max_ms']} ms, total {t['total_ms']} ms")
    if sum(t["count"] >= 1 for t in members) < (threads if joined is None else joined):
        fail(f"fewer than {threads if joined is None else joined} threads were assigned partitions: {members}")
    group = (sum(t["count"] for t in members), sum(t["total_ms"] for t in members), max(t["max_ms"] for t in members))
    if (pauses["count"], pauses["total_ms"], pauses["max_ms"]) != group or pauses["count"] != consumer_summary["rebalances"]:
        fail(f"the group's rebalance_pauses {pauses} do not add up to its threads' {group} "
             f"(rebalances {consumer_summary['rebalances']})")
    marks = [REBALANCE_MARK.search(r["responseMessage"]) for r in consume_rows]
    marks = [int(m.group(2)) for m in marks if m]
    if not 1 <= len(marks) <= pauses["count"]:
        fail(f"{len(marks)} consume samples marked after a rebalance, expected 1 to {pauses['count']}")
    # The JTL rounds to the ms what the summary truncates.
    if max(marks) > pauses["max_ms"] + 1:
        fail(f"a sample marked with a {max(marks)} ms pause, above the summary's max {pauses['max_ms']} ms")
    return pauses["count"], pauses["total_ms"], pauses["max_ms"], len(marks)


def need_sample_count(rows):
    """Fails unless the JTL has JMeter's SampleCount column (messages per sample)."""
    if "SampleCount" not in rows[0]:
        fail("no SampleCount column: run with -Jjmeter.save.saveservice.sample_count=true")


def none_bad(rows, bad, what, width=None):
    """Fails when some row is `bad(row)`: how many `what` rows, and the first one's code and message."""
    found = [r for r in rows if bad(r)]
    if found:
        fail(f"{len(found)} {what}, first: {found[0]['responseCode']} {found[0]['responseMessage'][:width]}")


def run_checks(checks, suite):
    """The command line of a suite's checks module: `checks.py NAME ARG...` calls the function NAME of the mapping
    `checks` (dashes for underscores) with the arguments. A failed assertion ends it with one line, "SUITE check NAME
    failed: REASON", and exit 1, so the suite's log says which check and why without a traceback."""
    names = sorted(n.replace("_", "-") for n in checks)
    if len(sys.argv) < 2 or sys.argv[1].replace("-", "_") not in checks:
        print(f"usage: {sys.argv[0]} CHECK ARG... (CHECK: {', '.join(names)})")
        sys.exit(2)
    name = sys.argv[1]
    try:
        checks[name.replace("-", "_")](*sys.argv[2:])
    except AssertionError as e:
        reason = str(e)
        if len(reason) > 800:  # a reason may hold whole rows: enough to see which, not a page of them
            reason = f"{reason[:800]}… ({len(reason)} characters)"
        print(f"{suite} check {name} failed: {reason}")
        sys.exit(1)


def counts(path):
    """Prints "ROWS MESSAGES ERRORS OK-ROWS": sample rows, messages (SampleCount, 1 when absent), failed messages
    (ErrorCount) and successful rows."""
    r = rows(path)
    print(len(r), sum(int(x.get("SampleCount") or 1) for x in r), sum(int(x.get("ErrorCount") or 0) for x in r),
          sum(x["success"] == "true" for x in r))


def error_codes(path):
    """Prints "CODE=N ..." of the failed messages (ErrorCount of the failed rows), by response code."""
    c = collections.Counter()
    for r in rows(path):
        if r["success"] == "false":
            c[r["responseCode"]] += int(r["ErrorCount"])
    print(" ".join(f"{k}={v}" for k, v in sorted(c.items())))


def stopped_at_first_failure(path, code, *words):
    """A plan with a mistake stopped at once: one or two rows (one per thread that started), each failed with CODE
    and a message naming every WORD."""
    r = rows(path)
    assert 1 <= len(r) <= 2, f"{len(r)} rows: the test should stop at the first failure"
    for x in r:
        assert x["success"] == "false" and x["responseCode"] == code, x
        for w in words:
            assert w in x["responseMessage"], (w, x["responseMessage"])
    print("stopped at the first failure:", r[0]["responseMessage"])


def one_failed_row(path, code, *words):
    """Exactly one row (a failed setup gives one failed sample, not one per thread), failed with CODE and a message
    naming every WORD."""
    r = rows(path)
    print(f"{len(r)} row(s): " + "; ".join(f"{x['threadName']} {x['responseCode']}: {x['responseMessage'][:160]}"
                                          for x in r[:3]))
    assert len(r) == 1, "exactly one failed sample"
    assert r[0]["success"] == "false" and r[0]["responseCode"] == code, r[0]
    for w in words:
        assert w in r[0]["responseMessage"], (w, r[0]["responseMessage"])


if __name__ == "__main__":
    run_checks({f.__name__: f for f in (counts, error_codes, stopped_at_first_failure, one_failed_row)}, "JTL")
