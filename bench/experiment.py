#!/usr/bin/env python3
"""The classic Kafka experiments through JMeter and our sampler (issue 12), run by scripts/experiment.

Each experiment changes one knob of a JMeter plan (jmeter-plans/, set with -J properties) over a few points; the
points of all selected experiments run interleaved, round after round, so that a slow minute of the machine hits
every point alike. Per experiment: a Markdown table, a JSON file, a PNG chart, one sentence with the direction measured
next to the seed's conclusion, and which resource bounded each point (the load generator's health and the engine's
time breakdown from the summary JSON). One index.html links them all.

Standard library only, except the charts (matplotlib, imported only when drawing; scripts/experiment runs this with
the venv that scripts/bench also uses).
"""
import argparse
import html
import json
import os
import random
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRODUCER_PLAN = "jmeter-plans/producer-baseline.jmx"
CONSUMER_PLAN = "jmeter-plans/consumer-throughput.jmx"
CLUSTER_BOOTSTRAP = "127.0.0.1:19092,127.0.0.1:20092,127.0.0.1:21092"

# Batch samples (several messages per sample, a little linger) so that the client can batch and the knob under test,
# not one synchronous round trip per message, decides the throughput.
BATCH = {"threads": 4, "messages.per.sample": 100, "linger.ms": 5, "acks": "1", "record.size": 1024,
         "topic.partitions": 16, "topic.replication": 1}
# Seed 001's baseline: 10 threads, 1 KB records, acks=1, 16 partitions, one synchronous message per sample.
SEED_001 = {"threads": 10, "messages.per.sample": 1, "linger.ms": 0, "acks": "1", "record.size": 1024,
            "topic.partitions": 16, "topic.replication": 1, "compression.type": "none"}

# The load a pushed point climbs (threads, records per sample, linger): each rung more in flight than the last; the
# point keeps its best rung and stops climbing once a rung adds less than PUSH_GAIN.
LADDER = [{"threads": 4, "messages.per.sample": 100, "linger.ms": 5},
          {"threads": 8, "messages.per.sample": 500, "linger.ms": 10},
          {"threads": 16, "messages.per.sample": 1000, "linger.ms": 20}]
PUSH_GAIN = 1.10

EXPERIMENTS = {
    "partitions": {
        "knob": "topic.partitions", "points": [1, 2, 16], "base": BATCH, "push": True, "perf_test": True,
        "seed": "seed 000: throughput grows with the number of partitions (1 → 2 partitions is faster)",
    },
    "replication": {
        "knob": "topic.replication", "points": [1, 2, 3], "base": BATCH, "nodes": 3,
        "seed": "seed 000: replication costs throughput (replication 1 → 2 is slower), on a 3-node cluster",
    },
    "record-size": {
        "knob": "record.size", "points": [200, 2048, 204800], "base": BATCH, "scale_by_bytes": True,
        "seed": "seed 000: larger records give fewer records/s but more MB/s (200 B vs 2 KB)",
    },
    "consumer-threads": {
        "knob": "threads", "points": [1, 3, 6], "consumer": True, "partitions": 6,
        "seed": "seed 000: more consumer threads (up to the partition count) consume faster (1 / 3 / 6)",
    },
    "acks": {
        "knob": "acks", "points": ["0", "1", "all"], "base": BATCH,
        "seed": "seed 001: acks=0 is fastest, acks=all slowest; acks=all costs latency per message",
    },
    "baseline-sweep": {
        "knob": "change", "base": SEED_001,
        "points": ["baseline", "threads=20", "acks=all", "linger.ms=5", "compression.type=lz4",
                   "topic.partitions=4", "record.size=200"],
        "seed": "seed 001: from the baseline (10 threads, 1 KB, acks=1, 16 partitions), change one knob at a time",
    },
}


def log(msg):
    print(f"[experiment {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend, or None (logged) when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is missing: no chart (scripts/experiment installs it into target/bench/venv)")
        return None
    return plt


def write_outputs(out_dir, name, result, md):
    """An experiment's NAME.json (the result) and NAME.md (the Markdown lines `md`) in out_dir."""
    with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(out_dir, f"{name}.md"), "w") as f:
        f.write("\n".join(md) + "\n")


def sh(args, **kw):
    return subprocess.run(args, cwd=ROOT, **kw)


def point_props(exp, point, records):
    """The -J properties of one point and the number of records it sends."""
    if exp.get("consumer"):
        return {"threads": point}, records
    props = dict(exp["base"])
    if exp["knob"] == "change":
        if point != "baseline":
            k, v = point.split("=", 1)
            props[k] = v
    else:
        props[exp["knob"]] = point
    size = int(props["record.size"])
    n = records
    if exp.get("scale_by_bytes") and size > 1024:
        n = max(records * 1024 // size, 1)  # the same bytes as 1 KB records would write: 200 KB records are many MB
        # and a sample of 100 such records would be 20 MB: at most 4 MiB per sample (200 KB records: 20 per sample)
        props["messages.per.sample"] = max(1, min(int(props["messages.per.sample"]), 4 * 1024 * 1024 // size))
    per_loop = int(props["threads"]) * int(props["messages.per.sample"])
    props["loops"] = max(n // per_loop, 1)
    return props, props["loops"] * per_loop


def run_jmeter(plan, props, out_dir, name):
    """One JMeter run; returns (summary dict or None, exit code, seconds)."""
    # Each report has its own file (the sampler refuses one path for both); the point is read from its plan's.
    producer_summary = os.path.join(out_dir, f"{name}-summary.json")
    consumer_summary = os.path.join(out_dir, f"{name}-consumer-summary.json")
    summary = consumer_summary if plan == CONSUMER_PLAN else producer_summary
    cmd = ["scripts/jmeter", "-n", "-t", plan, "-l", os.path.join(out_dir, f"{name}.jtl"),
           "-j", os.path.join(out_dir, f"{name}.log")]
    cmd += [f"-J{k}={v}" for k, v in props.items()]
    cmd += [f"-Jkafka.summary.file={producer_summary}", f"-Jkafka.consumer.summary.file={consumer_summary}"]
    start = time.time()
    with open(os.path.join(out_dir, f"{name}.out"), "w") as out:
        rc = sh(cmd, stdout=out, stderr=subprocess.STDOUT).returncode
    took = time.time() - start
    try:
        with open(summary) as f:
            return json.load(f), rc, took
    except (OSError, ValueError):
        return None, rc, took


def push_point(exp, p, records, bootstrap, runs_dir, run_name, rungs):
    """Runs the point up `rungs` (LADDER, or its first rungs) until records/s stops growing; returns the best
    rung's (props, summary, rc, took, records) and the rungs tried."""
    best, tried = None, []
    for i, rung in enumerate(rungs):
        base = dict(exp["base"], **rung)
        # Ten times the records of an unpushed point: at the top rung a point runs at 100,000 records/s and more, and
        # a run of a second would be all start-up.
        n = max(10 * records, 5 * rung["threads"] * rung["messages.per.sample"])
        props, n = point_props(dict(exp, base=base), p, n)
        props.update({"kafka.topic": f"{run_name}-l{i}", "kafka.bootstrap": bootstrap})
        summary, rc, took = run_jmeter(PRODUCER_PLAN, props, runs_dir, f"{run_name}-l{i}")
        rps = (summary or {}).get("records_per_sec")
        tried.append({"threads": rung["threads"], "messages.per.sample": rung["messages.per.sample"],
                      "linger.ms": rung["linger.ms"], "records_per_sec": rps})
        log(f"  rung {i + 1} ({rung['threads']} threads × {rung['messages.per.sample']} per sample, linger "
            f"{rung['linger.ms']} ms): {fmt(rps)} records/s")
        if rps is None:
            break
        grew = best is None or rps >= PUSH_GAIN * (best[1].get("records_per_sec") or 0)
        if best is None or rps > (best[1].get("records_per_sec") or 0):
            best = (props, summary, rc, took, n)
        if not grew:
            break
    if best is None:
        return (props, None, rc, took, n), tried
    # Still growing at the top rung: the load, not a resource, may have bounded the point.
    tops = [t["records_per_sec"] for t in tried]
    if len(tops) == len(rungs) and tops[-1] and tops[-2] and tops[-1] >= PUSH_GAIN * tops[-2]:
        tried[-1]["still_rising"] = True
    return best, tried


def perf_test(topic, partitions, records, size, bootstrap, out_dir, name):
    """kafka-producer-perf-test on a fresh topic of `partitions` (acks=1, linger 5 ms): its records/s, or None."""
    kafka("topics", "--bootstrap-server", bootstrap.split(",")[0], "--create", "--topic", topic, "--partitions",
          str(partitions), "--replication-factor", "1")
    with open(os.path.join(out_dir, f"{name}.out"), "w") as out:
        sh(["scripts/kafka", "perf-producer", "--bootstrap-server", bootstrap, "--topic", topic, "--num-records",
            str(records), "--record-size", str(size), "--throughput", "-1", "--producer-props", "acks=1",
            "linger.ms=5"], stdout=out, stderr=subprocess.STDOUT)
    with open(os.path.join(out_dir, f"{name}.out")) as f:
        lines = [ln for ln in f if " records sent, " in ln and "th." in ln]
    if not lines:
        return None
    return float(lines[-1].split(" records sent, ")[1].split(" ")[0])


def fill_topic(topic, partitions, records, bootstrap, out_dir, name):
    props = dict(BATCH, **{"kafka.topic": topic, "kafka.bootstrap": bootstrap, "topic.partitions": partitions})
    props["loops"] = max(records // (props["threads"] * props["messages.per.sample"]), 1)
    s, rc, _ = run_jmeter(PRODUCER_PLAN, props, out_dir, name)
    return s is not None and rc == 0


def figures(summary, consumer):
    """The figures of one point from its summary JSON."""
    if summary is None:
        return None
    g = summary.get("generator") or {}
    f = {
        "machine_cpu": (g.get("machine_cpu_pct") or {}).get("mean"),
        "process_cpu": (g.get("process_cpu_pct") or {}).get("mean"),
        "gc_pct": (g.get("gc") or {}).get("pause_pct"),
        "generator_warning": g.get("warning"),
    }
    if consumer:
        perf = summary.get("perf") or {}
        f.update(records_per_sec=perf.get("nMsg.sec"), mb_per_sec=perf.get("MB.sec"), records=summary.get("records"),
                 p50_ms=ms((summary.get("e2e_latency_us") or {}).get("p50")),
                 p99_ms=ms((summary.get("e2e_latency_us") or {}).get("p99")))
    else:
        lat = summary.get("latency_us") or {}
        f.update(records_per_sec=summary.get("records_per_sec"), mb_per_sec=summary.get("mb_per_sec"),
                 records=summary.get("acked"), failed=summary.get("failed"), p50_ms=ms(lat.get("p50")),
                 p99_ms=ms(lat.get("p99")), mean_ms=ms(lat.get("mean")))
        b = summary.get("breakdown") or {}
        f.update(queue_ms=b.get("queue_ms"), rtt_ms=b.get("rtt_ms"), throttle_ms=b.get("throttle_ms"),
                 batch_records=b.get("batch_records"))
    return f


def ms(us):
    return None if us is None else us / 1000.0


def bound(f, props):
    """Which resource bounded a point, with the evidence."""
    if f is None:
        return "failed (no summary)"
    if f.get("machine_cpu") is not None and f["machine_cpu"] >= 90:
        return f"machine CPU ({f['machine_cpu']:.0f}% busy: JMeter and broker share the cores)"
    if f.get("process_cpu") is not None and f["process_cpu"] >= 80:
        return f"JMeter's CPU ({f['process_cpu']:.0f}% of all cores)"
    if f.get("gc_pct") is not None and f["gc_pct"] >= 5:
        return f"JMeter GC ({f['gc_pct']:.1f}% of the time in pauses)"
    # Checked after the resources: a point whose machine was saturated was bounded by it, whatever the ladder did.
    if (f.get("still_rising") or 0) > 0.5:
        return "the load: records/s still grew at the top rung of the ladder (not pushed to a resource)"
    if f.get("queue_ms") is not None and f.get("rtt_ms") is not None:
        if f["queue_ms"] > f["rtt_ms"]:
            return f"client queue (queue {f['queue_ms']:.2f} ms > broker round trip {f['rtt_ms']:.2f} ms)"
        return f"broker round trip ({f['rtt_ms']:.2f} ms ≥ queue {f['queue_ms']:.2f} ms)"
    mps = int(props.get("messages.per.sample", 1) or 1)
    if mps == 1 and f.get("mean_ms"):
        limit = int(props.get("threads", 1)) * 1000.0 / f["mean_ms"]
        return f"send→ack latency (closed loop: {props.get('threads')} threads ÷ {f['mean_ms']:.2f} ms = {limit:,.0f}/s)"
    return "not CPU nor GC (see the time breakdown)"


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def direction(points, medians, metric="records_per_sec"):
    base = medians[0].get(metric) if medians and medians[0] else None
    if not base:
        return "no measurement"
    parts = []
    for p, m in zip(points[1:], medians[1:]):
        v = m.get(metric) if m else None
        parts.append(f"{points[0]} → {p} = {v / base:.2f}×" if v else f"{points[0]} → {p}: failed")
    ratios = [m[metric] / base for m in medians[1:] if m and m.get(metric)]
    trend = ("grows" if all(r > 1.05 for r in ratios) else "falls" if all(r < 0.95 for r in ratios)
             else "stays within ±5 %" if all(abs(r - 1) <= 0.05 for r in ratios) else "changes unevenly")
    return f"{metric.replace('_', ' ')} {trend}: " + ", ".join(parts)


def fmt(v, digits=1):
    if v is None:
        return "–"
    return f"{v:,.{digits}f}"


def render(name, exp, rows, out_dir, rounds, records, bootstrap, rungs):
    points = exp["points"]
    medians = []
    for p in points:
        fs = [r["figures"] for r in rows if r["point"] == p and r["figures"]]
        keys = set().union(*[f.keys() for f in fs]) if fs else set()
        medians.append({k: median([f.get(k) for f in fs if isinstance(f.get(k), (int, float, type(None)))])
                        for k in keys} or None)
    sentence = direction(points, medians)
    if exp.get("push"):
        bounds = [bound(m, next((r["props"] for r in rows if r["point"] == p), {})) if m else "failed"
                  for p, m in zip(points, medians)]
        if all(b.startswith("broker") for b in bounds):
            sentence = "every point broker-bound: " + sentence
        else:
            off = "; ".join(f"{p}: {b}" for p, b in zip(points, bounds) if not b.startswith("broker"))
            sentence = (f"no direction follows: not every point was bounded by the broker ({off}); "
                        f"as measured, {sentence}")
    if exp.get("perf_test"):
        sentence += "; kafka-producer-perf-test in the same run: " + direction(points, medians, "perf_test_rps")
    if name == "record-size":
        sentence += "; " + direction(points, medians, "mb_per_sec")
    md = [f"## {name}", "", f"Knob `{exp['knob']}`, {rounds} round(s), medians. Measured: {sentence}.", "",
          f"Seed's conclusion: {exp['seed']}.", "",
          "| point | records/s | MB/s | p50 ms | p99 ms | queue ms | rtt ms | JMeter CPU % | machine CPU % | GC % | bounded by |"
          + (" load (threads × per sample, linger) |" if exp.get("push") else "")
          + (" perf-test records/s |" if exp.get("perf_test") else ""),
          "|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if exp.get("push") else "")
          + ("---|" if exp.get("perf_test") else "")]
    if exp.get("push"):
        md[2:2] = [f"Each point climbs the load (threads × records per sample, linger) until records/s grows less than "
                   f"{(PUSH_GAIN - 1) * 100:.0f} % and keeps its best rung: "
                   + ", ".join(f"{r['threads']} × {r['messages.per.sample']}, {r['linger.ms']} ms" for r in rungs)
                   + ". The seed's direction is stated only when every point was bounded by the broker.", ""]
    for p, m in zip(points, medians):
        props = next((r["props"] for r in rows if r["point"] == p), {})
        m = m or {}
        extra = ""
        if exp.get("push"):
            chosen = [r["props"] for r in rows if r["point"] == p]
            extra += " " + " / ".join(sorted({f"{c['threads']} × {c['messages.per.sample']}, {c['linger.ms']} ms"
                                             for c in chosen})) + " |"
        if exp.get("perf_test"):
            extra += f" {fmt(m.get('perf_test_rps'))} |"
        md.append(f"| {p} | {fmt(m.get('records_per_sec'))} | {fmt(m.get('mb_per_sec'), 2)} | {fmt(m.get('p50_ms'), 2)} | "
                  f"{fmt(m.get('p99_ms'), 2)} | {fmt(m.get('queue_ms'), 2)} | {fmt(m.get('rtt_ms'), 2)} | "
                  f"{fmt(m.get('process_cpu'), 0)} | {fmt(m.get('machine_cpu'), 0)} | {fmt(m.get('gc_pct'), 1)} | "
                  f"{bound(m if m else None, props)} |{extra}")
    md.append("")
    result = {"experiment": name, "knob": exp["knob"], "points": points, "rounds": rounds, "direction": sentence,
              "records": records, "bootstrap": bootstrap,
              "seed": exp["seed"], "medians": medians, "runs": rows}
    write_outputs(out_dir, name, result, md)
    chart(name, exp, points, medians, os.path.join(out_dir, f"{name}.png"))
    return result, "\n".join(md)


def chart(name, exp, points, medians, path):
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    labels = [str(p) for p in points]
    for ax, (metric, title) in zip(axes, [("records_per_sec", "records/s (median)"), ("p99_ms", "p99 latency ms")]):
        values = [(m or {}).get(metric) or 0 for m in medians]
        perf = [(m or {}).get("perf_test_rps") or 0 for m in medians] if metric == "records_per_sec" else []
        width = 0.4 if any(perf) else 0.8
        bars = ax.bar([i - (width / 2 if any(perf) else 0) for i in range(len(values))], values, width,
                      color="#1f77b4", label="JMeter + this sampler")
        if any(perf):
            pbars = ax.bar([i + width / 2 for i in range(len(perf))], perf, width, color="#ff7f0e",
                           label="kafka-producer-perf-test")
            for b, v in zip(pbars, perf):
                ax.annotate(f"{v:,.0f}", (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom",
                            fontsize=8)
            ax.legend(fontsize=7)
        for b, v in zip(bars, values):
            ax.annotate(f"{v:,.0f}" if metric == "records_per_sec" else f"{v:.1f}",
                        (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(values)))
        ax.set_xticklabels(labels, rotation=20, fontsize=8)
        ax.set_title(f"{name}: {title}", fontsize=10)
        ax.set_xlabel(exp["knob"], fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def index(out_dir):
    """index.html: every experiment whose NAME.json is in out_dir, each with its chart, table and data."""
    items = []
    for fname in sorted(os.listdir(out_dir)):
        if not fname.endswith(".json"):
            continue
        try:
            with open(os.path.join(out_dir, fname)) as f:
                r = json.load(f)
        except (OSError, ValueError):
            continue
        if not isinstance(r, dict) or r.get("experiment") != fname[:-5]:
            continue
        n = r["experiment"]
        if "headline" in r:
            text = f"<b>Result:</b> {html.escape(r['headline'])}."
        else:
            text = (f"<b>Measured:</b> {html.escape(r['direction'])}.<br><b>Seed:</b> {html.escape(r['seed'])}.<br>"
                    f"{r.get('rounds')} round(s), {r.get('records', 0):,} records per point, "
                    f"bootstrap {html.escape(r.get('bootstrap') or 'local stack')}.")
        items.append(f"<h2>{html.escape(n)}</h2><p>{text}</p><img src='{n}.png' alt='{n} chart'><p>"
                     f"<a href='{n}.md'>table (Markdown)</a> · <a href='{n}.json'>data (JSON)</a></p>")
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>jmeter-kafka-native experiments</title></head>"
            f"<body><h1>Kafka experiments through JMeter</h1><p>{html.escape(time.strftime('%Y-%m-%d %H:%M'))}.</p>"
            f"{''.join(items)}</body></html>")
    with open(os.path.join(out_dir, "index.html"), "w") as f:
        f.write(page)


def kafka(*args, check=False):
    return sh(["scripts/kafka", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=check).returncode


# The experiments with options of their own: `scripts/experiment NAME --help`.
SEARCHES = {"capacity": "capacity", "step-load": "stepload", "failover": "failover",
            "consumer-rebalance": "rebalance"}


def main():
    if len(sys.argv) > 1 and sys.argv[1] in SEARCHES:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        module = __import__(SEARCHES[sys.argv[1]])
        return module.main(sys.argv[2:])
    ap = argparse.ArgumentParser(
        prog="scripts/experiment",
        description="Runs named Kafka experiments through JMeter with our sampler, interleaved in rounds, and writes "
                    "per experiment a Markdown table, JSON and a PNG chart, plus index.html linking them.",
        epilog="Experiments: " + "; ".join(f"{n} ({e['knob']}: {', '.join(map(str, e['points']))})"
                                         for n, e in EXPERIMENTS.items()) +
               ". Searches with options of their own (scripts/experiment NAME --help): " + ", ".join(SEARCHES) + ".")
    ap.add_argument("experiments", nargs="*", help="names (default: all)")
    ap.add_argument("--quick", action="store_true",
                    help="1 round, 2,000 records per point, 2 rungs of the load ladder (CI: a few minutes)")
    ap.add_argument("--rounds", type=int, help="rounds (default 2; --quick 1)")
    ap.add_argument("--records", type=int, help="records per point (default 100,000; --quick 2,000)")
    ap.add_argument("--nodes", type=int, choices=[1, 3], default=1,
                    help="local stack for all experiments but replication, which always uses the 3-node stack")
    ap.add_argument("--bootstrap", help="a given cluster instead of the local stack (replication then needs 3 brokers)")
    ap.add_argument("--out", default=os.path.join(ROOT, "target", "experiments"), help="output folder")
    args = ap.parse_args()
    args.rounds = args.rounds or (1 if args.quick else 2)
    args.records = args.records or (2000 if args.quick else 100_000)
    # --quick climbs two rungs: it checks that the climb and its report work, not where the broker saturates.
    rungs = LADDER[:2] if args.quick else LADDER
    names = args.experiments or list(EXPERIMENTS)
    unknown = [n for n in names if n not in EXPERIMENTS]
    if unknown:
        ap.error(f"unknown experiment(s) {', '.join(unknown)}; choose from {', '.join(EXPERIMENTS)}")
    os.makedirs(args.out, exist_ok=True)
    runs_dir = os.path.join(args.out, "runs")
    os.makedirs(runs_dir, exist_ok=True)

    started = []
    def stack(nodes):
        if args.bootstrap:
            return args.bootstrap
        if kafka("status", "--nodes", str(nodes)) != 0:
            log(f"starting the local {nodes}-node stack")
            if kafka("start", "--nodes", str(nodes)) != 0:
                sys.exit(f"scripts/kafka start --nodes {nodes} failed")
            started.append(nodes)
        return CLUSTER_BOOTSTRAP if nodes == 3 else "127.0.0.1:9092"

    rows = {n: [] for n in names}
    tag = f"{int(time.time())}"
    try:
        for rnd in range(args.rounds):
            # The 3-node experiments last: the 3-node stack (started once, stopped at the end) then idles beside no one.
            order = sorted(names, key=lambda n: EXPERIMENTS[n].get("nodes", args.nodes) == 3 and not args.bootstrap)
            for name in order:
                exp = EXPERIMENTS[name]
                bootstrap = stack(exp.get("nodes", args.nodes))
                points = exp["points"][:]
                random.Random(rnd).shuffle(points)  # interleaved: each round its own order
                filled = None
                if exp.get("consumer"):
                    filled = f"exp-{tag}-{name}-r{rnd}"
                    if not fill_topic(filled, exp["partitions"], args.records, bootstrap, runs_dir, f"{name}-r{rnd}-fill"):
                        log(f"{name}: filling {filled} failed")
                for p in points:
                    props, n = point_props(exp, p, args.records)
                    run_name = f"{name}-{str(p).replace('=', '_')}-r{rnd}"
                    if exp.get("consumer"):
                        props.update({"kafka.topic": filled, "kafka.group": f"{run_name}-{tag}", "duration": 120,
                                      "stop.on.empty": "true", "kafka.bootstrap": bootstrap})
                        summary, rc, took = run_jmeter(CONSUMER_PLAN, props, runs_dir, run_name)
                    elif exp.get("push"):
                        (props, summary, rc, took, n), ladder = push_point(exp, p, args.records, bootstrap, runs_dir,
                                                                           f"exp-{tag}-{run_name}", rungs)
                    else:
                        props.update({"kafka.topic": f"exp-{tag}-{run_name}", "kafka.bootstrap": bootstrap})
                        summary, rc, took = run_jmeter(PRODUCER_PLAN, props, runs_dir, run_name)
                    f = figures(summary, exp.get("consumer"))
                    if f is not None and exp.get("push"):
                        f["ladder"] = ladder
                        f["still_rising"] = 1 if ladder[-1].get("still_rising") else 0
                    if f is not None and exp.get("perf_test"):
                        f["perf_test_rps"] = perf_test(f"exp-{tag}-{run_name}-perf", p, n, props["record.size"],
                                                       bootstrap, runs_dir, f"{run_name}-perf")
                        log(f"  kafka-producer-perf-test: {fmt(f['perf_test_rps'])} records/s")
                    log(f"{name} {exp['knob']}={p} round {rnd + 1}: "
                        f"{fmt((f or {}).get('records_per_sec'))} records/s, exit {rc}, {took:.0f} s")
                    rows[name].append({"point": p, "round": rnd, "props": props, "records": n, "exit": rc,
                                       "seconds": took, "figures": f})
            if not args.bootstrap:  # the points' topics are not needed any more: keep the brokers' disks small
                for nodes in {EXPERIMENTS[n].get("nodes", args.nodes) for n in names}:
                    sh(["scripts/kafka", "topics", "--bootstrap-server", stack(nodes).split(",")[0], "--delete",
                        "--topic", f"exp-{tag}-.*"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        for nodes in started:
            kafka("stop", "--nodes", str(nodes))
    for name in names:
        _, md = render(name, EXPERIMENTS[name], rows[name], args.out, args.rounds, args.records, args.bootstrap, rungs)
        print(md)
    index(args.out)
    print(f"wrote {args.out}/index.html")
    failed = [f"{n} {r['point']}" for n in names for r in rows[n] if r["figures"] is None]
    if failed:
        print(f"points without a summary: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
