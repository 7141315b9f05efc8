#!/usr/bin/env python3
"""The plugins-manager suite's check of the catalogue scripts/plugins-repo writes (repo.json, the JMeter Plugins
Manager's format).

Usage: checks.py CHECK ARG...   (run.sh calls each; CHECK is a function below, with dashes)
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
import jtl  # noqa: E402


def catalogue_entry(repo_json, version, jar):
    """One entry with every field the Plugins Manager shows, the producer sampler as its marker class, and VERSION
    downloading JAR with its changes."""
    entries = jtl.summary(repo_json)
    assert isinstance(entries, list) and len(entries) == 1, entries
    e = entries[0]
    for key in ("id", "name", "description", "helpUrl", "vendor", "markerClass", "componentClasses", "versions"):
        assert e.get(key), f"catalogue entry lacks {key}"
    assert e["markerClass"] == "io.kafkanative.jmeter.KafkaProducerSampler", e["markerClass"]
    assert e["markerClass"] in e["componentClasses"], e["componentClasses"]
    v = e["versions"][version]
    assert v["downloadUrl"] == jar and v["changes"], v
    print(f"{e['id']} {version}: {v['downloadUrl']}")


if __name__ == "__main__":
    jtl.run_checks({f.__name__: f for f in (catalogue_entry,)}, "plugins-manager")
