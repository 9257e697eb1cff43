#!/usr/bin/env bash
# One command for a GPU machine: build, run every test, run compute-sanitizer memcheck and racecheck on the test
# binaries, run the benches. Logs and JSON go to $OUT (default ./gpu-out); a short summary is printed last.
#
#   scripts/gpu-check.sh                 tests, sanitize and bench
#   scripts/gpu-check.sh tests bench     only some stages (build always runs): tests, tables, sanitize, bench
#   scripts/gpu-check.sh tables          the tests again under each other GPU generation's tuning table
#   BENCH_ARGS="--max-log2 24" scripts/gpu-check.sh bench      extra arguments for every bench
#   BENCHES="bench_scan" ... ; TEST_FILTER=Scan ... (ctest -R)
#   SANITIZE_FILTER / SANITIZE_NARROW_FILTER (gtest filters, see the stage) ; SANITIZE_TIMEOUT=600 (s per run)
# All three stages together take more than ten minutes on one H100 (each sanitizer run may last up to
# SANITIZE_TIMEOUT, 600 s by default); name stages to run only some of them.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(tests sanitize bench)
wants() { [[ " ${stages[*]} " == *" $1 "* ]]; }
summary="$OUT/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader >>"$summary" 2>&1
if ! { cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build "$BUILD" -j"$(nproc)"; } >"$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"
  note "BUILD FAILED"
  exit 1
fi
note "build ok"

status=0
if wants tests; then
  # Four at a time, but the large and multi-GPU tests (*Large*, *Dist*) one at a time: they share a RESOURCE_LOCK
  # (tests/CMakeLists.txt), lest two of them together run the GPU out of memory.
  ctest --test-dir "$BUILD" -j4 --output-on-failure -R "${TEST_FILTER:-.}" >"$OUT/ctest.log" 2>&1 || status=1
  note "tests: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")"
  grep -E '^\s+[0-9]+ - .*(Failed|Timeout|Exception)' "$OUT/ctest.log" | head -30 | tee -a "$summary"
fi

if wants tables; then
  # Every tuning table on this GPU (tests/tuning_switch.cu): the table forced, the shared memory capped at its.
  for table in ${TABLES:-sm80 sm86 sm100}; do
    PRIMS_TEST_TUNING=$table ctest --test-dir "$BUILD" -j4 --output-on-failure -R "${TEST_FILTER:-.}" \
      >"$OUT/ctest-$table.log" 2>&1 || status=1
    note "tests under $table: $(grep -E 'tests passed|tests failed' "$OUT/ctest-$table.log")"
  done
fi

if wants sanitize; then
  # memcheck: every test but the large ones and some typed repeats; racecheck on the device scan and sort: the
  # sweeps of a few types (racecheck slows shared-memory-heavy kernels by two orders of magnitude).
  wide=${SANITIZE_FILTER:-'-*Large*:*Typed/1.*:*Typed/3.*:*Typed/7.*:*Typed/9.*'}
  narrow=${SANITIZE_NARROW_FILTER:-'*Typed/0.*:*Typed/5.*:*Typed/8.*:DeviceScan.*:RadixSort.*:RadixSortValues.*:RadixSortFloats.*-*Large*'}
  : >"$OUT/sanitizer.log"
  for binary in "$BUILD"/tests/test_*; do
    [ -x "$binary" ] || continue
    name=$(basename "$binary")
    [ "$name" = test_radix_sort_app ] && continue  # its GPU tests run the radix_sort program in a child process
    for tool in memcheck racecheck; do
      filter=$wide
      if [ "$tool" = racecheck ] && [[ $name == test_device_scan || $name == test_device_radix_sort ]]; then
        filter=$narrow
      fi
      timeout "${SANITIZE_TIMEOUT:-600}" compute-sanitizer --tool "$tool" --require-cuda-init=no --error-exitcode 9 \
        "$binary" --gtest_filter="$filter" --gtest_brief=1 >>"$OUT/sanitizer.log" 2>&1
      case $? in
        0) note "$tool $name: clean" ;;
        124) note "$tool $name: stopped after ${SANITIZE_TIMEOUT:-600} s"; status=1 ;;
        *) note "$tool $name: ERRORS"; status=1 ;;
      esac
    done
  done
fi

if wants bench; then
  for bench in ${BENCHES:-bench_reduce bench_scan bench_select bench_by_key bench_histogram bench_segmented_reduce bench_top_k bench_segmented_top_k bench_sort bench_partition bench_segmented_sort}; do
    [ -x "$BUILD/bench/$bench" ] || { note "$bench: not built"; continue; }
    # shellcheck disable=SC2086
    "$BUILD/bench/$bench" --json "$OUT/$bench.json" ${BENCH_ARGS:-} 2>&1 | tee -a "$OUT/bench.log" || status=1
  done
  # The reduction ladder, which checks each step's sum itself.
  "$BUILD/apps/reduce_tour/reduce_tour" 2>&1 | tee -a "$OUT/bench.log" || status=1
fi

echo "==== summary"
cat "$summary"
exit $status
