"""`scripts/experiment step-load`: the capacity-evaluation recipe of starting N threads, adding N every T seconds,
then holding; one JMeter run of jmeter-plans/step-load.jmx.

Per step (the JTL's samples whose start falls in the step's window, from its thread group's first sample to the next's)
the table gives the threads that sampled, records/s, p50/p99 of the send→ack time, errors, and the load generator's
CPU: the JMeter process tree's CPU time (from /proc, read every second) over the step's wall time, in % of one
core, beside the whole machine's busy %. `--p99` / `--error-rate` judge the last step (the hold), like a verdict.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

import capacity
import experiment as ex

PLAN = "jmeter-plans/step-load.jmx"
MAX_STEPS = 10  # the thread groups in the plan
TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid):
    """CPU seconds (user + system) of pid and every descendant, from /proc."""
    children = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append((int(p), int(fields[11]) + int(fields[12])))
    total, todo = 0, [pid]
    while todo:
        for child, ticks in children.get(todo.pop(), []):
            total += ticks
            todo.append(child)
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    except OSError:
        pass
    return total / TICK


def machine_busy():
    """(busy, total) jiffies of the whole machine."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v)


def run(args, runs_dir, tag):
    name = f"step-load-{tag}"
    jtl = os.path.join(runs_dir, f"{name}.jtl")
    summary_file = os.path.join(runs_dir, f"{name}-summary.json")
    props = {"kafka.bootstrap": args.bootstrap, "kafka.topic": f"step-load-{tag}", "steps": args.steps,
             "step.threads": args.threads, "step.seconds": args.step_seconds, "hold.seconds": args.hold,
             "record.size": args.record_size, "acks": args.acks, "messages.per.sample": args.messages_per_sample,
             "sampleresult.timestamp.start": "true", "jmeter.save.saveservice.sample_count": "true",
             "jmeter.save.saveservice.output_format": "csv", "kafka.summary.file": summary_file}
    if args.target_rate:
        props["target.rate"] = args.target_rate
    for kv in args.prop:
        k, _, v = kv.partition("=")
        props[k] = v
    cmd = ["scripts/jmeter", "-n", "-t", PLAN, "-l", jtl, "-j", os.path.join(runs_dir, f"{name}.log")]
    cmd += [f"-J{k}={v}" for k, v in props.items()]
    cpu = []  # (epoch s, process tree CPU s, machine busy jiffies, machine total jiffies)
    with open(os.path.join(runs_dir, f"{name}.out"), "w") as out:
        proc = subprocess.Popen(cmd, cwd=ex.ROOT, stdout=out, stderr=subprocess.STDOUT)
        while proc.poll() is None:
            cpu.append((time.time(), tree_cpu_seconds(proc.pid), *machine_busy()))
            time.sleep(1)
    try:
        with open(summary_file) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        summary = None
    return jtl, summary, cpu, proc.returncode, props


def cpu_between(cpu, start, end):
    """(JMeter CPU % of one core, machine busy %) between two epoch times, from the 1 s readings."""
    inside = [c for c in cpu if start <= c[0] <= end]
    if len(inside) < 2:
        return None, None
    a, b = inside[0], inside[-1]
    wall = b[0] - a[0]
    return 100.0 * (b[1] - a[1]) / wall, 100.0 * (b[2] - a[2]) / max(b[3] - a[3], 1)


def steps_table(args, jtl, cpu):
    with open(jtl, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return []
    t0 = min(int(r["timeStamp"]) for r in rows)
    # A step begins with its thread group's first sample (group k's threads are named "Step k k-1" ...): JMeter counts
    # the delays from the test's start, before the first sample's connection, not from that sample.
    starts = []
    for k in range(args.steps):
        first = [int(r["timeStamp"]) for r in rows if r["threadName"].startswith(f"Step {k + 1} ")]
        starts.append(min(first) if first else t0 + k * args.step_seconds * 1000)
    out = []
    for k in range(args.steps):
        start = starts[k]
        end = starts[k + 1] if k + 1 < args.steps else start + (args.step_seconds + args.hold) * 1000
        in_step = [r for r in rows if start <= int(r["timeStamp"]) < end]
        elapsed = sorted(int(r["elapsed"]) for r in in_step)
        messages = sum(int(r.get("SampleCount") or 1) for r in in_step)
        errors = sum(int(r.get("ErrorCount") or (0 if r["success"] == "true" else 1)) for r in in_step)
        jm, machine = cpu_between(cpu, start / 1000, end / 1000)
        first_error = next((f"{r['responseCode']}: {r['responseMessage']}" for r in in_step if r["success"] != "true"),
                           None)
        out.append({"step": k + 1, "threads": (k + 1) * args.threads,
                    "threads_sampling": len({r["threadName"] for r in in_step}),
                    "seconds": (end - start) / 1000, "records_per_sec": (messages - errors) / ((end - start) / 1000),
                    "p50_ms": capacity.quantile(elapsed, 0.5), "p99_ms": capacity.quantile(elapsed, 0.99),
                    "messages": messages, "errors": errors, "error_pct": 100.0 * errors / messages if messages else None,
                    "first_error": first_error, "jmeter_cpu_pct": jm, "machine_cpu_pct": machine})
    return out


def render(args, steps, summary, out_dir, seconds):
    last = steps[-1] if steps else None
    judged = []
    if last and args.p99 is not None:
        judged.append(("p99", last["p99_ms"] is not None and last["p99_ms"] <= args.p99,
                       f"p99 {ex.fmt(last['p99_ms'], 0)} ms (≤ {args.p99:g})"))
    if last and args.error_rate is not None:
        judged.append(("errors", (last["error_pct"] or 0) <= args.error_rate,
                       f"errors {ex.fmt(last['error_pct'], 2)} % (≤ {args.error_rate:g})"))
    verdict = None if not judged else all(ok for _, ok, _ in judged)
    best = max(steps, key=lambda s: s["records_per_sec"]) if steps else None
    rates = " → ".join(f"{s['records_per_sec']:,.0f}" for s in steps)
    if not steps:
        headline = "no sample was written"
    else:
        headline = (f"{args.steps} steps of +{args.threads} threads every {args.step_seconds:g} s, hold {args.hold:g} s: "
                    f"records/s {rates}; most at "
                    f"{best['threads']} threads; last step p99 {ex.fmt(last['p99_ms'], 0)} ms")
        if verdict is not None:
            headline += f"; last step {'PASS' if verdict else 'FAIL'} (" + ", ".join(t for _, _, t in judged) + ")"
    md = ["## step-load", "", f"Plan `{PLAN}`, {args.record_size} B records, acks={args.acks}, "
          f"{args.messages_per_sample} record(s) per sample" +
          (f", target.rate {args.target_rate}/s per thread" if args.target_rate else ", closed loop") +
          f", bootstrap {args.bootstrap}; {seconds:.0f} s in all.", "", f"**{headline}.**", "",
          "Latency is send→ack per sample (no target rate: a closed loop, each thread one sample in flight). "
          "JMeter CPU is its process tree's CPU time over the step, in % of one core.", "",
          "| step | threads | threads sampling | records/s | p50 ms | p99 ms | errors | errors % | JMeter CPU % | machine CPU % |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for s in steps:
        md.append(f"| {s['step']} | {s['threads']} | {s['threads_sampling']} | {s['records_per_sec']:,.0f} | "
                  f"{ex.fmt(s['p50_ms'], 0)} | {ex.fmt(s['p99_ms'], 0)} | {s['errors']:,} | {ex.fmt(s['error_pct'], 2)} | "
                  f"{ex.fmt(s['jmeter_cpu_pct'], 0)} | {ex.fmt(s['machine_cpu_pct'], 0)} |")
    md.append("")
    result = {"experiment": "step-load", "headline": headline, "verdict": verdict,
              "settings": {"steps": args.steps, "threads_per_step": args.threads, "step_seconds": args.step_seconds,
                           "hold_seconds": args.hold, "record_size": args.record_size, "acks": args.acks,
                           "messages_per_sample": args.messages_per_sample, "target_rate": args.target_rate,
                           "bootstrap": args.bootstrap, "quick": args.quick},
              "steps": steps, "summary": {k: (summary or {}).get(k) for k in ("acked", "failed", "records_per_sec",
                                                                              "latency_us", "errors")},
              "seconds": round(seconds, 1)}
    ex.write_outputs(out_dir, "step-load", result, md)
    chart(args, steps, os.path.join(out_dir, "step-load.png"))
    return result, "\n".join(md)


def chart(args, steps, path):
    plt = ex.pyplot()
    if plt is None:
        return
    threads = [s["threads"] for s in steps]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    a1.bar(range(len(steps)), [s["records_per_sec"] for s in steps], color="#1f77b4")
    a1.set_xticks(range(len(steps)))
    a1.set_xticklabels([f"{t} thr" for t in threads], fontsize=8)
    a1.set_ylabel("records/s")
    a1.set_title("records/s per step", fontsize=10)
    ax = a1.twinx()
    ax.plot(range(len(steps)), [s["jmeter_cpu_pct"] or 0 for s in steps], "k.--", label="JMeter CPU % of a core")
    ax.set_ylabel("JMeter CPU, % of one core")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7, loc="upper left")
    a2.plot(threads, [max(s["p50_ms"] or 0, 0.5) for s in steps], "o-", label="p50")
    a2.plot(threads, [max(s["p99_ms"] or 0, 0.5) for s in steps], "s-", label="p99")
    if args.p99 is not None:
        a2.axhline(args.p99, color="black", linewidth=1, label=f"SLO p99 {args.p99:g} ms")
    a2.set_yscale("log")
    a2.set_xlabel("threads")
    a2.set_ylabel("send→ack latency, ms (log)")
    a2.set_title("latency per step", fontsize=10)
    a2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv):
    ap = argparse.ArgumentParser(
        prog="scripts/experiment step-load",
        description=f"Runs {PLAN}: start N threads, add N every T s, hold; a per-step table (threads, records/s, "
                    "p50/p99, errors, generator CPU) and a chart. Writes step-load.md, .json, .png and index.html.")
    ap.add_argument("--threads", type=int, help="threads added per step (default 5; --quick 2)")
    ap.add_argument("--step-seconds", type=capacity.positive("--step-seconds"), help="seconds per step (default 60; --quick 8)")
    ap.add_argument("--steps", type=int, help=f"steps, 1 to {MAX_STEPS} (default 4; --quick 3)")
    ap.add_argument("--hold", type=float, help="seconds the last step is held on top of its own (default = step)")
    ap.add_argument("--record-size", type=int, default=1024, help="bytes per record (default 1024)")
    ap.add_argument("--acks", default="1", help="acks (default 1)")
    ap.add_argument("--messages-per-sample", type=int, default=1, help="records per sample (default 1)")
    ap.add_argument("--target-rate", type=capacity.positive("--target-rate"), help="samples/s per thread (default none)")
    ap.add_argument("--p99", type=capacity.positive("--p99"), help="judge the last step: p99 ms")
    ap.add_argument("--error-rate", type=capacity.percent, help="judge the last step: errors %%")
    ap.add_argument("--prop", action="append", default=[], metavar="NAME=VALUE", help="more -J properties")
    ap.add_argument("--bootstrap", default="127.0.0.1:9092", help="the cluster (default the local node)")
    ap.add_argument("--quick", action="store_true", help="3 short steps of 2 threads (CI)")
    ap.add_argument("--out", default=os.path.join(ex.ROOT, "target", "experiments"), help="output folder")
    args = ap.parse_args(argv)
    args.threads = args.threads or (2 if args.quick else 5)
    args.step_seconds = args.step_seconds or (8 if args.quick else 60)
    args.steps = args.steps or (3 if args.quick else 4)
    args.hold = args.hold if args.hold is not None else args.step_seconds
    if not 1 <= args.steps <= MAX_STEPS:
        ap.error(f"--steps must be from 1 to {MAX_STEPS} (the plan's thread groups)")
    if args.threads < 1:
        ap.error("--threads must be at least 1")
    if args.hold < 0:
        ap.error("--hold must not be negative")
    os.makedirs(args.out, exist_ok=True)
    runs_dir = os.path.join(args.out, "runs")
    os.makedirs(runs_dir, exist_ok=True)
    started = time.time()
    jtl, summary, cpu, rc, _ = run(args, runs_dir, int(started))
    steps = steps_table(args, jtl, cpu) if os.path.exists(jtl) else []
    if steps and all(s["messages"] and s["errors"] == s["messages"] for s in steps):
        print(f"step-load: every sample failed: {steps[0]['first_error']} (JTL {jtl})", file=sys.stderr)
        return 2
    result, md = render(args, steps, summary, args.out, time.time() - started)
    print(md)
    ex.index(args.out)
    print(f"wrote {args.out}/index.html")
    if not steps:
        print(f"step-load: JMeter wrote no sample (exit {rc}; see {jtl[:-4]}.out)", file=sys.stderr)
        return 2
    return 3 if result["verdict"] is False else 0
