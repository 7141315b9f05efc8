#!/usr/bin/env python3
"""The e2e suite's checks beyond tests/e2e/jtl_check.py: the audit against the summary, exact failure counts in CSV and
XML results, the records read back from the topic, and a wrong password's failed sample.

Usage: checks.py CHECK ARG...   (run.sh calls each; CHECK is a function below, with dashes)
Prints what it saw; exits 1 with the reason at the first mismatch.
"""
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402


def audit_complete(summary):
    """The batch run: the audit found every one of the 100,000 records once, and the per-partition counts add up."""
    s = jtl.summary(summary)
    a = s["audit"]
    assert (a["found"], a["duplicates"], a["missing"], a["unexpected"]) == (100000, 0, 0, 0), a
    assert s["acked"] == 100000 and sum(s["per_partition"].values()) == 100000, s
    print("summary and audit agree:", a)


def oversized_counted(results, summary):
    """10 samples of an oversized message: each a failed row with MSG_SIZE_TOO_LARGE, and the summary says the same."""
    rows = jtl.rows(results)
    assert len(rows) == 10, f"{len(rows)} rows"
    assert all(r["success"] == "false" and r["responseCode"] == "MSG_SIZE_TOO_LARGE" for r in rows), rows[0]
    s = jtl.summary(summary)
    assert (s["sent"], s["acked"], s["failed"], s["errors"]) == (10, 0, 10, {"MSG_SIZE_TOO_LARGE": 10}), s
    print("oversized ok:", rows[0]["responseMessage"])


def xml_results_counted(results):
    """The same in JMeter's XML format: 10 <sample> rows, each 3 messages (sc) and 3 failed (ec)."""
    rows = list(ET.parse(results).getroot())
    assert len(rows) == 10, f"{len(rows)} rows: {[r.tag for r in rows][:3]}"
    assert all(r.tag == "sample" for r in rows), rows[0].tag
    bad = [r.attrib for r in rows
           if (r.get("s"), r.get("rc"), r.get("sc"), r.get("ec")) != ("false", "MSG_SIZE_TOO_LARGE", "3", "3")]
    assert not bad, bad[0]
    print("xml ok: 10 <sample> rows, each 3 messages (sc) and 3 failed (ec):", rows[0].get("rm"))


def fields_per_sample(console_output):
    """Kafka's ConsoleConsumer read 100 records whose value, key and headers JMeter evaluated for each sample (a field
    evaluated once per thread would give 2 distinct texts; per sample, the counters give 100), each record's three
    from the same thread."""
    # ConsoleConsumer's lines: headers (name:value,name:value), key and value, tab-separated
    records = [line.split("\t") for line in open(console_output).read().splitlines()]
    assert len(records) == 100 and all(len(r) == 3 for r in records), f"{len(records)} records read back: {records[:2]}"
    headers, keys, values = zip(*records)
    bad = [v for v in values if not re.fullmatch(r"v-[12]-[0-9]+", v)]
    assert not bad, f"values not built by JMeter: {bad[:3]}"
    assert len(set(values)) == 100, f"{len(set(values))} distinct values of 100"
    assert {v.split("-")[1] for v in values} == {"1", "2"}, "both threads' values"
    assert all(re.fullmatch(r"k-([12])-[0-9]+", k) for k in keys) and len(set(keys)) == 100, \
        f"keys: {sorted(set(keys))[:5]}"
    assert all(re.fullmatch(r"user:u[12],n:[0-9]+", h) for h in headers) and len(set(headers)) == 100, \
        f"headers: {headers[:3]}"
    for h, k, v in records:
        assert h.split(",")[0] == "user:u" + k.split("-")[1] and k.split("-")[1] == v.split("-")[1], (h, k, v)
    print("100 records, value, key and headers each evaluated for its own sample:", records[0])


def wrong_password_stops(results):
    """A wrong SASL password: one or two failed samples (the test stops at once) that say authentication failed."""
    rows = jtl.rows(results)
    assert 1 <= len(rows) <= 2, f"{len(rows)} rows: a wrong password must stop the test at once"
    assert all(r["success"] == "false" for r in rows), rows
    assert "uthentication" in rows[0]["responseMessage"], rows[0]["responseMessage"]
    print("wrong password:", rows[0]["responseCode"], rows[0]["responseMessage"])


if __name__ == "__main__":
    jtl.run_checks({f.__name__: f for f in (audit_complete, oversized_counted, xml_results_counted, fields_per_sample,
                                            wrong_password_stops)}, "e2e")
