#!/usr/bin/env python3
"""The capacity suite's checks on what scripts/experiment capacity and step-load leave in their folders (the JSON,
the Markdown table, the chart, index.html).

Usage: checks.py CHECK ARG...   (run.sh calls each; CHECK is a function below, with dashes)
Prints what it saw; exits 1 with the reason at the first mismatch.
"""
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402


def page_links(folder, *names):
    """index.html links each experiment's table and shows its chart."""
    page = open(os.path.join(folder, "index.html")).read()
    for n in names:
        assert f"href='{n}.md'" in page and f"src='{n}.png'" in page, n


def quota_knee(folder, quota_rate):
    """Against a producer quota: the knee within 15 % of the quota's rate, bounded by the quota, its p99 within the
    SLO with the service time beside it; a table row per step, passing and failing steps, the chart and the link."""
    quota_rate = float(quota_rate)
    r = jtl.summary(os.path.join(folder, "capacity.json"))
    knee = r["knee"]["rate"]
    print(f"knee {knee:,.0f} records/s against the quota's {quota_rate:,.0f} ({knee / quota_rate - 1:+.1%}); "
          f"bounded by {r['bounded_by']}")
    assert abs(knee / quota_rate - 1) <= 0.15, "the knee is not within 15 % of the quota's rate"
    assert "quota" in r["bounded_by"], r["bounded_by"]
    assert r["knee"]["p99_ms"] <= 200 and r["knee"]["service_p99_ms"] is not None, r["knee"]
    md = open(os.path.join(folder, "capacity.md")).read()
    assert md.count("\n| ") == len(r["steps"]) + 1 and "p99 ms (intended)" in md, md
    assert any(not s["passed"] for s in r["steps"]) and any(s["passed"] for s in r["steps"]), r["steps"]
    assert os.path.getsize(os.path.join(folder, "capacity.png")) > 1000
    page_links(folder, "capacity")


def lag_bounded(folder):
    """--lag-not-growing 1 with a slowed consumer: 40 records/s passes, 160 fails on the lag alone (it grew over the
    step), so the knee is 40, bounded by consumer lag growing; the table has the lag column and says why."""
    r = jtl.summary(os.path.join(folder, "capacity.json"))
    assert r["slo"]["lag_not_growing_consumers"] == 1, r["slo"]
    steps = [(s["rate"], s["passed"], s["reasons"]) for s in r["steps"]]
    assert steps[0][:2] == (40, True), steps
    assert steps[1][:2] == (160, False) and [x.split(" (")[0] for x in steps[1][2]] == ["consumer lag growing"], steps
    assert r["steps"][1]["lag_end"] > r["steps"][1]["lag_start"], r["steps"][1]
    assert r["knee"]["rate"] == 40 and r["bounded_by"].startswith("consumer lag growing"), (r["knee"], r["bounded_by"])
    md = open(os.path.join(folder, "capacity.md")).read()
    assert "| consumer lag | verdict |" in md and "FAIL: consumer lag growing (" in md, md
    assert "bounded by consumer lag growing: 1 consumer thread(s) read less than the producers wrote" in md, md


def step_load_published(folder):
    """step-load --quick: 2, 4, 6 threads, each seen sampling in its step, with records/s, p99, no error and the
    generator's CPU; the last step judged PASS; the table, the chart, and both experiments linked from index.html."""
    r = jtl.summary(os.path.join(folder, "step-load.json"))
    steps = r["steps"]
    assert [s["threads"] for s in steps] == [2, 4, 6], steps
    assert [s["threads_sampling"] for s in steps] == [2, 4, 6], [s["threads_sampling"] for s in steps]
    for s in steps:
        assert s["records_per_sec"] > 0 and s["p99_ms"] is not None and s["errors"] == 0, s
        assert s["jmeter_cpu_pct"] and s["jmeter_cpu_pct"] > 0, s
    assert r["verdict"] is True and "last step PASS" in r["headline"], r["headline"]
    md = open(os.path.join(folder, "step-load.md")).read()
    assert md.count("\n| ") == len(steps) + 1 and "JMeter CPU %" in md, md
    assert os.path.getsize(os.path.join(folder, "step-load.png")) > 1000
    page_links(folder, "capacity", "step-load")


if __name__ == "__main__":
    jtl.run_checks({f.__name__: f for f in (quota_knee, lag_bounded, step_load_published)}, "capacity")
