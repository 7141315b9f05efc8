#!/usr/bin/env python3
"""target/bench/results.json -> chart.png: records/s (top) and CPU seconds per 100k records (bottom) per contender,
one group of bars per workload. Run with the venv's python (matplotlib); scripts/bench sets it up."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.dont_write_bytecode = True  # no bench/__pycache__ in the source tree
sys.path.insert(0, __import__("os").path.dirname(__file__))
from report import contenders_of  # noqa: E402

COLORS = ["#7f7f7f", "#d62728", "#1f77b4", "#17becf", "#2ca02c", "#98df8a", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"]


def main(results_path, png_path):
    with open(results_path) as f:
        result = json.load(f)
    workloads = result["workloads"]
    fig, axes = plt.subplots(2, len(workloads), figsize=(5.5 * len(workloads), 8), squeeze=False)
    for col, entry in enumerate(workloads):
        for row, (metric, title) in enumerate([("records_per_sec", "records/s (acked, median)"),
                                               ("cpu_s_per_100k", "CPU s per 100k records")]):
            ax = axes[row][col]
            labels, values, colors = [], [], []
            for i, (cid, label, _jvm) in enumerate(contenders_of(entry["workload"])):
                v = entry["contenders"].get(cid, {}).get(metric)
                labels.append(label.split(" ", 1)[0] + " " + cid)
                values.append(v or 0)
                colors.append(COLORS[i % len(COLORS)])
            bars = ax.bar(range(len(values)), values, color=colors)
            for b, v in zip(bars, values):
                ax.annotate(f"{v:,.0f}" if metric == "records_per_sec" else f"{v:.2f}",
                            (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom", fontsize=7)
            ax.set_xticks(range(len(values)))
            ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
            ax.set_title(f"{entry['workload']}: {title}", fontsize=10)
            ax.grid(axis="y", alpha=0.3)
    fig.suptitle("jmeter-kafka-native benchmark (same broker, same settings, interleaved rounds)")
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
