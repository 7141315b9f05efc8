#!/usr/bin/env python3
"""The ecosystem suite's readings of what Taurus and InfluxDB hold after a run (the JTL's own counts come from
tests/lib/jtl.py).

Usage: checks.py CHECK ARG...   (run.sh calls each; CHECK is a function below, with dashes)
"""
import json
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402


def taurus_stats(stats_csv):
    """Prints "SAMPLES FAILURES" from Taurus's final stats (the overall row, empty label, of its CSV dump)."""
    row = [r for r in jtl.rows(stats_csv) if r["label"] == ""][0]
    print(int(row["succ"]) + int(row["fail"]), row["fail"])


def influx_counts(app):
    """Prints "SAMPLES MESSAGES ERRORS CODE=N ..." summed in InfluxDB (scripts/influxdb query) for the label
    kafka-produce of one run (its application tag). "samples" is JMeter's hit (one per message of a batch sample,
    as SampleCount); count(all) = ok + ko messages."""
    def series(query):
        out = subprocess.run(["scripts/influxdb", "query", query], check=True, capture_output=True, text=True).stdout
        return json.loads(out)["results"][0].get("series", [])
    where = f"FROM jmeter WHERE application='{app}' AND transaction='kafka-produce'"
    tot = {tuple(sorted(x["tags"].items())): x["values"][0][1:]
           for x in series(f"SELECT sum(\"count\"), sum(\"hit\") {where} GROUP BY statut")}
    all_ = tot.get((("statut", "all"),), [0, 0])
    ko = tot.get((("statut", "ko"),), [0, 0])
    errs = series(f"SELECT sum(\"count\") {where} AND responseCode=~/.+/ GROUP BY responseCode")
    codes = " ".join(f"{x['tags']['responseCode']}={x['values'][0][1]}" for x in errs)
    print(int(all_[1] or 0), int(all_[0] or 0), int(ko[0] or 0), codes)


if __name__ == "__main__":
    jtl.run_checks({f.__name__: f for f in (taurus_stats, influx_counts)}, "ecosystem")
