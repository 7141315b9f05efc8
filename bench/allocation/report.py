#!/usr/bin/env python3
"""Java-side allocation per sample, from `jfr print --json --events jdk.ObjectAllocationSample` of a JMeter run.

JFR's allocation samples carry a weight: the bytes the thread allocated since its previous sample, so their sum over
the load's window is the thread's allocation. Only the JMeter sampler threads ("<thread group> 1-N") during the load
(first to last sample of the JTL) count; each sample's bytes go to its allocation site: the first frame of our code
(io.kafkanative.*) if there is one, else the first of JMeter's (org.apache.jmeter.*), else the top frame.
Usage: report.py allocations.json run.jtl
"""
import csv
import json
import sys
from collections import Counter
from datetime import datetime


def epoch_ms(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000


def site(frames):
    # JFR writes class names with '/' (org/apache/...) except for hidden classes (lambdas).
    names = [f"{f['method']['type']['name']}.{f['method']['name']}".replace("/", ".") for f in frames]
    for prefix, who in (("io.kafkanative.", "ours"), ("org.apache.jmeter.", "JMeter")):
        hit = next((n for n in names if n.startswith(prefix)), None)
        if hit:
            return who, hit
    return "other", names[0] if names else "?"


def main(events_path, jtl_path):
    with open(jtl_path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"no samples in {jtl_path}")
    stamps = [int(r["timeStamp"]) for r in rows]
    start, end = min(stamps), max(stamps)
    samples = sum(int(r.get("SampleCount") or 1) for r in rows)
    events = json.load(open(events_path))["recording"]["events"]
    by_site, by_who, by_class = Counter(), Counter(), Counter()
    counted = 0
    for e in events:
        v = e["values"]
        thread = (v.get("eventThread") or {}).get("javaName") or ""
        if " 1-" not in thread or not start <= epoch_ms(v["startTime"]) <= end:
            continue
        weight = v["weight"]
        who, where = site((v.get("stackTrace") or {}).get("frames") or [])
        cls = v["objectClass"]["name"].replace("/", ".")
        by_site[(who, where, cls)] += weight
        by_who[who] += weight
        by_class[cls] += weight
        counted += 1
    total = sum(by_who.values())
    print(f"# Java allocation per sample on JMeter's sampler threads ({samples:,} samples, {counted:,} JFR allocation "
          f"samples in the load window of {(end - start) / 1000:.1f} s)\n")
    print(f"**{total / samples:,.0f} bytes per sample** in all: ours (io.kafkanative.*) {by_who['ours'] / samples:,.0f}, "
          f"JMeter {by_who['JMeter'] / samples:,.0f}, other {by_who['other'] / samples:,.0f}\n")
    print("| who | first frame of that code | allocated class | bytes/sample |")
    print("|---|---|---|---:|")
    for (who, where, cls), w in by_site.most_common(20):
        print(f"| {who} | `{where}` | `{cls}` | {w / samples:,.1f} |")
    print("\n| allocated class (all sites) | bytes/sample |")
    print("|---|---:|")
    for cls, w in by_class.most_common(10):
        print(f"| `{cls}` | {w / samples:,.1f} |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
