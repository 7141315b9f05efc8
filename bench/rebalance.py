"""`scripts/experiment consumer-rebalance`: how long a consumer group stops reading while it grows and shrinks, for
three rebalance protocols.

- classic with librdkafka's default assignor (range, roundrobin: eager, every member gives up all its partitions at
  each rebalance and waits for the new assignment: the "sawtooth" of consumer throughput);
- classic with `partition.assignment.strategy=cooperative-sticky` (incremental: only the partitions that move are
  revoked, the others are read on);
- the consumer protocol of Kafka 4 brokers (`group.protocol=consumer`, KIP-848: the broker assigns, incrementally).

One JMeter run of jmeter-plans/consumer-rebalance.jmx per protocol, on a fresh topic and group each: producers write
a steady rate, 3 consumer threads read from the start, 3 more join over a ramp, and one of the first leaves: its
thread ends a second after the first join, and its consumer closes and leaves the group then. Per run:
records/s per second (from the JTL), every rebalance each thread went through (from the engine's jmeter.log line
"rebalance #N took X ms", its pause: from the revocation, or the subscription, to the first record after the new
assignment), and the group's longest time without a record once it read its first.
"""
import argparse
import csv
import datetime
import os
import re
import subprocess
import sys
import time

import capacity
import experiment as ex

PLAN = "jmeter-plans/consumer-rebalance.jmx"
# The sampler closes a consumer, and so leaves its group, when its JMeter thread ends: the leaving thread's group
# ends at leave.after and its consumer leaves the group then. Its settings are the other members' (an assignor of
# its own would be refused by a classic group).
COOPERATIVE = "partition.assignment.strategy=cooperative-sticky"
PROTOCOLS = [
    ("classic", "classic, default assignor (eager)",
     {"group.protocol": "classic", "leaver.extra.properties": ""}),
    ("cooperative-sticky", "classic, cooperative-sticky",
     {"group.protocol": "classic", "consumer.extra.properties": COOPERATIVE,
      "leaver.extra.properties": COOPERATIVE}),
    ("consumer", "consumer protocol (KIP-848)",
     {"group.protocol": "consumer", "leaver.extra.properties": ""}),
]
PRODUCERS = 4
BATCH = 10
# jmeter.log: "2026-12-03 11:54:49,278 INFO ...: consumer 1/2 of group 'g' on 't': rebalance #2 took 19 ms: ..."; a
# thread is "consumer N/M", its number in its thread group of M (the plan's three groups have 2, 1 and 3 threads).
REBALANCE_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*?(consumer \d+/\d+) of group .*?: "
                            r"rebalance #(\d+) took (\d+) ms")
# The JMeter log's time stamps are local time, as the JTL's epoch milliseconds are read here.
LOG_TIME = "%Y-%m-%d %H:%M:%S,%f"


def run_protocol(args, name, settings, runs_dir, tag):
    """One JMeter run of the plan with one protocol; returns (JTL path, log path, exit code)."""
    run = f"rebalance-{tag}-{name}"
    jtl, log = os.path.join(runs_dir, f"{run}.jtl"), os.path.join(runs_dir, f"{run}.log")
    props = {"kafka.bootstrap": args.bootstrap, "kafka.topic": run, "kafka.group": run, "duration": args.seconds,
             "join.after": args.join_after, "join.ramp": args.join_ramp, "leave.after": args.leave_after,
             # Batches of 10 records: a producer thread has one sample in flight, and single records would make
             # the rate the round trip's, not --rate.
             "target.rate": args.rate / (PRODUCERS * BATCH), "producers": PRODUCERS, "messages.per.sample": BATCH,
             "topic.partitions": args.partitions,
             "sampleresult.timestamp.start": "true", "jmeter.save.saveservice.output_format": "csv",
             "jmeter.save.saveservice.sample_count": "true", "jmeter.save.saveservice.thread_name": "true",
             "kafka.summary.file": os.path.join(runs_dir, f"{run}-summary.json"),
             "kafka.consumer.summary.file": os.path.join(runs_dir, f"{run}-consumer-summary.json"), **settings}
    cmd = ["scripts/jmeter", "-n", "-t", PLAN, "-l", jtl, "-j", log] + [f"-J{k}={v}" for k, v in props.items()]
    with open(os.path.join(runs_dir, f"{run}.out"), "w") as out:
        rc = subprocess.run(cmd, cwd=ex.ROOT, stdout=out, stderr=subprocess.STDOUT).returncode
    return jtl, log, rc


def consumed_per_second(jtl):
    """(start ms, {second since start: records read}, [(end ms, records) of each consumer sample]) from the JTL."""
    with open(jtl, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return None, {}, []
    t0 = min(int(r["timeStamp"]) for r in rows)
    polls = []
    for r in rows:
        if not r["label"].startswith("kafka-consume") or r["responseCode"] != "OK":
            continue  # EMPTY polls carry a sample count of 1 and no record
        polls.append((int(r["timeStamp"]) + int(r["elapsed"]), int(r.get("SampleCount") or 1)))
    per_second = {}
    for end, records in polls:
        per_second[(end - t0) // 1000] = per_second.get((end - t0) // 1000, 0) + records
    return t0, per_second, sorted(polls)


def rebalances(log, t0, end_ms):
    """Every rebalance a consumer thread went through before the load ended: (start s, pause ms, thread, number)."""
    events = []
    with open(log, errors="replace") as f:
        for line in f:
            m = REBALANCE_LINE.match(line)
            if not m:
                continue
            at = datetime.datetime.strptime(m.group(1), LOG_TIME).timestamp() * 1000
            took = int(m.group(4))
            # The end of the test closes every consumer, and the last ones rebalance as the first leave.
            if at <= end_ms:
                events.append(((at - took - t0) / 1000, took, m.group(2), int(m.group(3))))
    return sorted(events)


def longest_gap(polls, first_after_ms):
    """The longest time (ms) between two polls that returned records, from the group's first record on."""
    ends = [end for end, _ in polls if end >= first_after_ms]
    return max((b - a for a, b in zip(ends, ends[1:])), default=None)


def measure(args, name, label, jtl, log, rc):
    t0, per_second, polls = consumed_per_second(jtl) if os.path.exists(jtl) else (None, {}, [])
    if t0 is None:
        return {"protocol": name, "label": label, "exit": rc, "records": 0, "rebalances": 0, "events": []}
    end_ms = t0 + args.seconds * 1000 - 500
    events = rebalances(log, t0, end_ms) if os.path.exists(log) else []
    # Each thread's first assignment is its join; the rebalances after it are what a member reading goes through.
    moves = [e for e in events if e[3] > 1]
    pauses = [e[1] for e in moves]
    joins = [e[1] for e in events if e[3] == 1]
    first_record = polls[0][0] if polls else t0
    return {"protocol": name, "label": label, "exit": rc, "jtl": jtl, "log": log,
            "records": sum(r for _, r in polls), "joins": len(joins), "max_join_ms": max(joins, default=None),
            "rebalances": len(moves), "total_pause_ms": sum(pauses), "max_pause_ms": max(pauses, default=None),
            "longest_gap_ms": longest_gap([p for p in polls if p[0] <= end_ms], first_record),
            "records_per_sec": sum(per_second.values()) / args.seconds,
            "per_second": [per_second.get(s, 0) for s in range(args.seconds)],
            "events": [{"at_s": round(at, 3), "pause_ms": took, "thread": thread, "number": n}
                       for at, took, thread, n in events]}


def render(args, results, out_dir, seconds):
    best = min((r for r in results if r["rebalances"]), key=lambda r: r["total_pause_ms"], default=None)
    parts = [f"{r['label']}: {r['rebalances']} rebalance(s), {ex.fmt(r.get('total_pause_ms'), 0)} ms in all, "
             f"at most {ex.fmt(r.get('max_pause_ms'), 0)} ms" for r in results]
    headline = "; ".join(parts)
    if best:
        headline += f"; least paused: {best['label']}"
    md = ["## consumer-rebalance", "",
          f"Plan `{PLAN}`, {args.seconds} s per protocol, {args.rate:,.0f} records/s produced into "
          f"{args.partitions} partitions; 3 consumer threads from the start, 3 joining from {args.join_after} s over "
          f"{args.join_ramp} s, one leaving at {args.leave_after} s (its thread ends, its consumer leaves the "
          f"group); bootstrap {args.bootstrap}; {seconds:.0f} s in all.", "",
          f"**{headline}.**", "",
          "A rebalance is one consumer thread's assignment changing after its first (that one, its join, is counted "
          "apart); its pause is the engine's, from the revocation to the first record after the new assignment "
          "(0 ms for a thread that gave up no partition and read on). The longest gap is the group's longest time without a record once it had "
          "read its first.", "",
          "| protocol | joins | longest join ms | rebalances | total pause ms | max pause ms | longest gap ms (group) | "
          "records/s | records |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        md.append(f"| {r['label']} | {r.get('joins', 0)} | {ex.fmt(r.get('max_join_ms'), 0)} | {r['rebalances']} | "
                  f"{ex.fmt(r.get('total_pause_ms'), 0)} | "
                  f"{ex.fmt(r.get('max_pause_ms'), 0)} | {ex.fmt(r.get('longest_gap_ms'), 0)} | "
                  f"{ex.fmt(r.get('records_per_sec'), 0)} | {r['records']:,} |")
    md.append("")
    result = {"experiment": "consumer-rebalance", "headline": headline,
              "settings": {"seconds": args.seconds, "rate": args.rate, "partitions": args.partitions,
                           "join_after": args.join_after, "join_ramp": args.join_ramp,
                           "leave_after": args.leave_after, "bootstrap": args.bootstrap, "quick": args.quick},
              "protocols": results, "seconds": round(seconds, 1)}
    ex.write_outputs(out_dir, "consumer-rebalance", result, md)
    chart(args, results, os.path.join(out_dir, "consumer-rebalance.png"))
    return result, "\n".join(md)


def chart(args, results, path):
    plt = ex.pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(len(results), 1, figsize=(11, 2.6 * len(results)), sharex=True, squeeze=False)
    for ax, r in zip(axes[:, 0], results):
        series = r.get("per_second") or []
        ax.plot(range(len(series)), series, color="#1f77b4", linewidth=1.2, label="records/s read")
        ax.axhline(args.rate, color="grey", linewidth=0.8, linestyle=":", label=f"produced {args.rate:,.0f}/s")
        for e in r["events"]:
            if e["number"] > 1 and e["pause_ms"] > 0:  # a join is not a pause of the group
                ax.axvspan(e["at_s"], e["at_s"] + e["pause_ms"] / 1000, color="red", alpha=0.25, linewidth=0)
        # A second apart: the leave's label under the joins' so that they do not overlap.
        for at, text, height in ((args.join_after, "joins", 0.9), (args.leave_after, "one leaves", 0.8)):
            ax.axvline(at, color="black", linewidth=0.8, linestyle="--")
            ax.annotate(text, (at, ax.get_ylim()[1] * height), fontsize=7, xytext=(3, 0), textcoords="offset points")
        ax.set_ylabel("records/s")
        ax.set_title(f"{r['label']}: {r['rebalances']} rebalance(s), max pause {ex.fmt(r.get('max_pause_ms'), 0)} ms "
                     "(red: a thread's pause)", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    axes[-1, 0].set_xlabel("seconds since the run's start")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv):
    ap = argparse.ArgumentParser(
        prog="scripts/experiment consumer-rebalance",
        description=f"Runs {PLAN} once per rebalance protocol (classic with the default assignor, classic with "
                    "cooperative-sticky, the consumer protocol): a consumer group grows from 3 to 6 threads and one "
                    "leaves, under a steady producer rate. Writes consumer-rebalance.md, .json, .png and index.html.")
    ap.add_argument("--seconds", type=int, help="seconds per protocol (default 60; --quick 18)")
    ap.add_argument("--rate", type=capacity.positive("--rate"), default=1000, help="records/s produced (default 1000)")
    ap.add_argument("--partitions", type=int, default=12, help="partitions of each run's topic (default 12)")
    ap.add_argument("--protocols", default=",".join(p[0] for p in PROTOCOLS),
                    help="which to run, comma-separated (default all: " + ", ".join(p[0] for p in PROTOCOLS) + ")")
    ap.add_argument("--bootstrap", default="127.0.0.1:9092", help="the cluster (default the local node; the consumer "
                                                                "protocol needs Kafka 4.0 or newer)")
    ap.add_argument("--quick", action="store_true", help="short runs (CI)")
    ap.add_argument("--out", default=os.path.join(ex.ROOT, "target", "experiments"), help="output folder")
    args = ap.parse_args(argv)
    args.seconds = args.seconds or (18 if args.quick else 60)
    if args.seconds < 18:
        ap.error("--seconds must be at least 18: the group needs time to join, grow, and see a thread leave")
    if args.partitions < 6:
        ap.error("--partitions must be at least 6: six consumer threads each need a partition")
    # The group's changes at fixed shares of the run: joins from a quarter over a sixth. One thread ends a second
    # after the first join: its consumer leaves the group while the later joins rebalance it.
    args.join_after, args.join_ramp = round(args.seconds / 4), round(args.seconds / 6)
    args.leave_after = args.join_after + 1
    chosen = [p for p in PROTOCOLS if p[0] in args.protocols.split(",")]
    unknown = set(args.protocols.split(",")) - {p[0] for p in PROTOCOLS}
    if unknown or not chosen:
        ap.error(f"--protocols: unknown {', '.join(sorted(unknown)) or 'none chosen'}; choose from "
                 + ", ".join(p[0] for p in PROTOCOLS))
    os.makedirs(args.out, exist_ok=True)
    runs_dir = os.path.join(args.out, "runs")
    os.makedirs(runs_dir, exist_ok=True)
    started, tag = time.time(), int(time.time())
    results = []
    for name, label, settings in chosen:
        jtl, log, rc = run_protocol(args, name, settings, runs_dir, tag)
        r = measure(args, name, label, jtl, log, rc)
        ex.log(f"consumer-rebalance {label}: {r['records']:,} records, {r['rebalances']} rebalance(s), total "
               f"{ex.fmt(r.get('total_pause_ms'), 0)} ms, max {ex.fmt(r.get('max_pause_ms'), 0)} ms, exit {rc}")
        results.append(r)
    result, md = render(args, results, args.out, time.time() - started)
    print(md)
    ex.index(args.out)
    print(f"wrote {args.out}/index.html")
    unread = [r["label"] for r in results if not r["records"]]
    if unread:
        print(f"consumer-rebalance: no record was read with {', '.join(unread)} (see the runs' .out and .log in "
              f"{runs_dir})", file=sys.stderr)
        return 2
    return 0
