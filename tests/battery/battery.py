#!/usr/bin/env python3
"""Bad-input battery: hostile or mistaken inputs, each run by a real headless JMeter against the local broker.

Every row is one JMeter run (its own JVM, so a crash is pinned on its row) of a one-sample plan with the producer,
consumer or lag sampler. A row asserts what a user sees: the JTL's response code and a phrase of its response
message, a message short enough to read (echoed values are capped), no secret anywhere in the output, no
hs_err_pid*.log, and JMeter exiting by itself within the row's bound.

How an input reaches the sampler matters, so each row says its route:
  prop  a properties file given with -q (Java's \\uXXXX escapes carry NUL, lone surrogates, several MB),
  argv  a -J option on the command line (raw bytes, decoded by the JVM from the locale),
  csv   a CSV Data Set Config reading a file (invalid UTF-8 bytes decode to U+FFFD),
  jmx   the plan itself (XML character references: only characters XML 1.0 allows, so no NUL and no surrogate).

  battery.py list                 row ids, one per line (BATTERY_ALL=1: also the rows left out of CI, which
                                  repeat a code path another row covers)
  battery.py run ID               runs one row; prints its verdict; exit 0 when the row's checks hold
  battery.py check ID             prints a row's verdict (after run); exit 0 when its checks held
  battery.py tally                inputs, clear, unclear, crashes, hangs over the rows run so far
Environment: BATTERY_OUT (results folder), BATTERY_BOOTSTRAP (plain listener), BATTERY_SASL (SASL_PLAINTEXT
listener), BATTERY_TOPIC (an existing topic with a few records and BATTERY_PARTITIONS partitions).
"""

import csv
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.environ.get("BATTERY_OUT", os.path.join(ROOT, "target", "battery"))
BROKER = os.environ.get("BATTERY_BOOTSTRAP", "127.0.0.1:9092")
SASL = os.environ.get("BATTERY_SASL", "127.0.0.1:9094")
TOPIC = os.environ.get("BATTERY_TOPIC", "battery")
PARTITIONS = int(os.environ.get("BATTERY_PARTITIONS", "4"))
SECRET = "wrong-Pa55word-xyzzy"  # must never appear in any output
UNREACHABLE = "127.0.0.1:1"
# A row whose test (from JMeter's "Running the test!" to "end of test", so JVM start and plan loading, which take
# 3-20 s on a busy 2-core machine, do not count) takes longer than this has hung.
BOUND_S = 20
# JMeter is killed when the whole run exceeds the row's bound by this much.
KILL_AFTER_S = 60
# Longest response message a user should have to read; echoed values are capped well below it.
MESSAGE_CAP = 1500

CLASSES = {
    "producer": "io.kafkanative.jmeter.KafkaProducerSampler",
    "consumer": "io.kafkanative.jmeter.KafkaConsumerSampler",
    "lag": "io.kafkanative.jmeter.KafkaLagSampler",
}
BASE = {
    "producer": {"bootstrap.servers": BROKER, "topic": TOPIC, "timeout.ms": "3000", "record.size": "100"},
    "consumer": {
        "bootstrap.servers": BROKER,
        "topic": TOPIC,
        "group.id": "battery",
        "poll.timeout.ms": "500",
        "timeout.ms": "3000",
        "commit": "none",
    },
    "lag": {"bootstrap.servers": BROKER, "topic": TOPIC, "group.id": "battery", "timeout.ms": "3000"},
}
SASL_WRONG = {
    "bootstrap.servers": SASL,
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": "SCRAM-SHA-512",
    "sasl.username": "jmeter",
    "sasl.password": SECRET,
}
MB = 1024 * 1024


class Row:
    """One input: the sampler, its parameters (over the sampler's base), and what the user must see."""

    def __init__(self, rid, sampler, params, code, phrase, route="prop", bound=BOUND_S, drop=(), ci=True, threads=1):
        self.id, self.sampler, self.params, self.code, self.phrase = rid, sampler, params, code, phrase
        self.route, self.bound, self.drop, self.ci, self.threads = route, bound, drop, ci, threads


def hosts(n):
    return ",".join(f"h{i}.invalid:9092" for i in range(n))


ROWS = [
    # --- lengths: every string that reaches librdkafka or the Kafka protocol ---
    Row("p-client-id-8k-ok", "producer", {"extra.properties": "client.id=" + "c" * 8000}, "OK", "acked"),
    Row("p-client-id-20k", "producer", {"extra.properties": "client.id=" + "c" * 20_500}, "CONFIG_ERROR",
        r"client\.id: 20500 bytes.*at most 16384"),
    Row("p-client-id-32k", "producer", {"extra.properties": "client.id=" + "c" * 32_768}, "CONFIG_ERROR",
        r"client\.id: 32768 bytes.*at most 16384"),
    Row("p-client-id-1m", "producer", {"extra.properties": "client.id=" + "c" * 1_048_575}, "CONFIG_ERROR",
        r"client\.id: 1048575 bytes.*at most 16384"),
    Row("p-client-id-4m", "producer", {"extra.properties": "client.id=" + "c" * (4 * MB)}, "CONFIG_ERROR",
        r"client\.id: 4194304 bytes.*at most 16384", ci=False),
    Row("p-client-id-direct-1m", "producer", {"client.id": "c" * 1_048_575}, "CONFIG_ERROR", r"client\.id: .*at most", ci=False),
    Row("p-topic-1m", "producer", {"topic": "t" * MB}, "CONFIG_ERROR", r"topic: .*at most 249"),
    Row("p-topic-250", "producer", {"topic": "t" * 250}, "CONFIG_ERROR", r"topic: .*at most 249"),
    Row("p-bootstrap-host-1m", "producer", {"bootstrap.servers": "h" * MB + ":9092"}, "CONFIG_ERROR",
        r"bootstrap\.servers: 1048581 bytes is too long"),
    Row("p-bootstrap-host-300", "producer", {"bootstrap.servers": "h" * 300 + ":9092"}, "CONFIG_ERROR",
        r"bootstrap\.servers: .*at most 255"),
    Row("p-sasl-password-1m", "producer", dict(SASL_WRONG, **{"sasl.password": "p" * MB}), "CONFIG_ERROR",
        r"sasl\.password: 1048576 bytes is too long"),
    Row("p-bootstrap-8000-hosts", "producer", {"bootstrap.servers": hosts(8000)}, "CONFIG_ERROR",
        r"bootstrap\.servers: 8000 entries.*at most 100"),
    Row("p-key-2m", "producer", {"key.mode": "fixed", "key": "k" * (2 * MB)}, "MSG_SIZE_TOO_LARGE",
        r"message\.max\.bytes"),
    Row("p-headers-2m", "producer", {"headers": "h=" + "v" * (2 * MB)}, "MSG_SIZE_TOO_LARGE", r"message\.max\.bytes"),
    Row("p-record-size-2m", "producer", {"record.size": str(2 * MB)}, "MSG_SIZE_TOO_LARGE", r"message\.max\.bytes"),
    Row("p-template-4m", "producer", {"value.mode": "template", "value.template": "x" * (4 * MB)},
        "MSG_SIZE_TOO_LARGE", r"message\.max\.bytes"),
    Row("p-unknown-key-1m", "producer", {"extra.properties": "k" * MB + "=1"}, "CONFIG_ERROR", r"unknown property"),
    Row("p-unknown-value-1m", "producer", {"extra.properties": "linger.ms=" + "9" * MB}, "CONFIG_ERROR",
        r"linger\.ms"),
    # --- NUL, surrogates, invalid UTF-8 ---
    Row("p-topic-nul", "producer", {"topic": "bat\u0000tery"}, "CONFIG_ERROR", r"topic: .*(legal|NUL)"),
    Row("p-topic-surrogate", "producer", {"topic": "bat\ud800tery"}, "CONFIG_ERROR", r"topic: .*legal"),
    Row("p-extra-nul", "producer", {"extra.properties": "linger.ms=5\u00006"}, "CONFIG_ERROR", r"NUL"),
    Row("p-headers-nul-key", "producer", {"headers": "k\u0000=v"}, "CONFIG_ERROR", r"headers: .*NUL"),
    Row("p-key-surrogate-ok", "producer", {"key.mode": "fixed", "key": "k\udc00ey"}, "OK", "acked"),
    Row("p-topic-csv-invalid-utf8", "producer", {"topic": b"bat\xc3\x28tery"}, "CONFIG_ERROR", r"topic: .*legal",
        route="csv"),
    Row("p-value-csv-invalid-utf8-ok", "producer", {"value.mode": "jmeter", "value": b"v\xff\xfe\xc3"}, "OK",
        "acked", route="csv"),
    Row("p-topic-argv-bytes", "producer", {"topic": b"bat\xff\xfetery"}, "CONFIG_ERROR", r"topic: .*legal",
        route="argv"),
    Row("p-topic-jmx-emoji", "producer", {"topic": "bat\U0001F600tery"}, "CONFIG_ERROR", r"topic: .*legal",
        route="jmx"),
    Row("p-topic-illegal", "producer", {"topic": "bad topic!"}, "CONFIG_ERROR", r"topic: .*legal"),
    # --- numbers ---
    Row("p-timeout-huge", "producer", {"timeout.ms": "9" * 30}, "CONFIG_ERROR", r"timeout\.ms: .*whole number"),
    Row("p-timeout-negative", "producer", {"timeout.ms": "-1"}, "CONFIG_ERROR", r"timeout\.ms", ci=False),
    Row("p-messages-huge", "producer", {"messages.per.sample": "1000000000000"}, "CONFIG_ERROR",
        r"messages\.per\.sample"),
    Row("p-record-size-huge", "producer", {"record.size": "99999999999999"}, "CONFIG_ERROR", r"record\.size"),
    Row("p-partition-999", "producer", {"partition": "999"}, "CONFIG_ERROR",
        rf"partition: 999 .*{PARTITIONS} partition"),
    Row("p-partition-huge", "producer", {"partition": "99999999999"}, "CONFIG_ERROR", r"partition", ci=False),
    Row("p-target-rate-nan", "producer", {"target.rate": "NaN"}, "CONFIG_ERROR", r"target\.rate"),
    Row("p-target-rate-inf", "producer", {"target.rate": "1e400"}, "CONFIG_ERROR", r"target\.rate", ci=False),
    Row("p-topic-partitions-huge", "producer", {"topic.create": "true", "topic.partitions": "99999999999"},
        "CONFIG_ERROR", r"topic\.partitions"),
    Row("p-linger-huge", "producer", {"linger.ms": "1e99"}, "CONFIG_ERROR", r"linger\.ms", ci=False),
    # --- every enum with a wrong value ---
    Row("p-acks-7", "producer", {"acks": "7"}, "CONFIG_ERROR", r"acks: .*(all|-1, 0, 1)"),
    Row("p-acks-banana", "producer", {"acks": "banana"}, "CONFIG_ERROR", r"acks", ci=False),
    Row("p-policy-wrong", "producer", {"policy": "fastest"}, "CONFIG_ERROR", r"policy"),
    Row("p-scope-wrong", "producer", {"producer.scope": "global"}, "CONFIG_ERROR", r"producer\.scope"),
    Row("p-value-mode-wrong", "producer", {"value.mode": "random2"}, "CONFIG_ERROR", r"value\.mode"),
    Row("p-key-mode-wrong", "producer", {"key.mode": "uuid4"}, "CONFIG_ERROR", r"key\.mode"),
    Row("p-preflight-wrong", "producer", {"preflight": "maybe"}, "CONFIG_ERROR", r"preflight"),
    Row("p-compression-wrong", "producer", {"compression.type": "rar"}, "CONFIG_ERROR", r"compression\.type"),
    Row("p-topic-create-wrong", "producer", {"topic.create": "yes"}, "CONFIG_ERROR", r"topic\.create"),
    Row("p-audit-wrong", "producer", {"audit": "1"}, "CONFIG_ERROR", r"audit", ci=False),
    Row("p-stamp-wrong", "producer", {"stamp.time": "yes"}, "CONFIG_ERROR", r"stamp\.time", ci=False),
    Row("p-partitioner-class-wrong", "producer", {"partitioner.class": "com.acme.MyPartitioner"}, "CONFIG_ERROR",
        r"partitioner"),
    # --- missing things, contradictions ---
    Row("p-value-jmeter-without-value", "producer", {"value.mode": "jmeter"}, "CONFIG_ERROR", r"value"),
    Row("p-payload-file-missing", "producer", {"value.mode": "file", "payload.file": "/nonexistent/battery.bin"},
        "CONFIG_ERROR", r"/nonexistent/battery\.bin"),
    Row("p-missing-topic", "producer", {"topic": "battery-no-such-topic"}, "UNKNOWN_TOPIC_OR_PART",
        r"does not exist"),
    Row("p-missing-bootstrap", "producer", {}, "CONFIG_ERROR", r"bootstrap\.servers: missing",
        drop=("bootstrap.servers",)),
    Row("p-bootstrap-conflict", "producer", {"extra.properties": f"bootstrap.servers={UNREACHABLE}"}, "CONFIG_ERROR",
        r"bootstrap\.servers"),
    Row("p-delivery-timeout-long", "producer", {"delivery.timeout.ms": "120000"}, "CONFIG_ERROR",
        r"longer than timeout\.ms", ci=False),
    Row("p-idempotence-acks1", "producer", {"enable.idempotence": "true", "acks": "1"}, "CONFIG_ERROR",
        r"idempotence", ci=False),
    Row("p-truststore", "producer", {"ssl.truststore.location": "/x.jks"}, "CONFIG_ERROR", r"ssl\.ca\.location", ci=False),
    # --- unreachable, wrong passwords, missing files ---
    Row("p-unreachable", "producer", {"bootstrap.servers": UNREACHABLE}, "TRANSPORT", r"127\.0\.0\.1:1", bound=8),
    Row("p-unreachable-create", "producer", {"bootstrap.servers": UNREACHABLE, "topic.create": "true"}, "TRANSPORT",
        r"127\.0\.0\.1:1", bound=8),
    Row("p-garbage-bootstrap-create", "producer", {"bootstrap.servers": "no such host!!", "topic.create": "true"},
        "(RESOLVE|TRANSPORT|CONFIG_ERROR)", r"bootstrap\.servers|no such host", bound=8),
    # producer.scope=test: the threads wait for the one shared producer; its failure must reach them all at once
    # (before: one after the other, timeout.ms each).
    Row("p-shared-unreachable-20-threads", "producer", {"bootstrap.servers": UNREACHABLE, "producer.scope": "test"},
        "TRANSPORT", r"127\.0\.0\.1:1", bound=8, threads=20),
    Row("p-sasl-wrong-password", "producer", dict(SASL_WRONG), "AUTHENTICATION", r"SASL authentication", bound=10),
    Row("p-sasl-wrong-password-create", "producer", dict(SASL_WRONG, **{"topic.create": "true"}), "AUTHENTICATION",
        r"SASL authentication", bound=10),
    Row("p-jaas-spacing", "producer",
        {"bootstrap.servers": SASL, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
         "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username = "jmeter"'
                             f' password = "{SECRET}";'}, "AUTHENTICATION", r"SASL authentication", bound=10),
    Row("p-jaas-escaped-quote", "producer",
        {"bootstrap.servers": SASL, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
         "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="jmeter" '
                             f'password="{SECRET}\\"q";'}, "AUTHENTICATION", r"SASL authentication", bound=10),
    Row("p-ssl-ca-missing", "producer",
        {"security.protocol": "SSL", "ssl.ca.location": "/nonexistent/battery-ca.pem"}, "CONFIG_ERROR",
        r"/nonexistent/battery-ca\.pem"),
    Row("p-ok", "producer", {}, "OK", "acked"),
    # --- consumer ---
    Row("c-client-id-1m", "consumer", {"extra.properties": "client.id=" + "c" * 1_048_575}, "CONFIG_ERROR",
        r"client\.id: 1048575 bytes.*at most"),
    Row("c-group-1m", "consumer", {"group.id": "g" * MB}, "CONFIG_ERROR", r"group\.id: .*at most 32767"),
    Row("c-group-missing", "consumer", {}, "CONFIG_ERROR", r"group\.id: missing", drop=("group.id",)),
    Row("c-group-nul", "consumer", {"group.id": "g\u0000g"}, "CONFIG_ERROR", r"group\.id: .*NUL"),
    Row("c-topic-1m", "consumer", {"topic": "t" * MB}, "CONFIG_ERROR", r"topic: .*at most 249"),
    Row("c-topic-surrogate", "consumer", {"topic": "\udfffx"}, "CONFIG_ERROR", r"topic: .*legal"),
    Row("c-assignment-dup", "consumer", {"assignment": "0,0,0"}, "CONFIG_ERROR", r"assignment: .*more than once"),
    Row("c-assignment-999", "consumer", {"assignment": "999"}, "CONFIG_ERROR", r"partition 999 does not exist"),
    Row("c-assignment-garbage", "consumer", {"assignment": "x-y"}, "CONFIG_ERROR", r"assignment", ci=False),
    Row("c-assignment-huge", "consumer", {"assignment": "0-99999999999"}, "CONFIG_ERROR", r"assignment"),
    Row("c-commit-wrong", "consumer", {"commit": "always"}, "CONFIG_ERROR", r"commit"),
    Row("c-max-records-huge", "consumer", {"max.records": "99999999999"}, "CONFIG_ERROR", r"max\.records"),
    Row("c-poll-timeout-huge", "consumer", {"poll.timeout.ms": "9" * 25}, "CONFIG_ERROR", r"poll\.timeout\.ms", ci=False),
    Row("c-fail-on-empty-wrong", "consumer", {"fail.on.empty": "maybe"}, "CONFIG_ERROR", r"fail\.on\.empty", ci=False),
    Row("c-check-regex-bad", "consumer", {"check.regex": "(["}, "CONFIG_ERROR", r"check\.regex"),
    Row("c-offset-reset-wrong", "consumer", {"auto.offset.reset": "middle"}, "CONFIG_ERROR", r"auto\.offset\.reset", ci=False),
    Row("c-strategy-wrong", "consumer", {"partition.assignment.strategy": "com.acme.Assignor"}, "CONFIG_ERROR",
        r"partition\.assignment\.strategy", ci=False),
    Row("c-unreachable", "consumer", {"bootstrap.servers": UNREACHABLE}, "TRANSPORT", r"127\.0\.0\.1:1", bound=8),
    Row("c-sasl-wrong-password", "consumer", dict(SASL_WRONG), "AUTHENTICATION", r"SASL authentication", bound=10),
    Row("c-ssl-ca-missing", "consumer", {"security.protocol": "SSL", "ssl.ca.location": "/nonexistent/c-ca.pem"},
        "CONFIG_ERROR", r"/nonexistent/c-ca\.pem"),
    Row("c-missing-topic", "consumer", {"topic": "battery-no-such-topic"}, "UNKNOWN_TOPIC_OR_PART", r"does not exist",
        bound=10),
    # The topic may still be empty when this row runs (rows run in parallel): a clean EMPTY is as good as OK.
    Row("c-ok", "consumer", {}, "OK|EMPTY", r"record"),
    # --- lag ---
    Row("l-client-id-1m", "lag", {"extra.properties": "client.id=" + "c" * 1_048_575}, "CONFIG_ERROR",
        r"client\.id: 1048575 bytes.*at most"),
    Row("l-group-1m", "lag", {"group.id": "g" * MB}, "CONFIG_ERROR", r"group\.id: .*at most 32767"),
    Row("l-group-missing", "lag", {}, "CONFIG_ERROR", r"group\.id: missing", drop=("group.id",)),
    Row("l-windows-zero", "lag", {"lag.windows": "0"}, "CONFIG_ERROR", r"lag\.windows"),
    Row("l-tolerance-huge", "lag", {"lag.tolerance": "1" + "0" * 30}, "CONFIG_ERROR", r"lag\.tolerance"),
    # The lag monitor connects at its first sample (not at open); on a loaded machine this run took up to 9.2 s.
    Row("l-unreachable", "lag", {"bootstrap.servers": UNREACHABLE}, "TRANSPORT", r"127\.0\.0\.1:1", bound=12),
    Row("l-sasl-wrong-password", "lag", dict(SASL_WRONG), "AUTHENTICATION", r"SASL authentication", bound=10),
    Row("l-missing-topic", "lag", {"topic": "battery-no-such-topic"}, "UNKNOWN_TOPIC_OR_PART", r"does not exist",
        bound=10),
]
BY_ID = {r.id: r for r in ROWS}
assert len(BY_ID) == len(ROWS), "duplicate row id"


def java_escape(text):
    """A value for a Java properties file: printable ASCII as is, everything else as \\uXXXX (UTF-16 units)."""
    out = []
    for ch in text:
        o = ord(ch)
        if ch in "\\=:#!":
            out.append("\\" + ch)
        elif 0x20 <= o < 0x7F:
            out.append(ch)
        elif o > 0xFFFF:
            o -= 0x10000
            out.append("\\u%04x\\u%04x" % (0xD800 + (o >> 10), 0xDC00 + (o & 0x3FF)))
        else:
            out.append("\\u%04x" % o)  # NUL and lone surrogates (Python keeps them as code points) included
    return "".join(out)


def plan(row, params, refs):
    """The one-sample plan: a thread group with one thread and one loop, the sampler, and a CSV Data Set if needed."""
    args = []
    for name in params:
        value = refs[name]
        args.append(
            f'<elementProp name="{escape(name)}" elementType="Argument">'
            f'<stringProp name="Argument.name">{escape(name)}</stringProp>'
            f'<stringProp name="Argument.value">{value}</stringProp>'
            f'<stringProp name="Argument.metadata">=</stringProp></elementProp>'
        )
    csv_set = ""
    if row.route == "csv":
        names = ",".join(f"v{i}" for i, n in enumerate(params) if isinstance(row.params.get(n), bytes))
        csv_set = (
            '<CSVDataSet guiclass="TestBeanGUI" testclass="CSVDataSet" testname="csv">'
            f'<stringProp name="filename">{escape(os.path.join(OUT, row.id, "input.csv"))}</stringProp>'
            '<stringProp name="fileEncoding">UTF-8</stringProp>'
            f'<stringProp name="variableNames">{names}</stringProp>'
            '<stringProp name="delimiter">\\t</stringProp><boolProp name="quotedData">false</boolProp>'
            '<boolProp name="recycle">true</boolProp><boolProp name="stopThread">false</boolProp>'
            '<stringProp name="shareMode">shareMode.all</stringProp><boolProp name="ignoreFirstLine">false</boolProp>'
            "</CSVDataSet><hashTree/>"
        )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3"><hashTree>
<TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="battery {escape(row.id)}"/><hashTree>
<ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="row">
<stringProp name="ThreadGroup.on_sample_error">continue</stringProp>
<elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel"
 testclass="LoopController" testname="loop"><stringProp name="LoopController.loops">1</stringProp>
<boolProp name="LoopController.continue_forever">false</boolProp></elementProp>
<stringProp name="ThreadGroup.num_threads">{row.threads}</stringProp><stringProp name="ThreadGroup.ramp_time">0</stringProp>
</ThreadGroup><hashTree>{csv_set}
<JavaSampler guiclass="JavaTestSamplerGui" testclass="JavaSampler" testname="{escape(row.id)}">
<elementProp name="arguments" elementType="Arguments" guiclass="ArgumentsPanel" testclass="Arguments">
<collectionProp name="Arguments.arguments">{"".join(args)}</collectionProp></elementProp>
<stringProp name="classname">{CLASSES[row.sampler]}</stringProp></JavaSampler><hashTree/>
</hashTree></hashTree></hashTree></jmeterTestPlan>
"""


def prepare(row, folder):
    """Writes the plan and the files that carry the row's values by its route; returns extra JMeter arguments."""
    params = {k: v for k, v in BASE[row.sampler].items() if k not in row.drop}
    params.update(row.params)
    refs, props, argv, csv_values = {}, [], [], []
    for i, (name, value) in enumerate(params.items()):
        if isinstance(value, bytes):
            if row.route == "csv":
                refs[name] = f"${{v{i}}}"
                csv_values.append(value)
            else:  # argv: raw bytes on the command line
                refs[name] = f"${{__P(b{i})}}"
                argv.append(b"-Jb%d=" % i + value)
        elif row.route == "jmx" and name in row.params:
            refs[name] = "".join(ch if ch.isascii() else f"&#x{ord(ch):x};" for ch in escape(value))
        else:
            refs[name] = f"${{__P(b{i})}}"
            props.append(f"b{i}={java_escape(value)}")
    with open(os.path.join(folder, "plan.jmx"), "w", encoding="utf-8") as f:
        f.write(plan(row, params, refs))
    with open(os.path.join(folder, "input.properties"), "w", encoding="latin-1") as f:
        f.write("\n".join(props) + "\n")
    if csv_values:
        with open(os.path.join(folder, "input.csv"), "wb") as f:
            f.write(b"\t".join(csv_values) + b"\n")
    return argv


def run(rid):
    row = BY_ID[rid]
    folder = os.path.join(OUT, row.id)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    argv = prepare(row, folder)
    jtl = os.path.join(folder, "result.jtl")
    cmd = [
        os.path.join(ROOT, "scripts", "jmeter").encode(), b"-n", b"-t", b"plan.jmx", b"-q", b"input.properties",
        b"-l", jtl.encode(), b"-j", b"jmeter.log", b"-Jjmeter.save.saveservice.output_format=csv",
        b"-Jkafka.summary.file=" + os.path.join(folder, "summary.json").encode(), *argv,
    ]
    env = dict(os.environ)
    # A quick-starting JVM: this plan sends one sample. hs_err files go to the row's folder.
    env["HEAP"] = "-Xms128m -Xmx512m"
    env["JVM_ARGS"] = f"-XX:TieredStopAtLevel=1 -XX:ErrorFile={folder}/hs_err_pid%p.log"
    start = time.monotonic()
    with open(os.path.join(folder, "jmeter.out"), "wb") as out:
        proc = subprocess.Popen(cmd, cwd=folder, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            rc = proc.wait(timeout=row.bound + KILL_AFTER_S)
            hung = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            rc = proc.wait()
            hung = True
    elapsed = time.monotonic() - start
    return judge(row, folder, jtl, rc, hung, elapsed)


def test_seconds(folder):
    """Seconds from JMeter's "Running the test!" to its "end of test" line, None if it never got there."""
    marks = {}
    path = os.path.join(folder, "jmeter.log")
    if os.path.exists(path):
        for line in open(path, encoding="utf-8", errors="replace"):
            for key, text in (("start", "Running the test!"), ("end", "Notifying test listeners of end of test")):
                if text in line and key not in marks:
                    stamp = line[:23]
                    t = time.mktime(time.strptime(stamp[:19], "%Y-%m-%d %H:%M:%S")) + int(stamp[20:23]) / 1000
                    marks[key] = t
    if "start" in marks and "end" in marks:
        return marks["end"] - marks["start"]
    return None


def judge(row, folder, jtl, rc, hung, elapsed):
    rows = []
    in_test = test_seconds(folder)
    if os.path.exists(jtl):
        csv.field_size_limit(sys.maxsize)
        with open(jtl, newline="", encoding="utf-8", errors="replace") as f:
            rows = list(csv.DictReader(f))
    crashed = bool(glob.glob(os.path.join(folder, "hs_err_pid*.log")) or glob.glob(os.path.join(ROOT, "hs_err_pid*")))
    problems = []
    code = rows[0]["responseCode"] if rows else "(no sample)"
    message = rows[0]["responseMessage"] if rows else ""
    if crashed or (not hung and (rc < 0 or rc >= 128)):
        kind = "crash"
        problems.append(f"JVM crashed (exit {rc}, hs_err file: {crashed})")
    elif hung or in_test is None or in_test > row.bound:
        kind = "hang"
        took = f"{in_test:.1f} s in the test" if in_test is not None else "no end of test"
        problems.append(f"took {took}, {elapsed:.1f} s in all (bound {row.bound} s){' and was killed' if hung else ''}")
    else:
        kind = "clear"
        if not 1 <= len(rows) <= row.threads:
            problems.append(f"{len(rows)} JTL rows, expected {'1' if row.threads == 1 else f'1 to {row.threads}'}")
        if any(not re.fullmatch(row.code, r["responseCode"]) for r in rows[1:]):
            problems.append("the threads' samples do not all carry the same code")
        if not re.fullmatch(row.code, code):
            problems.append(f"code {code}, expected {row.code}")
        if not re.search(row.phrase, message):
            problems.append(f"message lacks /{row.phrase}/")
        if len(message) > MESSAGE_CAP:
            problems.append(f"message of {len(message)} characters (cap {MESSAGE_CAP})")
        if rc != 0:
            problems.append(f"JMeter exit {rc}")
        if problems:
            kind = "unclear"
    for name in ("jmeter.out", "jmeter.log", "result.jtl"):
        path = os.path.join(folder, name)
        if os.path.exists(path) and SECRET.encode() in open(path, "rb").read():
            problems.append(f"the password appears in {name}")
            kind = "unclear" if kind == "clear" else kind
    verdict = {
        "id": row.id, "kind": kind, "seconds": round(elapsed, 1),
        "test_seconds": None if in_test is None else round(in_test, 1), "code": code,
        "message": message[:300] + ("…" if len(message) > 300 else ""), "message_length": len(message),
        "problems": problems,
    }
    with open(os.path.join(folder, "verdict.json"), "w") as f:
        json.dump(verdict, f)
    print(f"{row.id}: {kind} in {verdict['test_seconds']} s ({elapsed:.1f} s with JVM start): {code}: "
          f"{verdict['message'][:200]!r}")
    for p in problems:
        print(f"  - {p}")
    return 0 if not problems else 1


def check(rid):
    path = os.path.join(OUT, rid, "verdict.json")
    if not os.path.exists(path):
        print(f"{rid}: not run")
        return 1
    v = json.load(open(path))
    print(f"{rid}: {v['kind']} in {v.get('test_seconds')} s ({v['seconds']} s with JVM start): {v['code']}: "
          f"{v['message'][:200]!r}")
    for p in v["problems"]:
        print(f"  - {p}")
    return 0 if not v["problems"] else 1


def tally():
    verdicts = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(OUT, "*", "verdict.json")))]
    kinds = {k: sum(v["kind"] == k for v in verdicts) for k in ("clear", "unclear", "crash", "hang")}
    print(f"battery tally: {len(verdicts)} inputs, {kinds['clear']} clear, {kinds['unclear']} unclear, "
          f"{kinds['crash']} crashes, {kinds['hang']} hangs")


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else "list"
    if cmd == "list":
        every = os.environ.get("BATTERY_ALL") == "1"
        print("\n".join(r.id for r in ROWS if r.ci or every))
    elif cmd == "run":
        sys.exit(run(sys.argv[2]))
    elif cmd == "check":
        sys.exit(check(sys.argv[2]))
    elif cmd == "tally":
        tally()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
