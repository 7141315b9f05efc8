#!/usr/bin/env python3
"""The remote suite's check of the README: every distributed example passes the plan's settings with -G.

Usage: checks.py CHECK ARG...   (run.sh calls each; CHECK is a function below, with dashes)
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402


def docs_use_g(readme):
    """In the README's commands (fenced blocks with continuation lines joined, and inline code spans) that run
    remote engines (-R/-r), a -J may only set what the controller itself uses (how it saves the JTL, its RMI
    settings): a plan setting on -J never reaches the engines."""
    text = open(readme, encoding="utf-8").read()
    blocks = [b.replace("\\\n", " ") for b in re.findall(r"```[a-z]*\n(.*?)```", text, re.S)]
    commands = [line for block in blocks for line in block.splitlines()] + re.findall(r"`([^`\n]+)`", text)
    remote = [c for c in commands if re.search(r"(^|\s)-[Rr](\s|$)", c)]
    bad = [(c, j) for c in remote for j in re.findall(r"-J([\w.]+)", c)
           if not j.startswith(("jmeter.save.", "server.rmi."))]
    for c, j in bad:
        print(f"README: -J{j} in a distributed command (use -G{j}): {c.strip()}")
    print(f"{len(remote)} distributed command(s) in the README, {len(bad)} with a plan setting on -J")
    assert remote, "no distributed command found in the README"
    assert not bad, f"{len(bad)} distributed command(s) with a plan setting on -J"


if __name__ == "__main__":
    jtl.run_checks({f.__name__: f for f in (docs_use_g,)}, "remote")
