#!/usr/bin/env python3
"""The fault suite's books and checks: a run's JTL, summary, audit and topic side by side, the slow consumer plan, a
consumer group's read through a failover against the topic's own offsets, and the failover experiment's pages.

Usage: checks.py CHECK ARG...   (run.sh calls each; CHECK is a function below, with dashes)
Prints what it saw; exits 1 with the reason at the first mismatch.
"""
import collections
import json
import os
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402


def figures(results, summary, topic_messages, exit_code, seconds):
    """Prints one JSON line: the JTL's OK messages, failed samples by code, the summary's acked and audit, the topic's
    message count, JMeter's exit code and the run's seconds."""
    rows = jtl.rows(results)
    ok = sum(int(r.get("SampleCount") or 1) for r in rows if r["success"] == "true")
    failed = [r for r in rows if r["success"] != "true"]
    s = jtl.summary(summary)
    print(json.dumps({"jtl_ok_messages": ok, "failed_samples": len(failed),
                      "failed_codes": dict(collections.Counter(r["responseCode"] for r in failed)),
                      "acked": s.get("acked"), "audit": s.get("audit") or {}, "topic": int(topic_messages),
                      "exit": int(exit_code), "seconds": int(seconds)}))


def slow_consumer_plan(plan, copy):
    """Writes a copy of the consumer plan with a 30 ms think time after each sample: a slow reader, so that a failover
    happens mid-read."""
    text = open(plan).read()
    anchor = "</io.kafkanative.jmeter.KafkaConsumer>\n        <hashTree />"
    timer = ("</io.kafkanative.jmeter.KafkaConsumer>\n        <hashTree>\n"
             "          <ConstantTimer guiclass=\"ConstantTimerGui\" testclass=\"ConstantTimer\" testname=\"think\">\n"
             "            <stringProp name=\"ConstantTimer.delay\">30</stringProp>\n          </ConstantTimer>\n"
             "          <hashTree />\n        </hashTree>")
    assert text.count(anchor) == 1, "consumer-throughput.jmx changed: no place for the think time"
    with open(copy, "w") as f:
        f.write(text.replace(anchor, timer))


def read_through_failover(results, consumer_summary, offsets, exit_code, what):
    """The group read all 3,000 records of 6 partitions through the kill of the WHAT broker: every partition to the
    topic's own end offset (GetOffsetShell's topic:partition:offset lines, independent of the engine), no failed
    sample, nothing unread, exit 0. Prints the figures per partition, then every problem."""
    rows = jtl.rows(results)
    # Records of the OK rows (an EMPTY row has SampleCount 1, JMeter's minimum, and no record).
    ok = sum(int(r.get("SampleCount") or 1) for r in rows if r["success"] == "true" and r["responseCode"] == "OK")
    failed = [r for r in rows if r["success"] != "true"]
    s = jtl.summary(consumer_summary)
    produced = {int(line.split(":")[1]): int(line.split(":")[2]) for line in open(offsets) if line.count(":") == 2}
    read = {int(p): n for p, n in s["per_partition"].items()}
    ends = {e["partition"]: e for e in s.get("partitions_at_end") or []}
    per = ", ".join(f"p{p}: {read.get(p, 0)}/{n}" for p, n in sorted(produced.items()))
    print(f"{what} kill: read {s['records']} of {sum(produced.values())} (JTL OK records {ok}, failed samples "
          f"{len(failed)}, transient errors {s.get('transient_errors')}, exit {exit_code}); read/produced per "
          f"partition: {per}")
    problems = []
    if len(produced) != 6 or sum(produced.values()) != 3000:
        problems.append(f"the topic holds {produced}, not 3000")
    if s["records"] != 3000 or ok != 3000:
        problems.append("not every record was read")
    if any(read.get(p, 0) != n for p, n in produced.items()):
        problems.append("a partition read short")
    if any(p not in ends or (ends[p]["read_offset"], ends[p]["end_offset"]) != (n, n) for p, n in produced.items()):
        problems.append(f"the summary's read/end offsets differ from the topic's: {sorted(ends.values(), key=str)}")
    if s.get("unread") or s.get("unread_records") != 0:
        problems.append(f"unread: {s.get('unread')}")
    if failed:
        problems.append(f"failed samples: {sorted({r['responseCode'] for r in failed})}")
    if exit_code != "0":
        problems.append(f"JMeter exit {exit_code}")
    assert not problems, "; ".join(problems)


def txn_coordinator_killed(results, summary, committed, exit_code, seconds, killed_at, last_s):
    """A transactional run (3 threads x 600 samples of 10 records, 5 samples per transaction) through the kill of a
    transaction coordinator at KILLED_AT (epoch seconds): every sample reported and JMeter ended by itself; each failed
    sample carries a catalogue code and a message; the samples of the last LAST_S seconds all OK (the threads
    recovered); the summary's transaction counts are the JTL's; read_committed (Kafka's consumer: COMMITTED, and the
    audit) sees the committed transactions' records, once each, none of a failed one, and of those in doubt (no answer
    to the commit) at most theirs."""
    rows = jtl.rows(results)
    s = jtl.summary(summary)
    t, audit = s["transactions"], s["audit"]
    killed_ms = float(killed_at) * 1000
    failed = [r for r in rows if r["success"] != "true"]
    commits = [r for r in rows if r["success"] == "true" and r["responseMessage"].endswith("transaction committed")]
    end = max(int(r["timeStamp"]) + int(r["elapsed"]) for r in rows)
    tail = [r for r in rows if int(r["timeStamp"]) >= end - int(last_s) * 1000]
    last_failure = max((int(r["timeStamp"]) + int(r["elapsed"]) for r in failed), default=None)
    after = [int(r["timeStamp"]) + int(r["elapsed"]) for r in commits if int(r["timeStamp"]) > (last_failure or killed_ms)]
    recovered_s = (min(after) - killed_ms) / 1000 if after else None
    print(json.dumps({"samples": len(rows), "failed_samples": len(failed),
                      "failed_codes": dict(collections.Counter(r["responseCode"] for r in failed)),
                      "jtl_commits": len(commits), "transactions": {k: v for k, v in t.items() if k != "commit_us"},
                      "commit_ms_p99": t["commit_us"]["p99"] / 1000, "commit_ms_max": t["commit_us"]["max"] / 1000,
                      "read_committed": int(committed or -1), "audit": audit, "first_commit_after_kill_s": recovered_s,
                      "exit": int(exit_code), "seconds": int(seconds)}))
    for r in failed[:3]:
        print(f"  failed: {r['responseCode']}: {r['responseMessage'][:300]}")
    problems = []
    if int(exit_code) != 0 or len(rows) != 1800:
        problems.append(f"JMeter exit {exit_code} after {len(rows)} of 1800 samples")
    if int(seconds) > 150:
        problems.append(f"the run took {seconds} s")
    bad = [r for r in failed if not re.fullmatch(r"[A-Z][A-Z_]+", r["responseCode"]) or r["responseCode"] in
           ("OK", "ABORTED") or len(r["responseMessage"]) < 30]
    if bad:
        problems.append(f"failed samples without a cause code and message: {bad[:2]}")
    if not tail or any(r["success"] != "true" for r in tail):
        problems.append(f"not all of the last {last_s} s's {len(tail)} samples are OK: the threads did not recover")
    if not killed_ms < end - int(last_s) * 1000:
        problems.append("the kill was not before the last seconds of the run")
    # A sample that began no transaction because the failed one before it could not be aborted yet is a failed
    # sample, not a failed transaction.
    waited = [r for r in failed if "no transaction begun: the previous, failed one is not aborted yet" in
              r["responseMessage"]]
    # At the end each thread commits the part of a transaction it began (a failure shifts where transactions end):
    # a commit of the summary without a JTL row, at most one per thread.
    ended = t["failed"] + t["in_doubt"]
    if not (0 <= t["committed"] - len(commits) <= 3 and (t["aborted"], ended) == (0, len(failed) - len(waited))):
        problems.append(f"summary committed/aborted/failed/in doubt {t['committed']}/{t['aborted']}/{t['failed']}/"
                        f"{t['in_doubt']}, the JTL {len(commits)} commits, 0 aborted on purpose, {len(failed)} failed "
                        f"samples of which {len(waited)} began no transaction")
    # A commit the coordinator did not answer in time is in doubt: its records may be visible (the coordinator had
    # decided to commit) or not. Those of a failed one never are.
    visible = int(committed or -1)
    if not (t["records_committed"] == audit.get("found") and
            t["records_committed"] <= visible <= t["records_committed"] + t["records_in_doubt"] and
            t["records_committed"] <= t["committed"] * 50):
        problems.append(f"records committed {t['records_committed']} (in doubt {t['records_in_doubt']}), "
                        f"read_committed {committed}, audit found {audit.get('found')}")
    if (audit.get("missing"), audit.get("duplicates"), audit.get("complete")) != (0, 0, True) or \
            audit.get("found") + audit.get("found_unacked", 0) != visible:
        problems.append(f"the audit (read_committed): {audit}")
    assert not problems, "; ".join(problems)


def failover_published(folder):
    """scripts/experiment failover --quick: both settings measured, reliability lost nothing, the Markdown table, the
    chart and the link from index.html."""
    r = jtl.summary(os.path.join(folder, "failover.json"))
    runs = {x["run"]: x for x in r["runs"]}
    assert set(runs) == {"capacity-acks1", "reliability"}, list(runs)
    for x in runs.values():
        assert x["killed_node"] in (1, 2, 3) and x["kill_s"] < x["restart_s"], x
        assert x["time_to_full_isr_s"] is not None and x["time_to_full_isr_s"] >= 0, x
        assert x["p99_before_ms"] is not None and x["p99_after_ms"] is not None, x
        assert x["audit_complete"] is True and x["acked_but_lost"] is not None and x["duplicates"] is not None, x
    rel = runs["reliability"]
    assert rel["acked_but_lost"] == 0 and rel["failed_but_written"] == 0 and rel["failed_samples"] == 0, rel
    md = open(os.path.join(folder, "failover.md")).read()
    assert md.count("\n| ") == 3 and "time to full ISR" in md, md
    assert os.path.getsize(os.path.join(folder, "failover.png")) > 1000
    page = open(os.path.join(folder, "index.html")).read()
    assert "href='failover.md'" in page and "src='failover.png'" in page


if __name__ == "__main__":
    jtl.run_checks({f.__name__: f for f in (figures, slow_consumer_plan, read_through_failover,
                                            txn_coordinator_killed, failover_published)}, "faults")
