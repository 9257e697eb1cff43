#!/usr/bin/env python3
"""Draws the distributed sort's scaling from bench_dist_sort JSON files (one a GPU count): G keys/s against the
number of GPUs for each case asked for, the one-GPU point being prims on one GPU in the same runs (their mean), with
CUB on one GPU and linear scaling from one GPU for reference.

    python3 bench/plot_scaling.py bench/results/*-bench_dist_sort-{2,4}-gpus.json -o scaling.png --cases u32:32 u64:31
"""
import argparse
import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(paths):
    """{(type, log2 n): {"one": [G keys/s of prims 1 GPU], "cub": [...], gpus: G keys/s}}, and the device name."""
    cases, device = {}, ""
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        device = data.get("device", device)
        gpus = data["gpus"]
        for r in data["results"]:
            key = (r["type"], round(math.log2(r["n"])))
            rate = {name: r["n"] / (ms * 1e6) for name, ms in r["median_ms"].items()}
            case = cases.setdefault(key, {"one": [], "cub": []})
            case["one"].append(rate["prims 1 GPU"])
            case["cub"].append(rate["CUB 1 GPU"])
            case[gpus] = rate[f"prims {gpus} GPUs"]
    return device, cases


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--cases", nargs="+", required=True, help='cases as "type:log2n", e.g. u32:32')
    args = parser.parse_args()
    device, cases = load(args.json)
    fig, axes = plt.subplots(1, len(args.cases), figsize=(4.4 * len(args.cases), 3.4), squeeze=False)
    for ax, name in zip(axes.flat, args.cases):
        type_name, log2n = name.split(":")
        case = cases.get((type_name, int(log2n)))
        if case is None:
            raise SystemExit(f"no results for {name}")
        one = sum(case["one"]) / len(case["one"])
        counts = [1] + sorted(k for k in case if isinstance(k, int))
        rates = [one] + [case[k] for k in counts[1:]]
        ax.plot(counts, rates, marker="o", color="tab:green", label="prims")
        ax.plot(counts, [one * k for k in counts], linestyle=":", color="tab:gray", label="linear from 1 GPU")
        ax.plot([1], [sum(case["cub"]) / len(case["cub"])], marker="s", color="tab:blue", linestyle="",
                label="CUB, 1 GPU")
        for k, rate in zip(counts, rates):
            ax.annotate(f"{rate / one:.2f}x", (k, rate), textcoords="offset points", xytext=(4, -10), fontsize=7)
        ax.set_title(f"{type_name}, 2^{log2n} keys in all", fontsize=9)
        ax.set_xlabel("GPUs")
        ax.set_xticks(counts)
        ax.set_ylabel("G keys/s")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"prims::dist::radix_sort_keys on {device}s", fontsize=11)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)


if __name__ == "__main__":
    main()
