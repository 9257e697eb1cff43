#!/usr/bin/env python3
"""Prints a Markdown table from bench JSON files: for each (bench, type, variant) and chosen sizes, the median time of
every contender, prims' throughput, and prims' speed-up over each other contender (>1 means prims is faster). A
contender the JSON names under "compared_with" is compared with that one instead (bench_reduce: Thrust returns its
sum to the host, so its ratio is against prims returning to the host).

    python3 bench/table.py bench/results/*-bench_reduce.json --log2 20 24 30
"""
import argparse
import json
import math


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", nargs="+")
    parser.add_argument("--log2", nargs="+", type=int, default=[20, 24, 28, 30])
    parser.add_argument("--variants", nargs="*", help="only these variants")
    args = parser.parse_args()
    for path in args.json:
        with open(path) as f:
            data = json.load(f)
        copy = data["copy_gbs"]
        rows = [r for r in data["results"] if r["n"] > 0 and round(math.log2(r["n"])) in args.log2]
        if args.variants:
            rows = [r for r in rows if r["variant"] in args.variants]
        if not rows:
            continue
        contenders = list(rows[0]["median_ms"].keys())
        ours, others = contenders[0], contenders[1:]
        sort = data["bench"] in ("bench_sort", "bench_dist_sort")
        rate = "Gkeys/s" if sort else "GB/s"
        print(f"{data['bench']} on {data['device']} (copy {copy:.0f} GB/s)\n")
        compared_with = rows[0].get("compared_with", {})
        ratios = [f"{compared_with[c]} vs {c}" if c in compared_with else f"vs {c}" for c in others]
        header = ["case", "n"] + [f"{c} us" for c in contenders] + [f"{ours} {rate}"] + ratios
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            ms = r["median_ms"]
            if sort:
                throughput = f"{r['n'] / (ms[ours] * 1e6):.1f}"
            else:
                gbs = r["bytes_per_item"] * r["n"] / (ms[ours] * 1e6)
                throughput = f"{gbs:.0f} ({100 * gbs / copy:.0f}%)"
            case = " ".join(x for x in (r["bench"], r["type"], r["variant"]) if x and x != "-")
            # A contender a case does not have (Thrust has no non-trivial runs) shows as a dash.
            cells = [case, f"2^{round(math.log2(r['n']))}"]
            cells += [f"{ms[c] * 1e3:.1f}" if c in ms else "-" for c in contenders]
            cells += [throughput]
            cells += [f"{ms[c] / ms[compared_with.get(c, ours)]:.2f}x" if c in ms else "-" for c in others]
            print("| " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()
