"""Shared by the JTL checkers (tests/*/jtl_check.py, tests/consumer/check.py): read a JMeter CSV results file and its
JSON summaries, and stop at the first mismatch with its reason.

A checker imports it after putting this folder on its path:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
"""
import argparse
import csv
import json
import sys

# The first word of a failure line; a checker may name itself ("check failed: ...").
PREFIX = "JTL check"


def fail(why):
    """Prints why the check failed and exits 1."""
    print(f"{PREFIX} failed: {why}")
    sys.exit(1)


def parser(positional):
    """A command-line parser whose first argument, named `positional`, is the JTL file."""
    p = argparse.ArgumentParser()
    p.add_argument(positional)
    return p


def rows(path):
    """The JTL's sample rows, as dicts keyed by its CSV header."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def summary(path):
    """One of the engine's JSON summaries."""
    with open(path) as f:
        return json.load(f)


def need_sample_count(rows):
    """Fails unless the JTL has JMeter's SampleCount column (messages per sample)."""
    if "SampleCount" not in rows[0]:
        fail("no SampleCount column: run with -Jjmeter.save.saveservice.sample_count=true")


def none_bad(rows, bad, what, width=None):
    """Fails when some row is `bad(row)`: how many `what` rows, and the first one's code and message."""
    found = [r for r in rows if bad(r)]
    if found:
        fail(f"{len(found)} {what}, first: {found[0]['responseCode']} {found[0]['responseMessage'][:width]}")


def run_checks(checks, suite):
    """The command line of a suite's checks module: `checks.py NAME ARG...` calls the function NAME of the mapping
    `checks` (dashes for underscores) with the arguments. A failed assertion ends it with one line, "SUITE check NAME
    failed: REASON", and exit 1, so the suite's log says which check and why without a traceback."""
    names = sorted(n.replace("_", "-") for n in checks)
    if len(sys.argv) < 2 or sys.argv[1].replace("-", "_") not in checks:
        print(f"usage: {sys.argv[0]} CHECK ARG... (CHECK: {', '.join(names)})")
        sys.exit(2)
    name = sys.argv[1]
    try:
        checks[name.replace("-", "_")](*sys.argv[2:])
    except AssertionError as e:
        reason = str(e)
        if len(reason) > 800:  # a reason may hold whole rows: enough to see which, not a page of them
            reason = f"{reason[:800]}… ({len(reason)} characters)"
        print(f"{suite} check {name} failed: {reason}")
        sys.exit(1)
