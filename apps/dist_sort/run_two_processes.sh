#!/usr/bin/env bash
# Runs two ranks of dist_sort as two processes, the way torchrun starts them (RANK, WORLD_SIZE, LOCAL_RANK,
# LOCAL_WORLD_SIZE), sharing the NCCL unique id through a fresh file. Exits 77 (skipped) when both ranks report
# fewer than two GPUs, non-zero when either rank fails.
#   run_two_processes.sh path/to/dist_sort [dist_sort options]
set -u
program=$1
shift
id_file=$(mktemp -u "${TMPDIR:-/tmp}/dist_sort_id.XXXXXX")
export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}" WORLD_SIZE=2 LOCAL_WORLD_SIZE=2
pids=()
for rank in 0 1; do
  RANK=$rank LOCAL_RANK=$rank "$program" --id-file "$id_file" "$@" &
  pids+=($!)
done
codes=()
for pid in "${pids[@]}"; do
  wait "$pid"
  codes+=($?)
done
rm -f "$id_file"
echo "rank exit codes: ${codes[*]}"
if [ "${codes[0]}" = 77 ] && [ "${codes[1]}" = 77 ]; then exit 77; fi
for code in "${codes[@]}"; do
  if [ "$code" != 0 ]; then exit 1; fi
done
exit 0
