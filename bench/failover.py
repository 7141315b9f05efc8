"""`scripts/experiment failover`: the leader of the busiest partition is killed mid-run and restarted; what a user
sees of it, for two producer settings interleaved (policy=capacity acks=1, policy=reliability).

Each run: a fresh topic (replication 3) and the shipped producer plan paced with `target.rate` and the delivery audit
on. At `--kill-after` seconds after the first sample, the partition with the most records so far is found, its leader
killed (`--kill-cmd`, default kill -9 of the local 3-node stack's node; seconds counted from JMeter's "all thread groups
started"), and restarted `--down` seconds later
(`--start-cmd`). From the JTL: the unavailability window (the first to the last sample after the kill that failed or
stalled, stalled = elapsed over `--stall-ms`), records/s and p99 per second, and p99 before / during / after the
window; from the summary's audit: acknowledged-but-lost (missing), failed-but-written, duplicates; from the cluster:
the time from the restart to no under-replicated partition of the topic (full ISR).
"""
import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys
import time

import capacity
import experiment as ex

POLICIES = {
    "capacity-acks1": {"policy": "capacity", "acks": "1", "timeout.ms": 3000},
    "reliability": {"policy": "reliability", "acks": "all", "timeout.ms": "", "linger.ms": ""},
}
LOCAL_KILL = "kill -9 $(cat target/kafka/cluster/node{node}/kafka.pid)"
LOCAL_START = "KAFKA_START_TIMEOUT=180 scripts/kafka start --nodes 3"


def kafka_out(*args):
    return subprocess.run(["scripts/kafka", *args], cwd=ex.ROOT, capture_output=True, text=True)


def brokers(bootstrap):
    """The broker ids the cluster reports."""
    r = kafka_out("run", "org.apache.kafka.tools.BrokerApiVersionsCommand", "--bootstrap-server", bootstrap)
    return sorted({int(m) for m in re.findall(r"\(id: (\d+) rack", r.stdout)})


def end_offsets(bootstrap, topic):
    r = kafka_out("run", "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", bootstrap, "--topic", topic)
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split(":")
        if len(parts) == 3 and parts[1].isdigit():
            out[int(parts[1])] = int(parts[2])
    return out


def leaders(bootstrap, topic):
    r = kafka_out("topics", "--bootstrap-server", bootstrap, "--describe", "--topic", topic)
    return {int(p): int(l) for p, l in re.findall(r"Partition: (\d+)\s+Leader: (-?\d+)", r.stdout)}


def under_replicated(bootstrap, topic):
    r = kafka_out("topics", "--bootstrap-server", bootstrap, "--describe", "--topic", topic,
                  "--under-replicated-partitions")
    return r.returncode == 0 and bool(re.search(r"Partition: \d+", r.stdout)), r.returncode


def run_cmd(template, node):
    cmd = template.replace("{node}", str(node))
    return subprocess.run(["bash", "-c", cmd], cwd=ex.ROOT, capture_output=True, text=True)


def one_run(args, name, settings, runs_dir, tag):
    topic = f"failover-{tag}-{name}"
    r = kafka_out("topics", "--bootstrap-server", args.bootstrap, "--create", "--topic", topic, "--partitions",
                  str(args.partitions), "--replication-factor", "3")
    if r.returncode != 0:
        raise SystemExit(f"failover: creating {topic} failed: {r.stderr.strip()[-300:]}")
    jtl = os.path.join(runs_dir, f"{topic}.jtl")
    summary_file = os.path.join(runs_dir, f"{topic}-summary.json")
    per_thread = args.rate / args.threads
    props = {"kafka.bootstrap": args.bootstrap, "kafka.topic": topic, "topic.create": "false", "threads": args.threads,
             "loops": int(per_thread * args.seconds), "target.rate": f"{per_thread:.6g}",
             "record.size": args.record_size, "audit": "true", "rampup": 0, "linger.ms": 0,
             "sampleresult.timestamp.start": "true", "jmeter.save.saveservice.sample_count": "true",
             "jmeter.save.saveservice.output_format": "csv", "kafka.summary.file": summary_file}
    props.update(settings)
    cmd = ["scripts/jmeter", "-n", "-t", ex.PRODUCER_PLAN, "-l", jtl, "-j", os.path.join(runs_dir, f"{topic}.log")]
    cmd += [f"-J{k}={v}" for k, v in props.items()]
    events = {}
    with open(os.path.join(runs_dir, f"{topic}.out"), "w") as out:
        # A session of its own: bin/jmeter runs java as its child, and a stop must reach the JVM too.
        proc = subprocess.Popen(cmd, cwd=ex.ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        # The load starts when JMeter logs its thread groups started (the JTL is written in buffered blocks).
        first, log_file = None, os.path.join(runs_dir, f"{topic}.log")
        while proc.poll() is None and first is None:
            if os.path.exists(log_file):
                with open(log_file, errors="replace") as f:
                    if "All thread groups have been started" in f.read():
                        first = time.time()
            time.sleep(0.2)
        if first is None:
            first = time.time()
        while proc.poll() is None and time.time() < first + args.kill_after:
            time.sleep(0.2)
        offsets = end_offsets(args.bootstrap, topic)
        lead = leaders(args.bootstrap, topic)
        busiest = max(offsets, key=offsets.get) if offsets else 0
        node = lead.get(busiest)
        events["busiest_partition"], events["killed_node"] = busiest, node
        events["kill"] = time.time()
        k = run_cmd(args.kill_cmd, node)
        if k.returncode != 0:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(60)
            raise SystemExit(f"failover: the kill command failed (exit {k.returncode}): "
                             f"{(k.stderr or k.stdout).strip()[-300:]}")
        ex.log(f"failover {name}: node {node} (leader of partition {busiest}, {offsets.get(busiest)} records) killed")
        while proc.poll() is None and time.time() < events["kill"] + args.down:
            time.sleep(0.2)
        events["restart"] = time.time()
        s = run_cmd(args.start_cmd, node)
        events["restarted"] = time.time()
        if s.returncode != 0:
            ex.log(f"failover {name}: the start command failed (exit {s.returncode}): {s.stderr.strip()[-200:]}")
        ex.log(f"failover {name}: node {node} restarted ({events['restarted'] - events['restart']:.0f} s)")
        while True:
            under, rc = under_replicated(args.bootstrap, topic)
            if rc == 0 and not under:
                events["isr_full"] = time.time()
                break
            if time.time() > events["restart"] + 180:
                break
            time.sleep(0.5)
        proc.wait()
    try:
        with open(summary_file) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        summary = None
    return analyse(args, name, settings, jtl, summary, events, proc.returncode)


def analyse(args, name, settings, jtl, summary, events, rc):
    with open(jtl, newline="") as f:
        rows = list(csv.DictReader(f))
    kill_ms, restart_ms = events["kill"] * 1000, events["restart"] * 1000
    t0 = min(int(r["timeStamp"]) for r in rows) if rows else kill_ms
    bad = [r for r in rows if int(r["timeStamp"]) + int(r["elapsed"]) >= kill_ms and
           (r["success"] != "true" or int(r["elapsed"]) > args.stall_ms)]
    w_start = min(int(r["timeStamp"]) for r in bad) if bad else None
    w_end = max(int(r["timeStamp"]) + int(r["elapsed"]) for r in bad) if bad else None

    def p99(sel):
        return capacity.quantile(sorted(int(r["elapsed"]) for r in sel), 0.99)

    before = [r for r in rows if int(r["timeStamp"]) + int(r["elapsed"]) < kill_ms]
    during = [r for r in rows if bad and w_start <= int(r["timeStamp"]) <= w_end]
    after = [r for r in rows if int(r["timeStamp"]) > (w_end or kill_ms)]
    timeline = {}
    for r in rows:
        sec = (int(r["timeStamp"]) + int(r["elapsed"]) - t0) // 1000
        t = timeline.setdefault(sec, {"ok": 0, "failed": 0, "elapsed": []})
        n = int(r.get("SampleCount") or 1)
        e = int(r.get("ErrorCount") or (0 if r["success"] == "true" else n))
        t["ok"] += n - e
        t["failed"] += e
        t["elapsed"].append(int(r["elapsed"]))
    # Every second, those in which no sample ended too: a stall is a run of zeros, not a line drawn across it.
    empty = {"ok": 0, "failed": 0, "elapsed": []}
    series = [{"t": sec, "records_per_sec": timeline.get(sec, empty)["ok"], "failed": timeline.get(sec, empty)["failed"],
               "p99_ms": capacity.quantile(sorted(timeline.get(sec, empty)["elapsed"]), 0.99)}
              for sec in range(0, max(timeline, default=-1) + 1)]
    audit = (summary or {}).get("audit") or {}
    return {
        "run": name, "settings": settings, "exit": rc, "killed_node": events["killed_node"],
        "busiest_partition": events["busiest_partition"],
        "kill_s": (kill_ms - t0) / 1000, "restart_s": (restart_ms - t0) / 1000,
        "isr_full_s": (events["isr_full"] * 1000 - t0) / 1000 if "isr_full" in events else None,
        "time_to_full_isr_s": events["isr_full"] - events["restart"] if "isr_full" in events else None,
        "window_start_s": (w_start - t0) / 1000 if bad else None, "window_end_s": (w_end - t0) / 1000 if bad else None,
        "unavailable_s": (w_end - w_start) / 1000 if bad else 0.0,
        "failed_samples": sum(1 for r in rows if r["success"] != "true"),
        "failed_codes": sorted({r["responseCode"] for r in rows if r["success"] != "true"}),
        "p99_before_ms": p99(before), "p99_during_ms": p99(during), "p99_after_ms": p99(after),
        "acked": (summary or {}).get("acked"), "failed": (summary or {}).get("failed"),
        "acked_but_lost": audit.get("missing"), "failed_but_written": audit.get("found_unacked"),
        "duplicates": audit.get("duplicates"), "audit_complete": audit.get("complete"),
        "acked_after_timeout": (summary or {}).get("acked_after_timeout"), "series": series,
    }


def render(args, runs, out_dir, seconds):
    parts = []
    for r in runs:
        parts.append(f"{r['run']}: unavailable {r['unavailable_s']:.1f} s, {ex.fmt(r['acked_but_lost'], 0)} acked-but-lost, "
                     f"{ex.fmt(r['failed_but_written'], 0)} failed-but-written, {ex.fmt(r['duplicates'], 0)} duplicates, "
                     f"full ISR {ex.fmt(r['time_to_full_isr_s'])} s after the restart")
    headline = "; ".join(parts)
    md = ["## failover", "", f"{args.rate:,.0f} records/s ({args.threads} threads paced by target.rate), "
          f"{args.record_size} B records, {args.partitions} partitions × replication 3, bootstrap {args.bootstrap}; the "
          f"leader of the busiest partition killed {args.kill_after:g} s after the first sample and restarted "
          f"{args.down:g} s later; a sample over {args.stall_ms} ms counts as stalled; {seconds:.0f} s in all.", "",
          f"**{headline}.**", "",
          "| run | killed node | unavailable s (window) | failed samples (codes) | p99 ms before / during / after | "
          "acked-but-lost | failed-but-written | duplicates | time to full ISR s | exit |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        window = (f"{r['unavailable_s']:.1f} ({r['window_start_s']:.1f}–{r['window_end_s']:.1f})"
                  if r["window_start_s"] is not None else "0")
        md.append(f"| {r['run']} | {r['killed_node']} (partition {r['busiest_partition']}) | {window} | "
                  f"{r['failed_samples']} ({', '.join(r['failed_codes']) or '–'}) | {ex.fmt(r['p99_before_ms'], 0)} / "
                  f"{ex.fmt(r['p99_during_ms'], 0)} / {ex.fmt(r['p99_after_ms'], 0)} | {ex.fmt(r['acked_but_lost'], 0)} | "
                  f"{ex.fmt(r['failed_but_written'], 0)} | {ex.fmt(r['duplicates'], 0)} | "
                  f"{ex.fmt(r['time_to_full_isr_s'])} | {r['exit']} |")
    md.append("")
    result = {"experiment": "failover", "headline": headline, "runs": runs, "seconds": round(seconds, 1),
              "settings": {k: getattr(args, k) for k in ("rate", "threads", "record_size", "partitions", "seconds",
                                                         "kill_after", "down", "stall_ms", "bootstrap", "quick")}}
    ex.write_outputs(out_dir, "failover", result, md)
    chart(runs, os.path.join(out_dir, "failover.png"))
    return result, "\n".join(md)


def chart(runs, path):
    plt = ex.pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(len(runs), 1, figsize=(11, 3.2 * len(runs)), squeeze=False)
    for ax, r in zip(axes[:, 0], runs):
        t = [p["t"] for p in r["series"]]
        ax.plot(t, [p["records_per_sec"] for p in r["series"]], color="#1f77b4", label="records/s acked")
        ax.bar(t, [p["failed"] for p in r["series"]], color="red", alpha=0.5, label="records failed")
        ax.set_ylabel("records per second")
        ax2 = ax.twinx()
        measured = [p for p in r["series"] if p["p99_ms"] is not None]
        ax2.plot([p["t"] for p in measured], [max(p["p99_ms"], 0.5) for p in measured], "k.", markersize=3,
                 label="p99 ms (per s)")
        ax2.set_yscale("log")
        ax2.set_ylabel("p99 send→ack ms (log)")
        ax.axvline(r["kill_s"], color="red", linestyle="--", label=f"kill node {r['killed_node']}")
        ax.axvline(r["restart_s"], color="green", linestyle="--", label="restart")
        if r["isr_full_s"] is not None:
            ax.axvline(r["isr_full_s"], color="blue", linestyle=":", label="full ISR")
        if r["window_start_s"] is not None:
            ax.axvspan(r["window_start_s"], r["window_end_s"], color="orange", alpha=0.2, label="unavailable")
        ax.set_title(f"{r['run']}: unavailable {r['unavailable_s']:.1f} s, {ex.fmt(r['acked_but_lost'], 0)} lost",
                     fontsize=10)
        ax.set_xlabel("seconds since the first sample")
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv):
    ap = argparse.ArgumentParser(
        prog="scripts/experiment failover",
        description="Kills the leader of the busiest partition mid-run and restarts it; reports the unavailability "
                    "window, p99 before/during/after, acknowledged-but-lost, failed-but-written, duplicates and the "
                    "time to full ISR, for policy=capacity acks=1 and policy=reliability, interleaved.")
    ap.add_argument("--bootstrap", default=ex.CLUSTER_BOOTSTRAP, help="the cluster (default the local 3-node stack, "
                                                                      "started and stopped when not running)")
    ap.add_argument("--kill-cmd", default=LOCAL_KILL, help="shell command killing node {node} (default: the local stack's)")
    ap.add_argument("--start-cmd", default=LOCAL_START, help="shell command starting node {node} again")
    ap.add_argument("--rate", type=capacity.positive("--rate"), default=500, help="records/s (default 500)")
    ap.add_argument("--threads", type=int, default=10, help="threads (default 10)")
    ap.add_argument("--record-size", type=int, default=200, help="bytes per record (default 200)")
    ap.add_argument("--partitions", type=int, default=6, help="partitions of each run's topic (default 6)")
    ap.add_argument("--seconds", type=capacity.positive("--seconds"), help="load per run (default 60; --quick 30)")
    ap.add_argument("--kill-after", type=float, help="seconds after the first sample (default 15; --quick 8)")
    ap.add_argument("--down", type=float, help="seconds the node stays down (default 15; --quick 8)")
    ap.add_argument("--stall-ms", type=int, default=1000, help="a sample slower than this is stalled (default 1000)")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of both runs, interleaved (default 1)")
    ap.add_argument("--quick", action="store_true", help="30 s runs (CI)")
    ap.add_argument("--out", default=os.path.join(ex.ROOT, "target", "experiments"), help="output folder")
    args = ap.parse_args(argv)
    args.seconds = args.seconds or (30 if args.quick else 60)
    args.kill_after = args.kill_after if args.kill_after is not None else (8 if args.quick else 15)
    args.down = args.down if args.down is not None else (8 if args.quick else 15)
    if args.kill_after + args.down >= args.seconds:
        ap.error("--kill-after + --down must be shorter than --seconds: the run would end before the node is back")
    local = args.bootstrap == ex.CLUSTER_BOOTSTRAP and args.kill_cmd == LOCAL_KILL
    started = False
    if local and ex.kafka("status", "--nodes", "3") != 0:
        ex.log("starting the local 3-node stack")
        if ex.kafka("start", "--nodes", "3") != 0:
            sys.exit("scripts/kafka start --nodes 3 failed")
        started = True
    os.makedirs(args.out, exist_ok=True)
    runs_dir = os.path.join(args.out, "runs")
    os.makedirs(runs_dir, exist_ok=True)
    begun = time.time()
    try:
        ids = brokers(args.bootstrap)
        if len(ids) < 3:
            print(f"failover: the cluster at {args.bootstrap} has {len(ids)} broker(s) (ids: "
                  f"{', '.join(map(str, ids)) or 'none answered'}); a failover needs at least 3 (replication 3, one "
                  f"killed)", file=sys.stderr)
            return 2
        runs = []
        tag = int(begun)
        for rnd in range(args.rounds):
            order = list(POLICIES) if rnd % 2 == 0 else list(reversed(POLICIES))
            for name in order:
                runs.append(one_run(args, f"{name}" + (f"-r{rnd + 1}" if args.rounds > 1 else ""), POLICIES[name],
                                    runs_dir, tag))
                ex.log(f"failover {runs[-1]['run']}: unavailable {runs[-1]['unavailable_s']:.1f} s, "
                       f"lost {runs[-1]['acked_but_lost']}")
    finally:
        if started:
            ex.kafka("stop", "--nodes", "3")
    _, md = render(args, runs, args.out, time.time() - begun)
    print(md)
    ex.index(args.out)
    print(f"wrote {args.out}/index.html")
    return 0
