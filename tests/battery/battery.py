#!/usr/bin/env python3
"""Bad-input battery: hostile or mistaken inputs, each run by a real headless JMeter against the local broker.

Every row is one JMeter run (its own JVM, so a crash is pinned on its row) of a one-sample plan with the producer,
consumer or lag sampler. A row asserts what a user sees: the JTL's response code and a phrase of its response
message, a message short enough to read (echoed values are capped), no secret anywhere in the output, no
hs_err_pid*.log, no file in the row's folder changed or added but JMeter's outputs, and JMeter exiting by itself
within the row's bound.

How an input reaches the sampler matters, so each row says its route:
  prop  a properties file given with -q (Java's \\uXXXX escapes carry NUL, lone surrogates, several MB),
  argv  a -J option on the command line (raw bytes, decoded by the JVM from the locale),
  csv   a CSV Data Set Config reading a file (invalid UTF-8 bytes decode to U+FFFD),
  jmx   the plan itself (XML character references: only characters XML 1.0 allows, so no NUL and no surrogate),
  element  a plan of Kafka Connection and Kafka Producer elements (camelCase properties, values as typed).

  battery.py list                 row ids, one per line (BATTERY_ALL=1: also the rows left out of CI, which
                                  repeat a code path another row covers)
  battery.py run ID               runs one row; prints its verdict; exit 0 when the row's checks hold
  battery.py check ID             prints a row's verdict (after run); exit 0 when its checks held
  battery.py tally                inputs, clear, unclear, crashes, hangs, files harmed over the rows run so far
Environment: BATTERY_OUT (results folder), BATTERY_BOOTSTRAP (plain listener), BATTERY_SASL (SASL_PLAINTEXT
listener), BATTERY_TOPIC (an existing topic with a few records and BATTERY_PARTITIONS partitions).
"""

import contextlib
import csv
import glob
import hashlib
import http.server
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
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
FIFO = object()  # a fixture that is a named pipe: reading it must not block the JMeter thread
# The broker's real SASL password (scripts/kafka): with a trailing space it must be refused, and never be echoed.
REAL_PASSWORD = "jmeter-secret"
SASL_RIGHT = dict(SASL_WRONG, **{"sasl.password": REAL_PASSWORD + " "})
AVSC = b'{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}'
# What JMeter writes into a row's folder; any other new file there, or a change to a fixture, is a file harmed.
OUTPUTS = {"result.jtl", "jmeter.log", "jmeter.out", "summary.json", "consumer-summary.json", "verdict.json"}


class Row:
    """One input: the sampler, its parameters (over the sampler's base), and what the user must see."""

    def __init__(self, rid, sampler, params, code, phrase, route="prop", bound=BOUND_S, drop=(), ci=True, threads=1,
                 files=None, log=None, connections=None, registry=False):
        self.id, self.sampler, self.params, self.code, self.phrase = rid, sampler, params, code, phrase
        self.route, self.bound, self.drop, self.ci, self.threads = route, bound, drop, ci, threads
        # files: name -> bytes, or FIFO for a named pipe, made in the row's folder ({dir} in a value names it);
        # log: a phrase jmeter.log must have; connections: the Kafka Connection elements of an element-route plan;
        # registry: a local HTTP server that answers every request with 64 MB ({registry} in a value is its URL).
        self.files, self.log, self.connections, self.registry = files or {}, log, connections, registry


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
    Row("p-mock-cluster", "producer", {"extra.properties": "test.mock.num.brokers=3"}, "CONFIG_ERROR",
        r"test\.mock\.num\.brokers: starts librdkafka's in-process mock cluster.*KAFKA_NATIVE_MOCK_CLUSTER=allow"),
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
    # --- files: each is opened without blocking, must be a regular file, and is read with a limit ---
    Row("p-payload-dev-zero", "producer", {"value.mode": "file", "payload.file": "/dev/zero"}, "CONFIG_ERROR",
        r"payload\.file: '/dev/zero' is a device"),
    Row("p-payload-fifo", "producer", {"value.mode": "file", "payload.file": "{dir}/pipe"}, "CONFIG_ERROR",
        r"payload\.file: .*is a FIFO", files={"pipe": FIFO}),
    Row("p-payload-directory", "producer", {"value.mode": "file", "payload.file": "{dir}"}, "CONFIG_ERROR",
        r"payload\.file: .*is a directory"),
    Row("p-payload-over-limit", "producer", {"value.mode": "file", "payload.file": "{dir}/big.txt",
                                             "payload.file.max.bytes": "1048576"}, "CONFIG_ERROR",
        r"payload\.file: .*2097152 bytes, more than the limit of 1048576 bytes.*payload\.file\.max\.bytes",
        files={"big.txt": b"x" * (2 * MB - 1) + b"\n"}),
    Row("p-payload-raised-limit-ok", "producer", {"value.mode": "file", "payload.file": "{dir}/big.txt",
                                                  "payload.file.max.bytes": "104857600"}, "MSG_SIZE_TOO_LARGE",
        r"message\.max\.bytes", files={"big.txt": b"x" * (2 * MB - 1) + b"\n"}, ci=False),
    Row("p-schema-fifo", "producer", {"value.mode": "avro", "value.schema.file": "{dir}/order.avsc"},
        "SCHEMA_ERROR", r"schema file: .*is a FIFO", files={"order.avsc": FIFO}),
    Row("p-schema-dev-zero", "producer", {"value.mode": "json-schema", "value.schema.file": "/dev/zero"},
        "SCHEMA_ERROR", r"schema file: '/dev/zero' is a device"),
    Row("p-rules-fifo", "producer", {"value.mode": "avro", "value.schema.file": "{dir}/order.avsc",
                                     "value.schema.rules.file": "{dir}/pipe"}, "CONFIG_ERROR",
        r"value\.schema\.rules\.file: .*is a FIFO", files={"order.avsc": AVSC, "pipe": FIFO}),
    Row("p-proto-import-fifo", "producer", {"value.mode": "protobuf", "value.schema.file": "{dir}/order.proto"},
        "SCHEMA_ERROR", r"import \"pipe\.proto\".*is a FIFO",
        files={"order.proto": b'syntax = "proto3";\nimport "pipe.proto";\nmessage Order { int64 id = 1; }\n',
               "pipe.proto": FIFO}),
    Row("p-proto-import-avsc", "producer", {"value.mode": "protobuf", "value.schema.file": "{dir}/order.proto"},
        "SCHEMA_ERROR", r"import \"order\.avsc\" is not a \.proto file",
        files={"order.proto": b'syntax = "proto3";\nimport "order.avsc";\nmessage Order { int64 id = 1; }\n',
               "order.avsc": AVSC}),
    Row("p-ssl-ca-fifo", "producer", {"security.protocol": "SSL", "ssl.ca.location": "{dir}/ca.pem"},
        "CONFIG_ERROR", r"ssl\.ca\.location: .*is a FIFO", files={"ca.pem": FIFO}),
    Row("p-ssl-ca-not-pem", "producer", {"security.protocol": "SSL", "ssl.ca.location": "{dir}/ca.der"},
        "CONFIG_ERROR", r"ssl\.ca\.location: .*is not a PEM file", files={"ca.der": b"\x30\x82\x01\x0a" * 64}),
    Row("p-registry-64mb", "producer", {"value.mode": "avro", "value.schema.subject": "battery-value",
                                        "schema.registry.url": "{registry}"}, "REGISTRY_ERROR",
        r"more than 16777216 bytes", registry=True),
    Row("c-schema-fifo", "consumer", {"value.decode": "avro", "value.schema.file": "{dir}/order.avsc",
                                      "value.schema.framing": "none"}, "SCHEMA_ERROR", r"schema file: .*is a FIFO",
        files={"order.avsc": FIFO}),
    # --- silently wrong load ---
    Row("p-key-unclosed", "producer", {"key.mode": "template", "key": "order-{seq"}, "CONFIG_ERROR",
        r"key: 'order-\{seq' has a \{ that is not closed \(at character 7\).*\{\{ for a literal \{"),
    Row("p-template-unclosed", "producer", {"value.mode": "template", "value.template": "id-{seq"}, "CONFIG_ERROR",
        r"value\.template: 'id-\{seq' has a \{ that is not closed"),
    Row("p-template-literal-brace-ok", "producer", {"value.mode": "template", "value.template": '{{"id":{seq}}'},
        "OK", "acked"),
    Row("p-header-kn-sent", "producer", {"headers": "kn.sent.us=1"}, "CONFIG_ERROR", r"headers: 'kn\.sent\.us' is reserved"),
    # In the plan itself: JMeter's ${__P()} trims what it returns (${__property()} does not).
    Row("p-password-trailing-space", "producer", dict(SASL_RIGHT), "AUTHENTICATION", r"SASL authentication",
        bound=10, route="jmx"),
    Row("e-password-trailing-space", "producer", {"topic": TOPIC, "timeoutMs": "3000"}, "AUTHENTICATION",
        r"SASL authentication", bound=10, route="element",
        connections=[{"bootstrapServers": SASL, "securityProtocol": "SASL_PLAINTEXT", "saslMechanism": "SCRAM-SHA-512",
                      "username": "jmeter", "password": REAL_PASSWORD + " "}]),
    Row("e-connection-twice", "producer", {"topic": TOPIC, "timeoutMs": "3000"}, "CONFIG_ERROR",
        r"more than one Kafka Connection named 'kafka'", route="element",
        connections=[{"bootstrapServers": BROKER}, {"bootstrapServers": UNREACHABLE}]),
    Row("e-misspelt-property", "producer", {"topic": TOPIC, "timeoutMs": "3000", "lingerMS": "5"}, "OK", "acked",
        route="element", connections=[{"bootstrapServers": BROKER}],
        log=r"property lingerMS is not a setting of this element and is ignored; did you mean lingerMs\?"),
    Row("c-assert-without-decode", "consumer", {"value.assert": "id=1"}, "OK|EMPTY", r"record",
        log=r"value\.assert is ignored: it checks decoded records; set value\.decode"),
    # --- messages that say what is wrong and what to do ---
    Row("p-bootstrap-not-a-port", "producer", {"bootstrap.servers": "localhost:notaport"}, "CONFIG_ERROR",
        r"'localhost:notaport' has the port 'notaport', which is not a number from 1 to 65535"),
    Row("p-target-rate-tiny", "producer", {"target.rate": "1e-300"}, "CONFIG_ERROR",
        r"target\.rate: '1e-300' is not valid; use samples per second per thread from"),
    Row("p-internal-topic", "producer", {"topic": "__consumer_offsets"}, "CONFIG_ERROR",
        r"one of Kafka's internal topics"),
    Row("p-plaintext-on-sasl-ssl", "producer", {"bootstrap.servers": "127.0.0.1:9095"}, "TRANSPORT|ALL_BROKERS_DOWN",
        r"security", bound=10),
    # The broker refuses the join; the log says which setting and which range.
    Row("c-session-timeout-out-of-range", "consumer", {"assignment": "subscribe", "session.timeout.ms": "1000"},
        "[A-Z_]+", r".", log=r"session\.timeout\.ms=1000 is outside the broker's default range, 6000 to 1800000"),
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


ELEMENT_CLASSES = {"producer": "io.kafkanative.jmeter.KafkaProducer"}


def element_plan(row, params):
    """A plan of Kafka elements: the row's Connections (each named "kafka" unless it says otherwise) and one
    producer element with the row's properties, values as typed."""

    def props(values):
        return "".join(f'<stringProp name="{escape(k)}">{escape(v)}</stringProp>' for k, v in values.items())

    cls = ELEMENT_CLASSES[row.sampler]
    connections = "".join(
        '<io.kafkanative.jmeter.KafkaConnection guiclass="TestBeanGUI" testclass="io.kafkanative.jmeter.KafkaConnection"'
        f' testname="connection {i}">{props(dict({"connectionName": "kafka"}, **c))}'
        "</io.kafkanative.jmeter.KafkaConnection><hashTree/>"
        for i, c in enumerate(row.connections)
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3"><hashTree>
<TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="battery {escape(row.id)}"/><hashTree>{connections}
<ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="row">
<stringProp name="ThreadGroup.on_sample_error">continue</stringProp>
<elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel"
 testclass="LoopController" testname="loop"><stringProp name="LoopController.loops">1</stringProp>
<boolProp name="LoopController.continue_forever">false</boolProp></elementProp>
<stringProp name="ThreadGroup.num_threads">{row.threads}</stringProp><stringProp name="ThreadGroup.ramp_time">0</stringProp>
</ThreadGroup><hashTree>
<{cls} guiclass="TestBeanGUI" testclass="{cls}" testname="{escape(row.id)}">{props(params)}</{cls}><hashTree/>
</hashTree></hashTree></hashTree></jmeterTestPlan>
"""


def make_files(row, folder):
    """The row's fixtures, in its folder."""
    for name, data in row.files.items():
        path = os.path.join(folder, name)
        if data is FIFO:
            os.mkfifo(path)
        else:
            with open(path, "wb") as f:
                f.write(data)


def snapshot(folder):
    """Every file in the row's folder: its type, size, modification time and content digest (FIFOs: type only)."""
    seen = {}
    for name in sorted(os.listdir(folder)):
        st = os.lstat(os.path.join(folder, name))
        if stat.S_ISREG(st.st_mode):
            with open(os.path.join(folder, name), "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            seen[name] = ("file", st.st_size, st.st_mtime_ns, digest)
        else:
            seen[name] = (stat.S_IFMT(st.st_mode),)
    return seen


def harmed(before, after):
    """Fixtures changed or removed, and new files that are not JMeter's outputs."""
    changed = [n for n, v in before.items() if after.get(n) != v]
    added = [n for n in after if n not in before and n not in OUTPUTS and not n.startswith("hs_err_pid")]
    return changed + added


class Registry:
    """A local HTTP server that answers every request with 64 MB of JSON-looking text (a registry gone wrong)."""

    def __enter__(self):
        body = b'{"id":' + b"1" * (64 * MB) + b"}"

        class Handler(http.server.BaseHTTPRequestHandler):
            def answer(self):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass  # the client stopped reading at its limit

            do_GET = do_POST = answer

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __exit__(self, *exc):
        self.server.shutdown()


def prepare(row, folder, registry=None):
    """Writes the plan and the files that carry the row's values by its route; returns extra JMeter arguments."""
    if row.route == "element":
        params = {k: v.replace("{dir}", folder) for k, v in row.params.items()}
        with open(os.path.join(folder, "plan.jmx"), "w", encoding="utf-8") as f:
            f.write(element_plan(row, params))
        open(os.path.join(folder, "input.properties"), "w").close()
        return []
    params = {k: v for k, v in BASE[row.sampler].items() if k not in row.drop}
    params.update(row.params)
    params = {k: v.replace("{dir}", folder).replace("{registry}", registry or "") if isinstance(v, str) else v
              for k, v in params.items()}
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
    make_files(row, folder)
    with contextlib.ExitStack() as stack:
        registry = stack.enter_context(Registry()) if row.registry else None
        argv = prepare(row, folder, registry)
        return run_jmeter(row, folder, argv)


def run_jmeter(row, folder, argv):
    before = snapshot(folder)
    jtl = os.path.join(folder, "result.jtl")
    cmd = [
        os.path.join(ROOT, "scripts", "jmeter").encode(), b"-n", b"-t", b"plan.jmx", b"-q", b"input.properties",
        b"-l", jtl.encode(), b"-j", b"jmeter.log", b"-Jjmeter.save.saveservice.output_format=csv",
        b"-Jkafka.summary.file=" + os.path.join(folder, "summary.json").encode(),
        b"-Jkafka.consumer.summary.file=" + os.path.join(folder, "consumer-summary.json").encode(), *argv,
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
    return judge(row, folder, jtl, rc, hung, elapsed, harmed(before, snapshot(folder)))


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


def judge(row, folder, jtl, rc, hung, elapsed, harm):
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
        if row.log:
            log_path = os.path.join(folder, "jmeter.log")
            log_text = open(log_path, encoding="utf-8", errors="replace").read() if os.path.exists(log_path) else ""
            if not re.search(row.log, log_text):
                problems.append(f"jmeter.log lacks /{row.log}/")
        if problems:
            kind = "unclear"
    for name in ("jmeter.out", "jmeter.log", "result.jtl", "summary.json"):
        path = os.path.join(folder, name)
        content = open(path, "rb").read() if os.path.exists(path) else b""
        for secret in (SECRET, REAL_PASSWORD):
            if secret.encode() in content:
                problems.append(f"the password {'(the real one) ' if secret == REAL_PASSWORD else ''}appears in {name}")
                kind = "unclear" if kind == "clear" else kind
    if harm:
        problems.append(f"files harmed in the row's folder: {', '.join(harm)}")
    verdict = {
        "id": row.id, "kind": kind, "seconds": round(elapsed, 1),
        "test_seconds": None if in_test is None else round(in_test, 1), "code": code,
        "message": message[:300] + ("…" if len(message) > 300 else ""), "message_length": len(message),
        "problems": problems, "harmed": harm,
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
    harm = sum(bool(v.get("harmed")) for v in verdicts)
    print(f"battery tally: {len(verdicts)} inputs, {kinds['clear']} clear, {kinds['unclear']} unclear, "
          f"{kinds['crash']} crashes, {kinds['hang']} hangs, {harm} with files harmed")


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
