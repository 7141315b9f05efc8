#!/usr/bin/env python3
"""The transactions suite's checks on a run's JTL and summaries: commits and intentional aborts counted alike by
the JTL, the summary and the audit; the M-th sample committing; the fenced test failing from its fencing on; a
hanging transaction explained by the lag samples.

Usage: checks.py CHECK ARG...   (run.sh calls each; CHECK is a function below, with dashes)
Prints what it saw; exits 1 with the reason at the first mismatch.
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402


def aborts_counted(results, summary, committed):
    """50 % aborts over 100 one-sample transactions of 10 records: 50 OK and 50 ABORTED successful rows, the OK
    messages = the read_committed count (COMMITTED) = 1000, the summary's transaction counts, and the audit's
    aborted records (seen with read_uncommitted) = the JTL's ABORTED messages."""
    rows = jtl.rows(results)
    committed = int(committed or -1)
    assert len(rows) == 100 and all(r["success"] == "true" for r in rows), \
        [r for r in rows if r["success"] != "true"][:2]
    codes = {c: sum(1 for r in rows if r["responseCode"] == c) for c in ("OK", "ABORTED")}
    assert codes == {"OK": 50, "ABORTED": 50}, codes
    ok_messages = sum(int(r["SampleCount"]) for r in rows if r["responseCode"] == "OK")
    aborted_messages = sum(int(r["SampleCount"]) for r in rows if r["responseCode"] == "ABORTED")
    assert ok_messages == committed == 1000, (ok_messages, committed)
    s = jtl.summary(summary)
    t = s["transactions"]
    assert (t["committed"], t["aborted"], t["failed"], t["records_committed"], t["records_aborted"]) == \
        (50, 50, 0, 1000, 1000), t
    assert 0 < t["commit_us"]["p50"] <= t["commit_us"]["p99"], t
    audit = s["audit"]
    assert (audit["found"], audit["aborted"], audit["complete"]) == (1000, aborted_messages, True), audit
    print(f"JTL OK messages {ok_messages} = read_committed {committed}; JTL ABORTED messages {aborted_messages} = "
          f"the audit's aborted (read_uncommitted) {audit['aborted']}; {t}")


def commits_every(results, every, count):
    """COUNT OK samples, of which every EVERY-th (and only those) says its transaction committed."""
    rows = jtl.rows(results)
    every, count = int(every), int(count)
    assert len(rows) == count and all(r["responseCode"] == "OK" for r in rows), rows[:1]
    ends = [i for i, r in enumerate(rows) if r["responseMessage"].endswith("transaction committed")]
    assert ends == list(range(every - 1, count, every)), ends
    print("commits at samples", [i + 1 for i in ends])


def fenced_from_then_on(results):
    """The first of two tests with the same prefix: successful samples until it is fenced, then only failed ones,
    the first saying FENCED and naming transactional.id.prefix."""
    rows = jtl.rows(results)
    fenced = [i for i, r in enumerate(rows) if r["responseCode"] == "FENCED"]
    assert fenced, {r["responseCode"] for r in rows}
    first = fenced[0]
    assert all(r["success"] == "true" for r in rows[:first]), "failures before the fencing"
    assert all(r["success"] == "false" for r in rows[first:]), "a sample succeeded after the producer was fenced"
    m = rows[first]["responseMessage"]
    assert "fenced" in m and "transactional.id.prefix" in m, m
    print(f"{first} samples OK, then {len(rows) - first} failed, the first with: {m[:160]}")


def hanging_explained(results, consumer_summary):
    """A transaction left open after 50 committed records: the read_committed consumer read those 50, and every lag
    sample says an open transaction holds the last-stable offset of p0 at 50, how many records it holds and for how
    many samples in a row."""
    rows = jtl.rows(results)
    records = jtl.summary(consumer_summary)["records"]
    assert records == 50, f"the read_committed consumer read {records} records, expected the 50 committed ones"
    lag = [r for r in rows if r["label"] == "kafka-lag"]
    assert len(lag) >= 2, f"{len(lag)} lag samples"
    held = re.compile(r"^lag 0 \(.*\): p0=0; an open transaction holds the last-stable offset of p0 at 50 while "
                      r"its high watermark is (\d+) \((\d+) record\(s\) held(, for (\d+) samples in a row)?\): "
                      r"read_committed consumers cannot read past .* the lag is counted to the last-stable offset")
    seen = []
    for r in lag:
        m = held.match(r["responseMessage"])
        assert r["success"] == "true" and m, r["responseMessage"]
        assert int(m[1]) > 50 and int(m[2]) == int(m[1]) - 50, r["responseMessage"]
        seen.append(int(m[4] or 1))
    assert seen == list(range(1, len(lag) + 1)), f"held for {seen} samples in a row"
    print(f"consumer read {records}; {len(lag)} lag samples, the last: {lag[-1]['responseMessage'][:230]}")


if __name__ == "__main__":
    jtl.run_checks({f.__name__: f for f in (aborts_counted, commits_every, fenced_from_then_on,
                                            hanging_explained)}, "transactions")
