#!/usr/bin/env bash
# Redraws the benchmark plots (README.md, docs/benchmarks.md, docs/multi-gpu.md) from the newest committed
# results: H100 (reduce, scan, sort), H200s (dist: two GPUs, and the scaling over one, two and four).
set -euo pipefail
cd "$(dirname "$0")/.."
files=()
for bench in reduce scan sort; do
  files+=("$(ls bench/results/*-H100-bench_${bench}.json | sort | tail -n 1)")
done
python3 bench/plot.py "${files[@]}" -o bench/results/H100.png --only \
  sum:i32:WarpShuffle sum:f64:WarpShuffle excl_sum:i32:SinglePass excl_sum:i64:SinglePass excl_sum:i32:ReduceThenScan \
  "sort:u32:entropy 1.0" "sort:u32/u32:entropy 1.0" "sort:u64:entropy 1.0" "sort:f32:entropy 1.0"
# The two-GPU plot, from the last run of bench_dist_sort on a two-GPU machine (the through-NCCL runs aside).
dist="bench/results/2026-11-26-H200x2-bench_dist_sort-segmented-passes-a-block-a-tile.json"
python3 bench/plot.py "$dist" -o bench/results/H200x2-dist.png
# The scaling plot, from the last runs of bench_dist_sort on two and on four GPUs of one machine.
scaling=("bench/results/2026-11-26-H200x4-bench_dist_sort-count-and-copy-2-gpus.json"
         "bench/results/2026-11-26-H200x4-bench_dist_sort-count-and-copy-4-gpus.json")
python3 bench/plot_scaling.py "${scaling[@]}" -o bench/results/H200x4-dist-scaling.png --cases u32:31 u32:32 u64:31
