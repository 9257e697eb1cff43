#!/usr/bin/env python3
"""Turns bench JSON files into PNG plots: throughput (GB/s, or G items/s for sorts) against size, one panel per
(bench, type, variant), one line per contender.

    python3 bench/plot.py bench/results/*.json -o bench/results/plot.png [--only sum:i32:WarpShuffle ...]
"""
import argparse
import json
import math
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


COLORS = {"prims": "tab:green", "CUB": "tab:blue", "Thrust": "tab:orange"}
# prims' algorithms called explicitly (bench_sort), dotted beside the plain call.
ALGORITHM_COLORS = {"Onesweep": "tab:olive", "TileCounts": "tab:gray", "Hybrid": "tab:red"}


def load(paths):
    panels = defaultdict(lambda: defaultdict(list))
    device = ""
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        device = data.get("device", device)
        for r in data["results"]:
            key = (r["bench"], r["type"], r["variant"])
            for contender, ms in r["median_ms"].items():
                if r["bench"].startswith("sort"):
                    value = r["n"] / (ms * 1e6)
                else:
                    value = r["bytes_per_item"] * r["n"] / (ms * 1e6)
                panels[key][contender].append((r["n"], value))
    return device, panels


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--only", nargs="*", help='panels to draw, as "bench:type:variant" (default: all)')
    args = parser.parse_args()
    device, panels = load(args.json)
    panels = dict(sorted(panels.items()))
    if args.only:  # in the order given
        panels = {key: panels[key] for key in (tuple(name.split(":", 2)) for name in args.only) if key in panels}
    columns = min(4, len(panels))
    rows = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.2 * rows), squeeze=False)
    for ax, (key, contenders) in zip(axes.flat, panels.items()):
        for contender, points in sorted(contenders.items()):
            points.sort()
            # Contenders of the multi-GPU bench ("prims 2 GPUs", "CUB 1 GPU") and bench_reduce's "... (returns to
            # host)" take their library's colour; one GPU's lines are dashed, returns to the host dash-dotted.
            library = contender.split()[0]
            if contender.endswith("1 GPU"):
                style = "--"
            elif contender.endswith("(returns to host)"):
                style = "-."
            else:
                style = ":" if library in ALGORITHM_COLORS else "-"
            ax.plot([math.log2(n) for n, _ in points], [v for _, v in points], marker="o", ms=3, label=contender,
                    color=COLORS.get(library, ALGORITHM_COLORS.get(library, "tab:gray")), linestyle=style)
        ax.set_title(" ".join(k for k in key if k and k != "-"), fontsize=9)
        ax.set_xlabel("log2(n)")
        unit = "G items/s" if key[0].startswith("sort") else "GB/s"
        ax.set_ylabel(unit)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(f"prims vs Thrust and CUB on {device}", fontsize=11)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


if __name__ == "__main__":
    main()
