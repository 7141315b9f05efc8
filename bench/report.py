#!/usr/bin/env python3
"""Parses the benchmark's run folders and renders target/bench/results.{json,md} (scripts/bench, issue 6).

  report.py parse-run DIR     DIR/meta.json (written by scripts/bench) + the tool's outputs -> DIR/run.json
  report.py render RUNS OUT   every RUNS/*/*/run.json -> OUT/results.json, OUT/results.md (medians over rounds)
  report.py check OUT         quick-mode smoke check: one line per contender, then "N passed, N failed"

Standard library only (the chart is bench/chart.py, run in a venv with matplotlib).

Figures and where they come from:
  records/s, MB/s    acknowledged records only, first send -> last ack, as each tool reports it:
                     kafka-producer-perf-test's final line; the engine's JSON summary (kafka.summary.file) for our
                     sampler and engine_bench; bench/jsr223/teardown.groovy's summary (same form) for JSR223.
  latency p50/p99/p99.9   send -> ack per record (perf-test prints whole milliseconds; the others microseconds).
  CPU s / 100k records    user+sys of the load-generating process (GNU time -v: the process and the children it
                     waited for), whole process life (JVM start, JIT, teardown included), per 100,000 acked records.
  CPU net of startup     the same minus the CPU of a 1-record run of the same contender (full mode only).
  peak RSS           GNU time's maximum resident set size.
  GC                 -Xlog:gc: sum of all "Pause ..." times, and the number of "Pause Full" events other than
                     "Pause Full (System.gc())" (JMeter itself calls System.gc() once before the load starts).
  JVM heap           -Xlog:gc plus gc+heap+exit, during the load only (after the System.gc() JMeter makes just before
                     it starts the threads, up to exit): the largest heap after a GC (live data, an upper bound; the
                     heap left by that System.gc() when no GC happened during the load), the peak (largest heap
                     before a GC, or in use at exit), the MB allocated (the growth between GCs, plus the growth after
                     the last one up to exit) per 100,000 acknowledged records, and the GCs during the load.
  avg record bytes   the summary's MB/s over its records/s (value bytes; with a registry, its 5-byte header too).

The avro workload (scripts/bench --workloads avro) has its own contenders (AVRO_CONTENDERS): each Avro contender is
compared with the fixed-bytes contender of the same kind (AVRO_BASE).
"""
import json
import math
import os
import re
import statistics
import sys

CONTENDERS = [
    # id, label, JMeter run?
    ("perf-test", "1 kafka-producer-perf-test (Java, async)", False),
    ("jsr223", "2 JMeter + JSR223 Groovy, kafka-clients send().get()", True),
    ("sampler", "3 JMeter + our sampler, 1 msg/sample", True),
    ("sampler-batch", "4 JMeter + our sampler, batch", True),
    ("engine", "5a our engine alone, 1 msg/sample", False),
    ("engine-batch", "5b our engine alone, batch", False),
]
AVRO_CONTENDERS = [
    ("jsr223-fixed", "JMeter + JSR223 + kafka-clients, 1 KB byte[]", True),
    ("jsr223-avro", "JMeter + JSR223 + kafka-clients + Apicurio AvroKafkaSerializer", True),
    ("sampler-fixed", "JMeter + our sampler, 1 msg/sample, 1 KB fixed", True),
    ("sampler-avro", "JMeter + our sampler, 1 msg/sample, Avro (schema file)", True),
    ("sampler-avro-registry", "JMeter + our sampler, 1 msg/sample, Avro (registry)", True),
    ("batch-fixed", "JMeter + our sampler, batch, 1 KB fixed", True),
    ("batch-avro", "JMeter + our sampler, batch, Avro (schema file)", True),
    ("batch-avro-registry", "JMeter + our sampler, batch, Avro (registry)", True),
    ("engine-batch-fixed", "our engine alone, batch, 1 KB fixed", False),
    ("engine-batch-avro", "our engine alone, batch, Avro (schema file)", False),
    # with AVRO_BEFORE_JMETER_HOME / AVRO_BEFORE_ENGINE_BENCH: a previous build in the same run
    ("batch-avro-before", "JMeter + previous build's sampler, batch, Avro (schema file)", True),
    ("engine-batch-avro-before", "previous build's engine alone, batch, Avro (schema file)", False),
]
# each Avro contender against the fixed-bytes contender of the same kind
AVRO_BASE = {
    "jsr223-avro": "jsr223-fixed",
    "sampler-avro": "sampler-fixed",
    "sampler-avro-registry": "sampler-fixed",
    "batch-avro": "batch-fixed",
    "batch-avro-registry": "batch-fixed",
    "engine-batch-avro": "engine-batch-fixed",
    "batch-avro-before": "batch-fixed",
    "engine-batch-avro-before": "engine-batch-fixed",
}
LABEL = {c[0]: c[1] for c in CONTENDERS + AVRO_CONTENDERS}
JVM = {"perf-test", "jsr223", "sampler", "sampler-batch"} | {c[0] for c in AVRO_CONTENDERS if c[2]}


def contenders_of(workload):
    return AVRO_CONTENDERS if workload == "avro" else CONTENDERS

PERF_LINE = re.compile(
    r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, "
    r"(\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th\."
)
GC_PAUSE = re.compile(r"Pause .*?([\d.]+)ms\s*$")
GC_HEAP = re.compile(r"Pause .*? (\d+)([KMG])->(\d+)([KMG])\(\d+[KMG]\)")
HEAP_EXIT = re.compile(r"heap\s+total (\d+)K, used (\d+)K")
UNIT_MB = {"K": 1 / 1024.0, "M": 1.0, "G": 1024.0}
JMETER_SUMMARY = re.compile(r"^summary =\s+(\d+) in .*Err:\s+(\d+)")


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def parse_time(text):
    """GNU time -v output -> dict (missing keys stay absent)."""
    out = {}
    m = re.search(r"User time \(seconds\): ([\d.]+)", text)
    if m:
        out["user_s"] = float(m.group(1))
    m = re.search(r"System time \(seconds\): ([\d.]+)", text)
    if m:
        out["sys_s"] = float(m.group(1))
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if m:
        out["rss_mb"] = int(m.group(1)) / 1024.0
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text)
    if m:
        secs = 0.0
        for part in m.group(1).split(":"):
            secs = secs * 60 + float(part)
        out["wall_s"] = secs
    m = re.search(r"Exit status: (\d+)", text)
    if m:
        out["exit_status"] = int(m.group(1))
    if "user_s" in out and "sys_s" in out:
        out["cpu_s"] = out["user_s"] + out["sys_s"]
    return out


def parse_gc(text):
    if not text:
        return {}
    pauses = [float(m.group(1)) for line in text.splitlines() for m in [GC_PAUSE.search(line)] if m]
    heap = {}
    # (before MB, after MB, explicit System.gc()?) per collection
    events = [(int(m.group(1)) * UNIT_MB[m.group(2)], int(m.group(3)) * UNIT_MB[m.group(4)], "System.gc()" in line)
              for line in text.splitlines() for m in [GC_HEAP.search(line)] if m]
    exits = HEAP_EXIT.findall(text)
    # JMeter calls System.gc() just before it starts the threads: what follows is the load (and the teardown)
    start = max([i for i, e in enumerate(events) if e[2]], default=-1)
    load = events[start + 1:]
    if events or exits:
        live_start = events[start][1] if start >= 0 else 0.0
        allocated, after = 0.0, live_start
        for before, after_gc, _explicit in load:
            allocated += max(0.0, before - after)
            after = after_gc
        peak = max([b for b, _a, _e in load], default=0.0)
        if exits:
            used = int(exits[-1][1]) / 1024.0
            allocated += max(0.0, used - after)
            peak = max(peak, used)
        heap = {
            "heap_live_start_mb": round(live_start, 1) if start >= 0 else None,
            # no collection during the load: the live heap at its start is the best bound there is
            "heap_after_gc_max_mb": round(max([a for _b, a, _e in load], default=live_start), 1),
            "heap_peak_mb": round(peak, 1),
            "heap_allocated_mb": round(allocated, 1),
            "gc_events": len(load),
        }
    return heap | {
        "gc_pause_ms": round(sum(pauses), 1),
        "gc_pauses": len(pauses),
        # JMeter calls System.gc() itself once before the load starts: counted apart, it says nothing about memory
        "full_gcs": sum(1 for line in text.splitlines() if "Pause Full" in line and "System.gc()" not in line),
        "explicit_full_gcs": sum(1 for line in text.splitlines() if "Pause Full (System.gc())" in line),
    }


def parse_summary_json(path):
    try:
        with open(path) as f:
            j = json.load(f)
    except (OSError, ValueError):
        return None
    lat = j.get("latency_us", {})
    return {
        "acked": int(j["acked"]),
        "failed": int(j.get("failed", 0)),
        "records_per_sec": float(j["records_per_sec"]),
        "mb_per_sec": float(j["mb_per_sec"]),
        "p50_ms": lat.get("p50", 0) / 1000.0,
        "p99_ms": lat.get("p99", 0) / 1000.0,
        "p999_ms": lat.get("p999", 0) / 1000.0,
        "latency_resolution": "µs",
    }


def parse_perf_line(text):
    found = PERF_LINE.findall(text)
    if not found:
        return None
    n, rps, mbps, _avg, _mx, p50, _p95, p99, p999 = found[-1]
    return {
        "acked": int(n),
        "failed": 0,
        "records_per_sec": float(rps),
        "mb_per_sec": float(mbps),
        "p50_ms": float(p50),
        "p99_ms": float(p99),
        "p999_ms": float(p999),
        "latency_resolution": "ms",
    }


def parse_run(d):
    meta = json.loads(read(os.path.join(d, "meta.json")))
    run = dict(meta)
    stdout = read(os.path.join(d, "stdout"))
    stderr = read(os.path.join(d, "stderr"))
    jlog = read(os.path.join(d, "jmeter.log"))
    run.update(parse_time(read(os.path.join(d, "time.txt"))))
    run.update(parse_gc(read(os.path.join(d, "gc.log"))))
    contender = meta["contender"]
    if contender == "perf-test":
        figures = parse_perf_line(stdout)
        if figures is not None:
            # ProducerPerformance prints a stack trace per failed send; count them.
            figures["failed"] = len(re.findall(r"^org\.apache\.kafka\.\S*Exception", stderr + stdout, re.M))
    else:
        figures = parse_summary_json(os.path.join(d, "summary.json"))
    problems = []
    if figures is None:
        problems.append("no summary found (the tool did not finish its report)")
    else:
        run.update(figures)
    all_text = stdout + stderr + jlog
    run["oom"] = "OutOfMemoryError" in all_text or any(f.endswith(".hprof") for f in os.listdir(d))
    if run["oom"]:
        problems.append("OutOfMemoryError")
    m = [JMETER_SUMMARY.search(line) for line in (stdout.splitlines())]
    m = [x for x in m if x]
    if m:
        run["jmeter_samples"], run["jmeter_errors"] = int(m[-1].group(1)), int(m[-1].group(2))
    rc = meta.get("rc", run.get("exit_status", 0))
    if rc not in (0, None):
        problems.append(f"exit code {rc}" + (" (timed out)" if rc in (124, 137) else ""))
    if figures is not None:
        if figures["acked"] <= 0:
            problems.append("no record acknowledged")
        if figures["failed"] > 0:
            problems.append(f"{figures['failed']} record(s) failed")
    if "cpu_s" in run and run.get("acked"):
        run["cpu_s_per_100k"] = run["cpu_s"] / run["acked"] * 100000.0
    if run.get("heap_allocated_mb") is not None and run.get("acked"):
        run["alloc_mb_per_100k"] = run["heap_allocated_mb"] / run["acked"] * 100000.0
    if run.get("records_per_sec"):
        run["avg_record_bytes"] = run["mb_per_sec"] * 1048576.0 / run["records_per_sec"]
    run["ok"] = not problems and "cpu_s" in run
    if "cpu_s" not in run:
        problems.append("no CPU figures (time.txt)")
    run["problems"] = problems
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump(run, f, indent=2, sort_keys=True)
    return run


def load_runs(runs_dir):
    runs = []
    for root, _dirs, files in os.walk(runs_dir):
        if "run.json" in files:
            runs.append(json.loads(read(os.path.join(root, "run.json"))))
    return runs


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


METRICS = ["records_per_sec", "mb_per_sec", "p50_ms", "p99_ms", "p999_ms", "cpu_s", "cpu_s_per_100k",
           "rss_mb", "gc_pause_ms", "full_gcs", "wall_s", "acked", "avg_record_bytes", "heap_after_gc_max_mb",
           "heap_peak_mb", "alloc_mb_per_100k", "gc_events", "heap_live_start_mb"]


def aggregate(runs):
    """{workload: {contender: {metric: median, ...}}} over the rounds that succeeded (round 0 = startup runs)."""
    startup = {}
    for r in runs:
        if r.get("round") == 0 and r.get("ok") and "cpu_s" in r:
            startup[r["contender"]] = r["cpu_s"]
    workloads = {}
    order = []
    for r in runs:
        if r.get("round") == 0:
            continue
        w = r["workload"]
        if w not in workloads:
            workloads[w] = {"settings": r.get("settings", {}), "contenders": {}}
            order.append((r.get("workload_index", 0), w))
        workloads[w]["contenders"].setdefault(r["contender"], []).append(r)
    result = {"workloads": [], "startup_cpu_s": startup}
    for _i, w in sorted(order):
        entry = {"workload": w, "settings": workloads[w]["settings"], "contenders": {}}
        for cid, _label, _jvm in contenders_of(w):
            rs = workloads[w]["contenders"].get(cid, [])
            ok = [r for r in rs if r.get("ok")]
            agg = {m: median([r.get(m) for r in ok]) for m in METRICS}
            agg["runs"] = len(rs)
            agg["runs_ok"] = len(ok)
            agg["oom"] = any(r.get("oom") for r in rs)
            agg["full_gcs_max"] = max([r.get("full_gcs", 0) or 0 for r in rs], default=0) if cid in JVM else None
            agg["problems"] = sorted({p for r in rs for p in r.get("problems", [])})
            agg["threads"] = median([r.get("threads") for r in rs])
            agg["messages_per_sample"] = median([r.get("messages_per_sample") for r in rs])
            agg["latency_resolution"] = next((r.get("latency_resolution") for r in ok), None)
            if cid in startup and agg["cpu_s"] is not None and agg["acked"]:
                agg["cpu_s_per_100k_net"] = max(0.0, agg["cpu_s"] - startup[cid]) / agg["acked"] * 100000.0
            else:
                agg["cpu_s_per_100k_net"] = None
            agg["rounds"] = [
                {k: r.get(k) for k in ("round", "ok", "records_per_sec", "cpu_s_per_100k", "rss_mb",
                                       "heap_after_gc_max_mb", "heap_peak_mb", "problems")}
                for r in sorted(rs, key=lambda r: r.get("round", 0))
            ]
            entry["contenders"][cid] = agg
        if w == "avro":
            avro_ratios(entry["contenders"])
            entry["targets"] = avro_targets(entry["contenders"])
            result["workloads"].append(entry)
            continue
        base1 = entry["contenders"]["perf-test"]
        base2 = entry["contenders"]["jsr223"]
        for cid, agg in entry["contenders"].items():
            agg["rps_vs_perf_test"] = ratio(agg["records_per_sec"], base1["records_per_sec"])
            agg["rps_vs_jsr223"] = ratio(agg["records_per_sec"], base2["records_per_sec"])
            agg["cpu_vs_perf_test"] = ratio(agg["cpu_s_per_100k"], base1["cpu_s_per_100k"])
            agg["cpu_vs_jsr223"] = ratio(agg["cpu_s_per_100k"], base2["cpu_s_per_100k"])
        entry["targets"] = targets(w, entry["contenders"])
        result["workloads"].append(entry)
    return result


def target_list():
    """An empty list of targets and the function that adds one: its text and whether it was met (None: unknown)."""
    out = []

    def check(text, value):
        out.append({"target": text, "met": None if value is None else bool(value)})

    return out, check


def targets(workload, c):
    """The issue's targets (benchmark results, not assertions): (text, met or None when unknown)."""
    out, check = target_list()
    s, j, b, p = c["sampler"], c["jsr223"], c["sampler-batch"], c["perf-test"]
    e1, eb = c["engine"], c["engine-batch"]
    r = ratio(s["records_per_sec"], j["records_per_sec"])
    check(f"sampler 1 msg/sample >= 1.3x JSR223 records/s ({fmt(r, 2)}x)", None if r is None else r >= 1.3)
    r = ratio(s["cpu_s_per_100k"], j["cpu_s_per_100k"])
    check(f"sampler 1 msg/sample CPU per record <= 0.5x JSR223 ({fmt(r, 2)}x)", None if r is None else r <= 0.5)
    if workload.startswith("200B") or workload == "200B":
        r = ratio(b["records_per_sec"], p["records_per_sec"])
        check(f"batch mode >= 1.0x perf-test records/s at 200 B ({fmt(r, 2)}x)", None if r is None else r >= 1.0)
    r = ratio(s["records_per_sec"], e1["records_per_sec"])
    check(f"JMeter + sampler 1 msg/sample >= 0.9x engine alone ({fmt(r, 2)}x)", None if r is None else r >= 0.9)
    r = ratio(b["records_per_sec"], eb["records_per_sec"])
    check(f"JMeter + sampler batch >= 0.9x engine alone batch ({fmt(r, 2)}x)", None if r is None else r >= 0.9)
    # What JMeter and the JNI bridge add to each sample: both run the same threads, one message per sample, so the
    # difference of their per-thread sample periods is the time spent outside the engine's send->ack (a mean, over
    # the whole run, contention included; JMeter's own elapsed is the engine's time by design).
    threads = s.get("threads") or e1.get("threads")
    if threads and s["records_per_sec"] and e1["records_per_sec"]:
        us = threads * (1 / s["records_per_sec"] - 1 / e1["records_per_sec"]) * 1e6
        check(f"JMeter + bridge cost per sample < 50 us ({us:,.1f} us: threads x (1/sampler - 1/engine alone) records/s)",
              us < 50)
    if workload.startswith("200KB"):
        jm = [c[k] for k in ("jsr223", "sampler", "sampler-batch")]
        survived = all(x["runs"] and not x["oom"] and x["runs_ok"] == x["runs"] for x in jm)
        nofull = all((x["full_gcs_max"] or 0) == 0 for x in jm)
        check("200 KB: every JMeter run finished without OutOfMemoryError", survived)
        check("200 KB: no full GC in JMeter runs", nofull)
    return out


def avro_ratios(c):
    """Each Avro contender against its fixed-bytes twin, from the medians (rounds interleaved: same load)."""
    for cid, base in AVRO_BASE.items():
        a, b = c[cid], c[base]
        a["rps_vs_fixed"] = ratio(a["records_per_sec"], b["records_per_sec"])
        a["cpu_vs_fixed"] = ratio(a["cpu_s_per_100k"], b["cpu_s_per_100k"])
        a["heap_after_gc_vs_fixed"] = ratio(a["heap_after_gc_max_mb"], b["heap_after_gc_max_mb"])
        a["alloc_vs_fixed"] = ratio(a["alloc_mb_per_100k"], b["alloc_mb_per_100k"])


# "No rise in JMeter heap use": the Avro run's largest heap after GC at most 10% (and 2 MB) above the fixed run's.
HEAP_TOLERANCE = (1.10, 2.0)


def avro_targets(c):
    """Issue 14's goals for the Avro contender (benchmark results, not assertions)."""
    out, check = target_list()
    for cid in ("sampler-avro", "sampler-avro-registry", "batch-avro", "batch-avro-registry"):
        a, b = c[cid], c[AVRO_BASE[cid]]
        if not a["runs"]:
            continue
        r = a.get("rps_vs_fixed")
        check(f"{cid}: records/s >= 0.8x {AVRO_BASE[cid]} ({fmt(r, 2)}x)", None if r is None else r >= 0.8)
        ha, hb = a["heap_after_gc_max_mb"], b["heap_after_gc_max_mb"]
        rise = None if ha is None or hb is None else ha <= hb * HEAP_TOLERANCE[0] + HEAP_TOLERANCE[1]
        check(f"{cid}: no rise in JMeter heap (largest heap after GC {fmt(ha, 1)} MB vs {fmt(hb, 1)} MB)", rise)
    return out


def render_avro(entry):
    """The avro workload's table: each Avro contender next to its fixed-bytes twin."""
    ws = entry["settings"]
    lines = [f"## avro: records of bench/schemas/order.avsc (+ order.rules) vs {ws.get('record_size')} B fixed, "
             f"{ws.get('threads')} threads, JMeter heap {ws.get('jmeter_heap')}", ""]
    lines.append("| contender | records/s | avg record B | × fixed | p50 ms | p99 ms | CPU s /100k rec | CPU × fixed | "
                 "heap at load start MB | heap after GC, max MB | heap peak MB | allocated MB /100k rec | GCs in load | "
                 "GC pause ms | full GCs | peak RSS MB | runs ok |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for cid, label, jvm in AVRO_CONTENDERS:
        a = entry["contenders"][cid]
        if not a["runs"]:
            continue
        lines.append(table_row([
            contender_name(cid, label, a),
            fmt(a["records_per_sec"]),
            fmt(a["avg_record_bytes"]),
            fmt(a.get("rps_vs_fixed"), 2) if cid in AVRO_BASE else "1",
            fmt(a["p50_ms"], 2),
            fmt(a["p99_ms"], 2),
            fmt(a["cpu_s_per_100k"], 2),
            fmt(a.get("cpu_vs_fixed"), 2) if cid in AVRO_BASE else "1",
            fmt(a["heap_live_start_mb"], 1) if jvm else "n/a",
            fmt(a["heap_after_gc_max_mb"], 1) if jvm else "n/a",
            fmt(a["heap_peak_mb"], 1) if jvm else "n/a",
            fmt(a["alloc_mb_per_100k"], 1) if jvm else "n/a",
            fmt(a["gc_events"]) if jvm else "n/a",
            fmt(a["gc_pause_ms"], 0) if jvm else "n/a",
            full_gcs_cell(a),
            fmt(a["rss_mb"]),
            runs_ok_cell(a),
        ]))
    lines.append("")
    lines += target_lines(entry)
    # the same ratio round by round (both contenders ran minutes apart at most): how much the noise moves it
    per_round = []
    for cid, base in AVRO_BASE.items():
        mine = {r["round"]: r["records_per_sec"] for r in entry["contenders"][cid]["rounds"] if r["ok"]}
        theirs = {r["round"]: r["records_per_sec"] for r in entry["contenders"][base]["rounds"] if r["ok"]}
        rs = [fmt(ratio(mine[k], theirs[k]), 2) for k in sorted(mine) if k in theirs]
        if rs:
            per_round.append(f"{cid} {' / '.join(rs)}")
    if per_round:
        lines.append("- × fixed per round: " + "; ".join(per_round))
    lines += problem_lines(entry)
    lines += [
        "",
        "- × fixed: against the fixed-bytes contender of the same kind (JSR223, 1 msg/sample, batch, engine alone), "
        "medians of interleaved rounds. avg record B = MB/s over records/s (with a registry: its 5-byte header too).",
        "- heap (JMeter's GC log, -Xlog:gc and gc+heap+exit), during the load only: from the System.gc() JMeter "
        "makes just before it starts the threads ('heap at load start': what it left) to exit. 'after GC, max' is "
        "the largest heap left after a collection during the load (live data and what survived; the load-start heap "
        "when none happened), 'peak' the largest before a collection or at exit, 'allocated' the heap growth between "
        "collections and up to exit, per 100,000 records. The JSR223 figures include Groovy compiling the script "
        "at the first samples.",
        "",
    ]
    return lines


def contender_name(cid, label, a):
    """The contender's label, with its messages per sample in batch mode."""
    mps = a.get("messages_per_sample")
    return label + (f" ({int(mps)} msg/sample)" if "batch" in cid and mps else "")


def table_row(cells):
    return "| " + " | ".join(cells) + " |"


def full_gcs_cell(a):
    return fmt(a["full_gcs_max"]) if a["full_gcs_max"] is not None else "n/a"


def runs_ok_cell(a):
    return f"{a['runs_ok']}/{a['runs']}" + (" OOM" if a["oom"] else "")


def target_lines(entry):
    """One line per target of a workload, met or not."""
    marks = {True: "met", False: "MISSED", None: "unknown"}
    return [f"- target: {t['target']}: **{marks[t['met']]}**" for t in entry["targets"]]


def problem_lines(entry):
    """One line per contender of a workload that had problems, naming them."""
    return [f"- problems, {LABEL[cid]}: {'; '.join(a['problems'])}" for cid, a in entry["contenders"].items()
            if a["problems"]]


def fmt(v, digits=0):
    if v is None:
        return "–"
    if isinstance(v, float) and math.isnan(v):
        return "–"
    if digits == 0:
        return f"{v:,.0f}"
    return f"{v:,.{digits}f}"


def render_md(result, meta):
    lines = ["# Benchmark: our sampler vs kafka-producer-perf-test vs JMeter + JSR223 (kafka-clients)", ""]
    lines.append(f"Command: `{meta.get('command', 'scripts/bench')}`  ")
    lines.append(f"Date: {meta.get('date', '?')}; host: {meta.get('host', '?')}; load average at start: "
                 f"{meta.get('load_start', '?')}, at end: {meta.get('load_end', '?')}  ")
    lines.append(f"Rounds: {meta.get('rounds')} (interleaved: every contender once per round, medians reported); "
                 f"mode: {meta.get('mode')}")
    lines.append("")
    s = meta.get("settings", {})
    lines.append("Settings for every contender: " + ", ".join(f"{k}={v}" for k, v in s.items()) +
                 "; a fresh topic per run, created with `scripts/kafka topics --create` "
                 f"({s.get('partitions', '?')} partitions, replication 1).")
    lines.append("")
    for entry in result["workloads"]:
        if entry["workload"] == "avro":
            lines += render_avro(entry)
            continue
        ws = entry["settings"]
        lines.append(f"## {entry['workload']}: {ws.get('record_size')} B records, {ws.get('threads')} threads, "
                     f"JMeter heap {ws.get('jmeter_heap')}")
        lines.append("")
        lines.append("| contender | records/s | MB/s | × perf-test | × JSR223 | p50 ms | p99 ms | p99.9 ms | "
                     "CPU s /100k rec | net of startup | CPU × JSR223 | peak RSS MB | GC pause ms | full GCs | runs ok |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for cid, label, jvm in CONTENDERS:
            a = entry["contenders"][cid]
            name = contender_name(cid, label, a) + (" (1 producer)" if cid == "perf-test" else "")
            lat_digits = 0 if a.get("latency_resolution") == "ms" else 2
            lines.append(table_row([
                name,
                fmt(a["records_per_sec"]),
                fmt(a["mb_per_sec"], 2),
                fmt(a["rps_vs_perf_test"], 2),
                fmt(a["rps_vs_jsr223"], 2),
                fmt(a["p50_ms"], lat_digits),
                fmt(a["p99_ms"], lat_digits),
                fmt(a["p999_ms"], lat_digits),
                fmt(a["cpu_s_per_100k"], 2),
                fmt(a["cpu_s_per_100k_net"], 2),
                fmt(a["cpu_vs_jsr223"], 2),
                fmt(a["rss_mb"]),
                fmt(a["gc_pause_ms"], 0) if jvm or cid == "perf-test" else "n/a",
                full_gcs_cell(a),
                runs_ok_cell(a),
            ]))
        lines.append("")
        lines += target_lines(entry) + problem_lines(entry)
        lines.append("")
    lines += [
        "Notes:",
        "- records/s and MB/s count acknowledged records only, from the first send to the last ack "
        "(kafka-producer-perf-test: its own final line). Medians over the rounds that succeeded.",
        "- perf-test latencies are whole milliseconds (its own output); the others are µs histograms shown in ms.",
        "- CPU is user+sys of the whole load-generator process (JVM start-up, JIT, Groovy compilation, teardown "
        "included) per 100,000 acknowledged records; 'net of startup' subtracts a 1-record run of the same contender.",
        "- kafka-producer-perf-test is one asynchronous producer (it has no thread option); the thread count applies "
        "to the JMeter contenders and the engine alone. Batch mode: one sample = N messages sent together, then all acks awaited.",
        "- full GCs: 'Pause Full' events in the GC log other than the one System.gc() JMeter itself makes before "
        "the load starts (that one is in the GC pause total).",
        "- The broker runs on the same 2 cores as the load generator: every figure is bounded by the broker's share "
        "of the CPU as much as by the client.",
    ]
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    cmd = argv[1]
    if cmd == "parse-run":
        run = parse_run(argv[2])
        state = "ok" if run["ok"] else "FAILED: " + "; ".join(run["problems"])
        rps = run.get("records_per_sec")
        print(f"  {run['contender']:<14} {fmt(rps):>10} rec/s  cpu {fmt(run.get('cpu_s'), 1)} s  "
              f"rss {fmt(run.get('rss_mb'))} MB  {state}")
        return 0
    if cmd == "render":
        runs_dir, out = argv[2], argv[3]
        meta = json.loads(read(os.path.join(out, "bench-meta.json")) or "{}")
        result = aggregate(load_runs(runs_dir))
        result["meta"] = meta
        with open(os.path.join(out, "results.json"), "w") as f:
            json.dump(result, f, indent=2, sort_keys=True)
        md = render_md(result, meta)
        with open(os.path.join(out, "results.md"), "w") as f:
            f.write(md)
        print(md)
        return 0
    if cmd == "check":
        out = argv[2]
        result = json.loads(read(os.path.join(out, "results.json")) or "{}")
        passed = failed = 0
        # every contender of a workload that ran (the avro workload's registry contenders only when they ran:
        # scripts/bench --no-registry skips them; its plain Avro and fixed ones always run)
        expected = [(cid, label, [e for e in result.get("workloads", []) if e["workload"] != "avro"])
                    for cid, label, _jvm in CONTENDERS]
        avro = [e for e in result.get("workloads", []) if e["workload"] == "avro"]
        if avro:
            ran = {cid for e in avro for cid, a in e["contenders"].items() if a["runs"]}
            expected += [(cid, label, avro) for cid, label, _jvm in AVRO_CONTENDERS
                         if cid in ran or cid in ("sampler-fixed", "sampler-avro", "batch-fixed", "batch-avro")]
        for cid, label, entries in expected:
            if not entries:
                continue
            bad = []
            seen = False
            for entry in entries:
                a = entry["contenders"].get(cid)
                if not a or a["runs"] == 0:
                    bad.append(f"{entry['workload']}: did not run")
                    continue
                seen = True
                if a["runs_ok"] < a["runs"] or a["records_per_sec"] is None:
                    bad.append(f"{entry['workload']}: " + "; ".join(a["problems"] or ["no figures"]))
                elif entry["workload"] == "avro" and cid in JVM and a["heap_peak_mb"] is None:
                    bad.append("avro: no heap figures in the GC log")
                elif entry["workload"] == "avro" and not a["avg_record_bytes"]:
                    bad.append("avro: no record size")
            if not seen:
                bad.append("no run")
            chart = os.path.join(out, "chart.png")
            if not (os.path.exists(chart) and os.path.getsize(chart) > 0):
                bad.append("chart.png missing")
            if bad:
                failed += 1
                print(f"FAIL {label}: {' | '.join(bad)}")
            else:
                passed += 1
                print(f"ok   {label}")
        print(f"{passed} passed, {failed} failed")
        return 0 if failed == 0 else 1
    print(f"unknown command {cmd}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
