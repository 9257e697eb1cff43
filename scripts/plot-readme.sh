#!/usr/bin/env bash
# Redraws the benchmark plots (README.md, docs/benchmarks.md, docs/multi-gpu.md) from the newest committed
# results: H100 (reduce, scan, sort), 2 x H200 (dist).
set -euo pipefail
cd "$(dirname "$0")/.."
files=()
for bench in reduce scan sort; do
  files+=("$(ls bench/results/*-H100-bench_${bench}.json | sort | tail -n 1)")
done
python3 bench/plot.py "${files[@]}" -o bench/results/H100.png --only \
  sum:i32:WarpShuffle sum:f64:WarpShuffle excl_sum:i32:SinglePass excl_sum:i64:SinglePass excl_sum:i32:ReduceThenScan \
  "sort:u32:entropy 1.0" "sort:u32/u32:entropy 1.0" "sort:u64:entropy 1.0" "sort:f32:entropy 1.0"
# The multi-GPU plot, from the newest two-GPU run of bench_dist_sort.
dist="$(ls bench/results/*-H200x2-bench_dist_sort.json | sort | tail -n 1)"
python3 bench/plot.py "$dist" -o bench/results/H200x2-dist.png
