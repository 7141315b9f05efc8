#!/usr/bin/env python3
"""The verdict suite's checks on what a run leaves (the JUnit XML, the JSON summaries, the experiments' pages) and the
two inputs it prepares (a doctored baseline, a plan with the Verdict fields filled in).

Usage: checks.py CHECK ARG...   (run.sh calls each; CHECK is a function below, with dashes)
Prints what it saw; exits 1 with the reason at the first mismatch.
"""
import json
import os
import pathlib
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402


def junit_agrees(junit, summary):
    """The failing run's JUnit XML: one case per criterion, the failures typed, and the summary's verdict the same."""
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["error.rate<1%", "p99<1us", "records.per.sec>=100000000"], cases
    assert (suite.get("tests"), suite.get("failures")) == ("3", "2"), suite.attrib
    assert cases[0].find("failure") is None and cases[1].find("failure").get("type") == "threshold"
    v = jtl.summary(summary)["verdict"]
    assert (v["passed"], v["exit_code"], [c["passed"] for c in v["criteria"]]) == (False, 3, [True, False, False]), v
    print("junit and summary agree:", suite.attrib)


def junit_failure_types(junit, *types):
    """The JUnit XML's failures have exactly these types, in order."""
    found = [f.get("type") for f in ET.parse(junit).getroot().iter("failure")]
    assert found == list(types), found


def junit_counts(junit, tests, failures):
    """The JUnit XML's test suite counts TESTS cases and FAILURES failures."""
    s = ET.parse(junit).getroot().find("testsuite")
    found = (s.get("tests"), s.get("failures"))
    print("junit", found)
    assert found == (tests, failures), found


def doctor_baseline(summary, doctored):
    """Writes a copy of a summary claiming 1000 times its throughput: whatever the noise, a rerun is 99 % slower."""
    s = jtl.summary(summary)
    s["records_per_sec"] *= 1000
    with open(doctored, "w") as f:
        json.dump(s, f)


def breakdown_consistent(summary):
    """The time breakdown's fields are there, and local queue + round trip <= send->ack within 25 % (the parts are
    sampled per statistics interval, the total is exact)."""
    b = jtl.summary(summary)["breakdown"]
    assert b["reconciled"] is True and b["other_ms"] >= 0, b
    for k in ("queue_ms", "outbuf_ms", "rtt_ms", "rtt_p99_ms", "requests_per_sec", "batch_records", "batch_fill_pct",
              "in_flight_mean", "in_flight_max", "retries", "hints"):
        assert k in b and b[k] is not None, (k, b)
    total = b["send_ack_mean_ms"]
    assert 0 < b["queue_ms"] + b["rtt_ms"] <= total * 1.25, b
    assert 1 <= b["batch_records"] <= 1.5 and b["requests_per_sec"] > 0, b
    print(f"queue {b['queue_ms']:.2f} + rtt {b['rtt_ms']:.2f} <= send->ack {total:.2f} ms (+25 %)")


def generator_flagged(hot_summary, cool_summary):
    """The generator block: the run with lowered limits is flagged as the bottleneck, the control is not; both measured."""
    hot, cool = (jtl.summary(p)["generator"] for p in (hot_summary, cool_summary))
    assert hot["bottleneck"] is True and cool["bottleneck"] is False, (hot, cool)
    for g in (hot, cool):
        assert g["samples"] >= 1 and g["process_cpu_pct"]["mean"] is not None and g["rss_mb"]["max"] > 0, g
        assert g["native_malloc_mb"]["max"] > 0 and g["gc"]["pause_pct"] is not None, g
    print("generator:", {k: hot[k] for k in ("samples", "process_cpu_pct", "machine_cpu_pct", "native_malloc_mb")})


def lag_growing(*summaries):
    """Each summary's verdict failed and its lag block counted growing readings."""
    for path in summaries:
        s = jtl.summary(path)
        assert s["verdict"]["passed"] is False and s["lag"]["growing_readings"] >= 1, (path, s["lag"])
    print("lag block:", s["lag"])


def plan_with_verdict(plan, copy, criteria, junit):
    """Writes a copy of PLAN with the Kafka Connection's Verdict criteria and Verdict JUnit fields filled in, as a
    tester would in the GUI."""
    tree = ET.parse(plan)
    connection = tree.getroot().find(".//io.kafkanative.jmeter.KafkaConnection")
    for name, value in (("verdictCriteria", criteria), ("verdictJunit", junit)):
        prop = connection.find(f"stringProp[@name='{name}']")
        if prop is None:
            prop = ET.SubElement(connection, "stringProp", name=name)
        prop.text = value
    tree.write(copy, encoding="UTF-8", xml_declaration=True)


def test_identity(summary):
    """The summary names its test (plan, samplers and their settings) and no password setting."""
    s = jtl.summary(summary)
    assert s["_format"] == "kafka-native summary 1", s.get("_format")
    t = s["test"]
    assert t["plan"] == "producer-baseline.jmx" and t["samplers"]["producer 'kafka-produce'"]["thread.count"] == "2", t
    assert not any("password" in k for p in t["samplers"].values() for k in p), t
    print("identity:", t)


def experiments_published(folder):
    """scripts/experiment --quick: every experiment has its JSON (a median per point, a direction), a Markdown table
    with one row per point, a chart, and a link from index.html."""
    names = ["partitions", "replication", "record-size", "consumer-threads", "acks", "baseline-sweep"]
    page = open(os.path.join(folder, "index.html")).read()
    for n in names:
        r = jtl.summary(os.path.join(folder, n + ".json"))
        assert len(r["medians"]) == len(r["points"]) and all(m and m["records_per_sec"] for m in r["medians"]), \
            (n, r["medians"])
        assert r["direction"] and r["seed"], n
        md = open(os.path.join(folder, n + ".md")).read()
        assert md.count("\n| ") == len(r["points"]) + 1 and "bounded by" in md, md
        assert os.path.getsize(os.path.join(folder, n + ".png")) > 1000, n
        assert f"href='{n}.md'" in page and f"src='{n}.png'" in page, n
        print(f"{n}: {r['direction']}")


if __name__ == "__main__":
    jtl.run_checks({f.__name__: f for f in (junit_agrees, junit_failure_types, junit_counts, doctor_baseline,
                                            breakdown_consistent, generator_flagged, lag_growing, plan_with_verdict,
                                            test_identity, experiments_published)}, "verdict")
