"""`scripts/experiment capacity`: the highest producer rate that meets a latency SLO, found by search.

Each step is one JMeter run of a plan whose Kafka Producer paces its samples with `target.rate` (samples per second
per thread, driven through a JMeter property). The rate rises geometrically until a step fails the SLO, then the
runner bisects between the last pass and the first fail. A step is judged on its samples after the warm-up.

Latency is judged from each sample's *intended* start: with `target.rate` a sample has a slot on a fixed schedule,
and a sample that starts late (the previous one was slow) is charged the lateness as well as its own send→ack time.
The engine reports lateness (`schedule_delay_us`) and service time (`latency_us`) as separate histograms over the
whole run, so the combined figure is rebuilt here from the JTL, one row per sample: per thread and sampler the k-th
sample's intended start is the first one's start + k / rate, and its latency from the intended start is
max(start + elapsed − intended, elapsed). The JTL's time stamp is the sample's call (`sampleresult.timestamp.start`
is forced on), before the pacer's wait, so a late sample (no wait) gets its lateness exactly and an early one (it
waited for its slot) gets its service time; the resolution is JMeter's millisecond.
"""
import argparse
import csv
import html
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time

import experiment as ex

# A step shorter than this has too few samples after the warm-up to judge a p99.
MIN_JUDGED_SECONDS = 2.0
# A step that reached less than this share of its target rate (in the judged window) did not sustain it.
RATE_SHARE = 0.9
# With --lag-not-growing: the shipped plan with producers, consumers and a lag monitor.
LAG_PLAN = "jmeter-plans/end-to-end.jmx"
# The lag monitor samples this many times per judged window (at least every LAG_MIN_INTERVAL_MS), and judges the lag
# growing, as its LAG_GROWING verdict does, when it grew in each of LAG_WINDOWS samples in a row by more than
# LAG_TOLERANCE_SHARE of what the producers write between two samples: the noise of consumers polling in batches
# stays below that, a group reading a tenth slower than the producers write does not.
LAG_SAMPLES_PER_STEP = 8
LAG_MIN_INTERVAL_MS = 500
LAG_WINDOWS = 3
LAG_TOLERANCE_SHARE = 0.1
# A JMeter run is ended by Shutdown after a step; the plan's own duration only needs to outlast it.
LAG_PLAN_SLACK_SECONDS = 120
LAG_READING = re.compile(r"lag (-?\d+) \(growth ")


def positive(kind):
    """An argparse type: a number > 0 (with `kind` in the message)."""
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{kind} must be a number, not '{text}'")
        if not math.isfinite(v) or v <= 0:
            raise argparse.ArgumentTypeError(f"{kind} must be greater than 0 (got {text}): no sample is that fast")
        return v
    return parse


def consumer_threads(text):
    """An argparse type for --lag-not-growing: a whole number of consumer threads, 1 or more."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--lag-not-growing takes the consumer group's thread count, a whole "
                                         f"number, not '{text}'")
    if v < 1:
        raise argparse.ArgumentTypeError(f"--lag-not-growing must be at least 1 consumer thread (got {text})")
    return v


def percent(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--error-rate must be a percentage, not '{text}'")
    if not 0 <= v < 100:
        raise argparse.ArgumentTypeError(f"--error-rate must be from 0 to below 100 % (got {text})")
    return v


def quantile(sorted_values, q):
    """Nearest-rank quantile of a sorted list (None when empty)."""
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))]


def plan_threads(plan_text):
    """(threads, property) of the plan's first thread group: a literal count, or `${__P(name,default)}`."""
    m = re.search(r'<stringProp name="ThreadGroup.num_threads">([^<]*)</stringProp>', plan_text)
    if not m:
        return None, None
    value = m.group(1).strip()
    if value.isdigit():
        return int(value), None
    p = re.fullmatch(r"\$\{__P(?:roperty)?\(\s*([\w.\-]+)\s*(?:,\s*(\d+)\s*)?\)\}", value)
    if p:
        return (int(p.group(2)) if p.group(2) else None), p.group(1)
    return None, None


def rate_property_used(plan_text, name):
    """True when a Kafka Producer's target rate field reads JMeter property `name`."""
    for m in re.finditer(r'<stringProp name="targetRate">([^<]*)</stringProp>', plan_text):
        if re.search(r"__P(?:roperty)?\(\s*" + re.escape(name) + r"\s*[,)]", m.group(1)):
            return True
    # A Java Request plan passes it as the argument target.rate.
    for m in re.finditer(r'<stringProp name="Argument.name">target.rate</stringProp>\s*'
                         r'<stringProp name="Argument.value">([^<]*)</stringProp>', plan_text):
        if re.search(r"__P(?:roperty)?\(\s*" + re.escape(name) + r"\s*[,)]", m.group(1)):
            return True
    return False


def element_names(plan_text, element):
    """The names (JTL labels) of the plan's elements of one of our classes, e.g. KafkaConsumer."""
    return {html.unescape(m.group(1)) for m in re.finditer(
        r"<io\.kafkanative\.jmeter\." + element + r'\b[^>]*\btestname="([^"]*)"', plan_text)}


def thread_group_holding(plan_text, element):
    """The text of the first thread group that holds one of our elements, e.g. KafkaConsumer (None if none does)."""
    for group in re.split(r"(?=<ThreadGroup\b)", plan_text)[1:]:
        if f"<io.kafkanative.jmeter.{element} " in group:
            return group
    return None


def lag_interval_ms(args):
    return max(LAG_MIN_INTERVAL_MS, round(args.step_seconds * 1000 / LAG_SAMPLES_PER_STEP))


def lag_tolerance(args, rate):
    """Records the lag may grow by between two lag samples without counting as growth (see LAG_TOLERANCE_SHARE)."""
    return max(1, round(LAG_TOLERANCE_SHARE * rate * lag_interval_ms(args) / 1000))


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_step(args, rate, index, tag, runs_dir):
    """One JMeter run at `rate` records/s, stopped (Shutdown) after warm-up + step seconds; returns its row."""
    mps = args.messages_per_sample
    per_thread = rate / (args.threads * mps)
    name = f"capacity-{tag}-{index:02d}"
    jtl = os.path.join(runs_dir, f"{name}.jtl")
    log_file = os.path.join(runs_dir, f"{name}.log")
    summary_file = os.path.join(runs_dir, f"{name}-summary.json")
    # JMeter listens for Shutdown on a UDP port; a port of this step's own, never another JMeter's default 4445.
    port = free_udp_port()
    props = {
        "kafka.bootstrap": args.bootstrap, "kafka.topic": args.topic, args.rate_property: f"{per_thread:.6g}",
        "sampleresult.timestamp.start": "true", "jmeter.save.saveservice.sample_count": "true",
        "jmeter.save.saveservice.output_format": "csv", "kafka.summary.file": summary_file,
        "kafka.consumer.summary.file": os.path.join(runs_dir, f"{name}-consumer-summary.json"),
        "jmeterengine.nongui.port": port, "jmeterengine.nongui.maxport": port,
    }
    if args.threads_property:
        props[args.threads_property] = args.threads
    if args.lag_consumers:
        # A topic and a group of the step's own: the step's lag starts at 0, not at the previous step's backlog. The
        # lag monitor starts sampling when the warm-up ends, and judges the step's rate with its own verdict.
        props.update({"kafka.topic": f"{args.topic}-{index:02d}", "kafka.group": name,
                      "lag.delay": math.ceil(args.warmup), "lag.interval.ms": lag_interval_ms(args),
                      "lag.windows": LAG_WINDOWS, "lag.tolerance": lag_tolerance(args, rate)})
        if args.consumers_property:
            props[args.consumers_property] = args.lag_consumers
    if args.plan == LAG_PLAN:
        # The plan's own pacing timer is set out of the way (the rate is target.rate's), and its checks off: a step
        # is judged on latency, errors and lag, not on the audit.
        props.update({"record.size": args.record_size, "messages.per.sample": mps, "topic.partitions": args.partitions,
                      "duration": math.ceil(args.warmup + args.step_seconds) + LAG_PLAN_SLACK_SECONDS, "drain": 0,
                      "producer.samples.per.minute": 10 ** 9, "audit": "false", "check.sequence": "false"})
        if args.extra_properties:
            props["extra.properties"] = args.extra_properties
    if args.plan == ex.PRODUCER_PLAN:
        # Loops enough for twice the step, so a late schedule never runs out first; the step ends by Shutdown.
        props.update({"record.size": args.record_size, "messages.per.sample": mps, "rampup": 0,
                      "loops": max(1, math.ceil(per_thread * (args.warmup + args.step_seconds) * 2) + 10),
                      "acks": args.acks, "topic.partitions": args.partitions})
        if args.extra_properties:
            props["extra.properties"] = args.extra_properties
    for kv in args.prop:
        k, _, v = kv.partition("=")
        props[k] = v
    for f in (jtl, summary_file):
        if os.path.exists(f):
            os.remove(f)
    cmd = ["scripts/jmeter", "-n", "-t", args.plan, "-l", jtl, "-j", log_file] + [f"-J{k}={v}" for k, v in props.items()]
    started = time.time()
    with open(os.path.join(runs_dir, f"{name}.out"), "w") as out:
        # A session of its own: bin/jmeter runs java as its child, and a stop must reach the JVM too.
        proc = subprocess.Popen(cmd, cwd=ex.ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        load_start = None
        shutdown_sent = False
        while proc.poll() is None:
            time.sleep(0.2)
            if load_start is None and os.path.exists(log_file):
                with open(log_file, errors="replace") as lf:
                    if "All thread groups have been started" in lf.read():
                        load_start = time.time()
            if load_start and not shutdown_sent and time.time() - load_start >= args.warmup + args.step_seconds:
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                    s.sendto(b"Shutdown", ("127.0.0.1", port))
                shutdown_sent = True
            if time.time() - started > 120 + 3 * (args.warmup + args.step_seconds):
                # Shutdown was not heard (or the JVM hangs): SIGTERM, and JMeter's shutdown hook still reports.
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(30)
    took = time.time() - started
    try:
        with open(summary_file) as f:
            summary = json.load(f)
    except (OSError, ValueError):
        summary = None
    row = {"step": index, "rate": rate, "per_thread_rate": per_thread, "threads": args.threads,
           "messages_per_sample": mps, "exit": proc.returncode, "seconds": round(took, 1), "jtl": jtl,
           "props": {k: v for k, v in props.items() if "password" not in k.lower()}}
    try:
        with open(jtl, newline="") as f:
            samples = list(csv.DictReader(f))
    except OSError:
        samples = []
    # The consumers' and the lag monitor's samples are not the producers': they are judged apart.
    producers = [r for r in samples if r.get("label") not in args.consumer_labels | args.lag_labels]
    row.update(judge_jtl(producers, per_thread, args.warmup))
    if args.lag_consumers:
        row.update(judge_lag([r for r in samples if r.get("label") in args.lag_labels], producers, args.warmup))
    row.update(engine_figures(summary))
    return row


def judge_lag(lag_rows, producer_rows, warmup):
    """The lag monitor's readings after the warm-up: the lag at the first and last, and whether any found it growing."""
    if not producer_rows:
        return {"lag_readings": 0}
    judged_from = min(int(r["timeStamp"]) for r in producer_rows) + warmup * 1000
    readings, first_error = [], None
    for r in sorted(lag_rows, key=lambda r: int(r["timeStamp"])):
        if int(r["timeStamp"]) < judged_from:
            continue
        message = r.get("responseMessage") or ""
        m = LAG_READING.search(message)
        # A partition without a commit is counted from its first offset: the group is still starting, not behind.
        if m is None or "(no commit)" in message:
            first_error = first_error or f"{r.get('responseCode')}: {message}"
            continue
        readings.append((int(m.group(1)), r.get("responseCode") == "LAG_GROWING"))
    if not readings:
        return {"lag_readings": 0, "lag_first_error": first_error}
    return {"lag_readings": len(readings), "lag_start": readings[0][0], "lag_end": readings[-1][0],
            "lag_growing": any(growing for _, growing in readings), "lag_first_error": first_error}


def judge_jtl(rows, per_thread_rate, warmup):
    """Per-sample figures of the judged window (after the warm-up) from a CSV JTL's producer samples."""
    if not rows:
        return {"samples": 0, "rows": 0}
    interval_ms = 1000.0 / per_thread_rate
    streams = {}
    for r in rows:
        streams.setdefault((r.get("threadName"), r.get("label")), []).append(r)
    t0 = min(int(r["timeStamp"]) for r in rows)
    judged_from = t0 + warmup * 1000
    intended_lat, service, first_error = [], [], None
    messages = errors = 0
    first_start = last_end = None
    all_failed = all(r.get("success") != "true" for r in rows)
    for stream in streams.values():
        stream.sort(key=lambda r: int(r["timeStamp"]))
        s0 = int(stream[0]["timeStamp"])
        for k, r in enumerate(stream):
            ts, el = int(r["timeStamp"]), int(r["elapsed"])
            count = int(r.get("SampleCount") or 1)
            failed = int(r.get("ErrorCount") or (0 if r.get("success") == "true" else count))
            if first_error is None and r.get("success") != "true":
                first_error = f"{r.get('responseCode')}: {r.get('failureMessage') or r.get('responseMessage')}"
            intended = s0 + k * interval_ms
            # The warm-up is wall time: a sample that started after it is judged, however far behind its slot.
            if ts < judged_from:
                continue
            messages += count
            errors += failed
            first_start = ts if first_start is None else min(first_start, ts)
            last_end = ts + el if last_end is None else max(last_end, ts + el)
            service.append(el)
            intended_lat.append(max(ts + el - intended, el))
    intended_lat.sort()
    service.sort()
    window = (last_end - first_start) / 1000.0 if messages and last_end > first_start else 0
    return {
        "samples": len(service), "messages": messages, "errors": errors, "all_failed": all_failed,
        "first_error": first_error, "judged_seconds": round(window, 2),
        "achieved_rate": (messages - errors) / window if window else None,
        "error_pct": 100.0 * errors / messages if messages else None,
        "p50_ms": quantile(intended_lat, 0.50), "p99_ms": quantile(intended_lat, 0.99),
        "service_p50_ms": quantile(service, 0.50), "service_p99_ms": quantile(service, 0.99),
        "service_mean_ms": sum(service) / len(service) if service else None,
    }


def engine_figures(summary):
    """What the engine's summary adds (whole run, warm-up included): µs quantiles, schedule delay, breakdown."""
    if not summary:
        return {"summary": False}
    g = summary.get("generator") or {}
    b = summary.get("breakdown") or {}
    d = summary.get("schedule_delay_us") or {}
    return {"summary": True, "engine_p99_ms": ex.ms((summary.get("latency_us") or {}).get("p99")),
            "schedule_delay_p99_ms": ex.ms(d.get("p99")), "throttle_ms": b.get("throttle_ms"),
            "rtt_ms": b.get("rtt_ms"), "queue_ms": b.get("queue_ms"),
            "machine_cpu": (g.get("machine_cpu_pct") or {}).get("mean"),
            "process_cpu": (g.get("process_cpu_pct") or {}).get("mean"),
            "gc_pct": (g.get("gc") or {}).get("pause_pct"), "errors_by_code": summary.get("errors")}


def verdict(row, args):
    """(passed, reasons) of one step against the SLO."""
    reasons = []
    if not row.get("samples"):
        return False, ["no sample after the warm-up"]
    if row["p99_ms"] is not None and row["p99_ms"] > args.p99:
        reasons.append(f"p99 {row['p99_ms']:.0f} ms > {args.p99:g} ms")
    if row["error_pct"] is not None and row["error_pct"] > args.error_rate:
        reasons.append(f"errors {row['error_pct']:.2f} % > {args.error_rate:g} %")
    if row["achieved_rate"] is not None and row["achieved_rate"] < RATE_SHARE * row["rate"]:
        reasons.append(f"reached {row['achieved_rate']:,.0f}/s of {row['rate']:,.0f}/s")
    if args.lag_consumers:
        if not row.get("lag_readings"):
            reasons.append(f"no consumer lag read after the warm-up ({row.get('lag_first_error') or 'no lag sample'})")
        elif row["lag_growing"]:
            reasons.append(f"consumer lag growing ({row['lag_start']:,} → {row['lag_end']:,} records)")
    return not reasons, reasons


def bounded_by(row, args):
    """What stopped the first failing step, with the evidence."""
    if row is None:
        return "not reached: every rate tried passed (raise --max-rate)"
    if row.get("lag_growing") and all(r.startswith("consumer lag") for r in row.get("reasons", [])):
        return (f"consumer lag growing: {args.lag_consumers} consumer thread(s) read less than the producers wrote "
                f"(lag {row['lag_start']:,} → {row['lag_end']:,} records over the judged window)")
    if row.get("throttle_ms"):
        return f"the broker's quota: it throttled the producer ({row['throttle_ms']:.0f} ms per request)"
    if row.get("machine_cpu") is not None and row["machine_cpu"] >= 90:
        return f"machine CPU ({row['machine_cpu']:.0f}% busy; the generator and broker share the cores)"
    if row.get("error_pct") and row["error_pct"] > args.error_rate:
        return f"errors ({row['error_pct']:.2f} %: {row.get('first_error')})"
    sp99 = row.get("service_p99_ms")
    if sp99 is not None and sp99 > args.p99:
        return f"service time: send→ack p99 {sp99:.0f} ms alone exceeds the SLO (broker or network)"
    mean = row.get("service_mean_ms")
    if mean:
        limit = args.threads * args.messages_per_sample * 1000.0 / max(mean, 0.5)
        if limit < 1.3 * row["rate"]:
            return (f"the generator's threads: {args.threads} threads × {args.messages_per_sample} record(s) "
                    f"per sample ÷ {mean:.1f} ms service ≈ {limit:,.0f}/s, one sample in flight each (raise --threads)")
    return "queueing: service times are within the SLO but samples started ever later (the rate is not sustained)"


def search(args, runs_dir, tag):
    """The steps: geometric up from --start-rate, bisect between the last pass and first fail."""
    steps = []

    def step(rate):
        row = run_step(args, rate, len(steps) + 1, tag, runs_dir)
        row["passed"], row["reasons"] = verdict(row, args)
        steps.append(row)
        ex.log(f"capacity step {row['step']}: {rate:,.0f} records/s -> "
               f"{'PASS' if row['passed'] else 'FAIL ' + '; '.join(row['reasons'])} "
               f"(p99 {ex.fmt(row.get('p99_ms'), 0)} ms from intended, {ex.fmt(row.get('service_p99_ms'), 0)} ms "
               f"service, {ex.fmt(row.get('achieved_rate'), 0)}/s, {row['seconds']:.0f} s)")
        if row.get("all_failed"):
            raise AllFailed(row)
        if row.get("rows") == 0:
            row["first_error"] = (f"JMeter wrote no sample (exit {row['exit']}; its output: "
                                  f"{row['jtl'][:-4]}.out, log {row['jtl'][:-4]}.log)")
            raise AllFailed(row)
        return row["passed"]

    rate = args.start_rate
    lo = hi = None
    if step(rate):
        lo = rate
        while lo * args.factor <= args.max_rate:
            rate = lo * args.factor
            if step(rate):
                lo = rate
            else:
                hi = rate
                break
    else:
        hi = rate
        for _ in range(args.down_steps):
            rate = hi / args.factor
            if step(rate):
                lo = rate
                break
            hi = rate
    if lo is not None and hi is not None:
        for _ in range(args.bisections):
            if hi / lo <= 1 + args.resolution:
                break
            mid = math.sqrt(lo * hi)
            if step(mid):
                lo = mid
            else:
                hi = mid
    return steps, lo, hi


class AllFailed(Exception):
    """A step in which every sample failed: the plan or the cluster is broken, not slow."""

    def __init__(self, row):
        super().__init__(row.get("first_error"))
        self.row = row


def render(args, steps, lo, hi, out_dir, seconds):
    knee = max((s for s in steps if s["passed"]), key=lambda s: s["rate"], default=None)
    fail_above = min((s for s in steps if not s["passed"] and (knee is None or s["rate"] > knee["rate"])),
                     key=lambda s: s["rate"], default=None)
    slo = f"p99 ≤ {args.p99:g} ms from the intended send time, errors ≤ {args.error_rate:g} %"
    if args.lag_consumers:
        slo += f", the lag of {args.lag_consumers} consumer thread(s) not growing"
    if knee:
        headline = (f"knee {knee['rate']:,.0f} records/s ({slo}): p50 {ex.fmt(knee['p50_ms'], 0)} / p99 "
                    f"{ex.fmt(knee['p99_ms'], 0)} ms from intended, service p99 {ex.fmt(knee['service_p99_ms'], 0)} ms; "
                    f"bounded by {bounded_by(fail_above, args)}")
    else:
        lowest = min(steps, key=lambda s: s["rate"])
        headline = (f"no rate met the SLO ({slo}): the lowest tried, {lowest['rate']:,.0f} records/s, failed: "
                    f"{'; '.join(lowest['reasons'])}")
    md = ["## capacity", "", f"Plan `{args.plan}`, {args.threads} threads, {args.messages_per_sample} record(s) per "
          f"sample" + (f", {args.record_size} B records" if args.plan in (ex.PRODUCER_PLAN, LAG_PLAN) else "") +
          f", bootstrap {args.bootstrap}; each step {args.step_seconds:g} s judged after {args.warmup:g} s warm-up; "
          f"search: ×{args.factor:g} up, then bisect to {args.resolution * 100:.0f} %; {seconds:.0f} s in all.", "",
          f"**{headline}.**", "",
          "Latency *from intended* is each sample's send→ack time plus how late it started against its "
          "`target.rate` slot (from the JTL, ms resolution); *service* is send→ack alone.", "",
          "| step | target records/s | reached /s | p50 ms (intended) | p99 ms (intended) | p50 ms (service) | "
          "p99 ms (service) | errors % | throttle ms | machine CPU % |" + (" consumer lag |" if args.lag_consumers else "")
          + " verdict |",
          "|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if args.lag_consumers else "")]
    if args.lag_consumers:
        md[6:6] = [f"Beside the producers, {args.lag_consumers} consumer thread(s) read each step's own topic, and the "
                   f"lag monitor samples the group's lag every {lag_interval_ms(args)} ms after the warm-up: the lag "
                   f"is *growing* when it grew in each of {LAG_WINDOWS} samples in a row by more than "
                   f"{LAG_TOLERANCE_SHARE * 100:.0f} % of what the producers write between two samples. The lag column "
                   f"is the first and the last reading of the judged window.", ""]
    for s in steps:
        lag = ""
        if args.lag_consumers:
            lag = (f" {s['lag_start']:,} → {s['lag_end']:,} |" if s.get("lag_readings") else " – |")
        md.append(f"| {s['step']} | {s['rate']:,.0f} | {ex.fmt(s.get('achieved_rate'), 0)} | {ex.fmt(s.get('p50_ms'), 0)} | "
                  f"{ex.fmt(s.get('p99_ms'), 0)} | {ex.fmt(s.get('service_p50_ms'), 0)} | "
                  f"{ex.fmt(s.get('service_p99_ms'), 0)} | {ex.fmt(s.get('error_pct'), 2)} | "
                  f"{ex.fmt(s.get('throttle_ms'), 0)} | {ex.fmt(s.get('machine_cpu'), 0)} |{lag} "
                  f"{'pass' if s['passed'] else 'FAIL: ' + '; '.join(s['reasons'])} |")
    md.append("")
    result = {"experiment": "capacity", "headline": headline,
              "slo": {"p99_ms": args.p99, "error_rate_pct": args.error_rate,
                      "lag_not_growing_consumers": args.lag_consumers},
              "knee": None if not knee else {k: knee.get(k) for k in (
                  "rate", "achieved_rate", "p50_ms", "p99_ms", "service_p50_ms", "service_p99_ms", "error_pct")},
              "bounded_by": bounded_by(fail_above, args) if knee else None,
              "lowest_tried": min(s["rate"] for s in steps), "last_pass": lo, "first_fail": hi,
              "settings": {"plan": args.plan, "threads": args.threads, "record_size": args.record_size,
                           "messages_per_sample": args.messages_per_sample, "step_seconds": args.step_seconds,
                           "warmup_seconds": args.warmup, "factor": args.factor, "bootstrap": args.bootstrap,
                           "rate_property": args.rate_property, "quick": args.quick,
                           "consumers": args.lag_consumers},
              "seconds": round(seconds, 1), "steps": steps}
    ex.write_outputs(out_dir, "capacity", result, md)
    chart(args, steps, knee, os.path.join(out_dir, "capacity.png"))
    return result, "\n".join(md)


def chart(args, steps, knee, path):
    plt = ex.pyplot()
    if plt is None:
        return
    s = sorted(steps, key=lambda r: r["rate"])
    x = [r["rate"] for r in s]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for key, label, style in [("p99_ms", "p99 from intended send time", "o-"), ("service_p99_ms", "p99 service time", "s--"),
                              ("p50_ms", "p50 from intended", "o:"), ("service_p50_ms", "p50 service", "s:")]:
        a1.plot(x, [max(r.get(key) or 0, 0.5) for r in s], style, label=label, markersize=4)
    for r in s:
        a1.plot([r["rate"]], [max(r.get("p99_ms") or 0, 0.5)], "o", color="green" if r["passed"] else "red", markersize=7,
                fillstyle="none")
    a1.axhline(args.p99, color="black", linewidth=1, label=f"SLO p99 {args.p99:g} ms")
    if knee:
        a1.axvline(knee["rate"], color="green", linewidth=1, linestyle="--", label=f"knee {knee['rate']:,.0f}/s")
    a1.set_xscale("log")
    a1.set_yscale("log")
    a1.set_xlabel("target rate, records/s")
    a1.set_ylabel("latency, ms (log)")
    a1.set_title("latency against rate (green: pass, red: fail)", fontsize=10)
    a1.legend(fontsize=7)
    a2.plot(x, x, color="grey", linewidth=1, label="target")
    a2.plot(x, [r.get("achieved_rate") or 0 for r in s], "o-", label="reached")
    a2.set_xscale("log")
    a2.set_yscale("log")
    a2.set_xlabel("target rate, records/s")
    a2.set_ylabel("records/s reached (judged window)")
    a2.set_title("reached against target", fontsize=10)
    a2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def check_lag_plan(ap, args, plan_text):
    """Refuses a --lag-not-growing the plan cannot judge; sets the property that takes the consumer thread count."""
    missing = [what for what, names in (("Kafka Consumer", args.consumer_labels), ("Kafka Lag Monitor", args.lag_labels))
               if not names]
    if missing:
        ap.error(f"--lag-not-growing needs a consumer group and its lag beside the producers, and the plan {args.plan} "
                 f"has no {' nor '.join(missing)}: add them (reading ${{__P(kafka.topic)}} as group "
                 f"${{__P(kafka.group)}}), or leave --plan out for {LAG_PLAN}")
    if args.plan == LAG_PLAN and args.lag_consumers > args.partitions:
        ap.error(f"--lag-not-growing {args.lag_consumers}: more consumer threads than the topic's {args.partitions} "
                 f"partitions (--partitions) leaves threads without a partition to read")
    count, prop = plan_threads(thread_group_holding(plan_text, "KafkaConsumer"))
    if prop:
        args.consumers_property = prop
    elif count is None:
        ap.error("the plan's consumer thread count is neither a number nor ${__P(name,default)}: --lag-not-growing "
                 "cannot set it")
    elif count != args.lag_consumers:
        ap.error(f"the plan's consumer thread group has {count} threads (a fixed number): --lag-not-growing "
                 f"{args.lag_consumers} cannot change it")


def main(argv):
    ap = argparse.ArgumentParser(
        prog="scripts/experiment capacity",
        description="Finds the highest producer rate meeting a latency SLO judged from the intended send time: steps "
                    "target.rate up geometrically, then bisects between the last pass and the first fail. Writes "
                    "capacity.md, capacity.json, capacity.png and index.html.")
    ap.add_argument("--p99", type=positive("--p99"), required=True, help="SLO: p99 latency in ms, from the intended send time")
    ap.add_argument("--error-rate", type=percent, default=0.1, help="SLO: failed records in %% (default 0.1)")
    ap.add_argument("--lag-not-growing", type=consumer_threads, dest="lag_consumers", metavar="CONSUMERS",
                    help="SLO: a consumer group of CONSUMERS threads reads the topic beside the producers, and its "
                         f"lag must not grow over a step (default plan then {LAG_PLAN}; your own plan needs a Kafka "
                         "Consumer and a Kafka Lag Monitor)")
    ap.add_argument("--record-size", type=int, default=1024, help="bytes per record (the shipped plan; default 1024)")
    ap.add_argument("--plan",
                    help="your own plan (default: the shipped producer plan); it should run longer than a step "
                         "(loops -1 or a long duration): each step is ended by the runner")
    ap.add_argument("--rate-property", default="target.rate",
                    help="JMeter property the plan's Kafka Producer takes its target rate from (samples/s per thread)")
    ap.add_argument("--threads", type=int, help="threads (default 16; your plan: its count, or this through its "
                                                 "${__P(name)} property)")
    ap.add_argument("--messages-per-sample", type=int, default=1, help="records per sample (the shipped plan)")
    ap.add_argument("--acks", default="1", help="acks (the shipped plan; default 1)")
    ap.add_argument("--partitions", type=int, default=16, help="partitions of the topic it creates (shipped plan)")
    ap.add_argument("--topic", help="topic (default a new one per search)")
    ap.add_argument("--extra-properties", help="client properties for the shipped plan, e.g. client.id=x")
    ap.add_argument("--prop", action="append", default=[], metavar="NAME=VALUE", help="more -J properties")
    ap.add_argument("--start-rate", type=positive("--start-rate"), help="first step, records/s (default 1000)")
    ap.add_argument("--max-rate", type=positive("--max-rate"), default=2_000_000, help="highest rate to try")
    ap.add_argument("--factor", type=float, default=2.0, help="geometric step (default 2)")
    ap.add_argument("--resolution", type=float, default=0.05, help="bisect until last fail / last pass ≤ 1 + this")
    ap.add_argument("--bisections", type=int, help="most bisection steps (default 5; --quick 2)")
    ap.add_argument("--down-steps", type=int, default=2, help="steps below the first rate when it fails (default 2)")
    ap.add_argument("--step-seconds", type=positive("--step-seconds"), help="judged seconds per step (default 20; --quick 6)")
    ap.add_argument("--warmup", type=float, help="seconds discarded at each step's start (default 12, longer than the 11 s over which a Kafka quota averages, so its burst allowance is spent before judging; --quick 2)")
    ap.add_argument("--bootstrap", default="127.0.0.1:9092", help="the cluster (default the local node)")
    ap.add_argument("--quick", action="store_true", help="short steps, fewer bisections (CI)")
    ap.add_argument("--out", default=os.path.join(ex.ROOT, "target", "experiments"), help="output folder")
    args = ap.parse_args(argv)
    args.step_seconds = args.step_seconds or (6 if args.quick else 20)
    args.warmup = args.warmup if args.warmup is not None else (2 if args.quick else 12)
    args.bisections = args.bisections if args.bisections is not None else (2 if args.quick else 5)
    args.start_rate = args.start_rate or 1000
    if args.factor <= 1:
        ap.error("--factor must be greater than 1")
    if args.step_seconds < MIN_JUDGED_SECONDS:
        ap.error(f"--step-seconds must be at least {MIN_JUDGED_SECONDS:g}: a p99 needs samples to judge")
    shipped = LAG_PLAN if args.lag_consumers else ex.PRODUCER_PLAN
    args.plan = args.plan or shipped
    plan_path = os.path.join(ex.ROOT, args.plan) if not os.path.isabs(args.plan) else args.plan
    try:
        with open(plan_path, errors="replace") as f:
            plan_text = f.read(10 * 1024 * 1024)
    except OSError as e:
        ap.error(f"cannot read the plan {args.plan}: {e.strerror}")
    args.plan = plan_path if args.plan != shipped else shipped
    if not rate_property_used(plan_text, args.rate_property):
        ap.error(f"the plan {args.plan} has no Kafka Producer whose target rate reads the property "
                 f"'{args.rate_property}': set its Target rate field to ${{__P({args.rate_property},)}} (samples/s per "
                 f"thread) so the search can drive it, or name that property with --rate-property")
    count, prop = plan_threads(plan_text)
    if prop:
        args.threads_property = prop
        args.threads = args.threads or 16
    elif count:
        if args.threads and args.threads != count:
            ap.error(f"the plan's thread group has {count} threads (a fixed number): --threads {args.threads} cannot "
                     f"change it")
        args.threads_property, args.threads = None, count
    else:
        ap.error("the plan's thread count is neither a number nor ${__P(name,default)}: the rate per thread is unknown")
    if args.threads < 1:
        ap.error("--threads must be at least 1")
    args.consumer_labels = element_names(plan_text, "KafkaConsumer")
    args.lag_labels = element_names(plan_text, "KafkaLagMonitor")
    args.consumers_property = None
    if args.lag_consumers:
        check_lag_plan(ap, args, plan_text)
    args.topic = args.topic or f"capacity-{int(time.time())}"
    os.makedirs(args.out, exist_ok=True)
    runs_dir = os.path.join(args.out, "runs")
    os.makedirs(runs_dir, exist_ok=True)
    tag = f"{int(time.time())}"
    started = time.time()
    try:
        steps, lo, hi = search(args, runs_dir, tag)
    except AllFailed as e:
        print(f"capacity: every sample of step {e.row['step']} ({e.row['rate']:,.0f} records/s) failed, so the search "
              f"stopped: {e.row.get('first_error')} (JTL {e.row['jtl']})", file=sys.stderr)
        return 2
    result, md = render(args, steps, lo, hi, args.out, time.time() - started)
    print(md)
    ex.index(args.out)
    print(f"wrote {args.out}/index.html")
    return 0
