#!/usr/bin/env bash
# End-to-end benchmark of apps/radix_sort against numpy and GNU sort, on files in the page cache.
#
#   scripts/bench_radix_sort_app.sh BUILD_DIR OUTDIR
#
# Makes a 1 GiB i32 binary file, the same values as .npy, and a 100-million-line i32 text file; sorts each with
# `radix_sort --stats` (best of two runs, wall clock), the binary and .npy files with numpy (np.fromfile / np.load,
# np.sort, tofile / np.save, each phase timed), and the text file with `sort -n --parallel=16 -S 50%`. Then the
# out-of-core pipeline on the binary file: in core, out of core (--gpu-memory a quarter of the file, buckets in host
# memory), spilled (also --host-memory an eighth of the file, spill files beside the data), and `cp` of the same file
# as the disk's pace. Checks every output is sorted and that the programs agree, prints a table and writes
# OUTDIR/radix_sort_app.json.
# Every timed command writes a new file with no other writes pending: the generated inputs and earlier outputs are
# flushed to disk (sync) and the output is removed before it runs, so no program pays for another's writeback.
# Needs python3 with numpy and GNU sort. Build with -DCMAKE_BUILD_TYPE=Release first. Takes about 2-4 minutes.
# Set KEEP_DATA=1 to keep the generated files in OUTDIR/data; BENCH_COUNT and BENCH_LINES shrink the inputs for a
# quick trial run.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR OUTDIR" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
mkdir -p "$2"
out_dir=$(cd "$2" && pwd)
radix_sort="$build_dir/apps/radix_sort/radix_sort"
make_sample="$build_dir/apps/make_sample/make_sample"
for program in "$radix_sort" "$make_sample"; do
  [[ -x $program ]] || { echo "$0: $program not built" >&2; exit 2; }
done
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
[[ $build_type == Release ]] || echo "$0: warning: $build_dir is a '$build_type' build, not Release" >&2
python3 -c "import numpy" || { echo "$0: needs numpy" >&2; exit 2; }

data_dir="$out_dir/data"
mkdir -p "$data_dir"
trap '[[ ${KEEP_DATA:-0} == 1 ]] || rm -rf "$data_dir"' EXIT

python3 - "$radix_sort" "$make_sample" "$data_dir" "$out_dir" <<'PY'
import json, os, platform, re, subprocess, sys, time
import numpy as np

radix_sort, make_sample, data_dir, out_dir = sys.argv[1:5]
threads = os.cpu_count()
path = lambda name: os.path.join(data_dir, name)

def run(command, **kwargs):
    return subprocess.run(command, check=True, **kwargs)

def warm(*names):
    for name in names:
        with open(path(name), "rb") as f:
            while f.read(1 << 26):
                pass

def fresh(name):
    """Removes an output left by an earlier run and flushes pending writes, before a timed run writes it."""
    if os.path.exists(path(name)):
        os.remove(path(name))
    os.sync()

def timed(command):
    start = time.perf_counter()
    done = subprocess.run(command, check=True, stderr=subprocess.PIPE, text=True)
    return time.perf_counter() - start, done.stderr

def parse_stats(stderr):
    phases = {}
    for name, seconds in re.findall(r"^\s+(read|split|to GPU|sort|back|write|setup|total)\s+([0-9.]+) s", stderr,
                                    re.M):
        phases[name.replace(" ", "_")] = float(seconds)
    return phases

def best_radix_sort(args, output):
    runs = []
    for _ in range(2):
        fresh(output)
        runs.append(timed([radix_sort, *args, "-o", path(output), "--stats"]))
    wall, stderr = min(runs, key=lambda r: r[0])
    plan = re.search(r"^radix_sort: plan: (.*)$", stderr, re.M)
    return {"wall_s": wall, "all_walls_s": [r[0] for r in runs], "phases_s": parse_stats(stderr),
            "plan": plan.group(1) if plan else None, "stats": stderr}

count = int(os.environ.get("BENCH_COUNT", (1 << 30) // 4))
lines = int(os.environ.get("BENCH_LINES", 100_000_000))
print(f"making samples: {count} i32 (binary, npy), {lines} i32 lines of text", file=sys.stderr)
run([make_sample, "--count", str(count), "--type", "i32", "--format", "bin", "--seed", "1", "-o", path("keys.bin")])
run([make_sample, "--count", str(count), "--type", "i32", "--format", "npy", "--seed", "1", "-o", path("keys.npy")])
run([make_sample, "--count", str(lines), "--type", "i32", "--format", "text", "--seed", "2", "-o", path("keys.txt")])
os.sync()
warm("keys.bin", "keys.npy", "keys.txt")

def gpu_name():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                              capture_output=True, text=True).stdout.strip() or "none"
    except FileNotFoundError:
        return "none"

results = {"machine": {"host": platform.node(), "cpus": threads, "numpy": np.__version__}, "gpu": gpu_name()}

def numpy_bin():
    fresh("numpy.bin")
    t0 = time.perf_counter(); a = np.fromfile(path("keys.bin"), dtype="<i4")
    t1 = time.perf_counter(); a = np.sort(a)
    t2 = time.perf_counter(); a.tofile(path("numpy.bin"))
    t3 = time.perf_counter()
    return {"read": t1 - t0, "sort": t2 - t1, "write": t3 - t2, "total": t3 - t0}

def numpy_npy():
    fresh("numpy.npy")
    t0 = time.perf_counter(); a = np.load(path("keys.npy"))
    t1 = time.perf_counter(); a = np.sort(a)
    t2 = time.perf_counter(); np.save(path("numpy.npy"), a)
    t3 = time.perf_counter()
    return {"read": t1 - t0, "sort": t2 - t1, "write": t3 - t2, "total": t3 - t0}

print("binary: radix_sort, numpy", file=sys.stderr)
results["binary_1GiB_i32"] = {"radix_sort": best_radix_sort([path("keys.bin"), "--type", "i32"], "sorted.bin"),
                              "numpy_s": numpy_bin()}
print("npy: radix_sort, numpy", file=sys.stderr)
results["npy_1GiB_i32"] = {"radix_sort": best_radix_sort([path("keys.npy")], "sorted.npy"),
                           "numpy_s": numpy_npy()}
print("text: radix_sort, GNU sort", file=sys.stderr)
text = {"radix_sort": best_radix_sort([path("keys.txt")], "sorted.txt")}
fresh("gnu.txt")
start = time.perf_counter()
run(["sort", "-n", f"--parallel={threads}", "-S", "50%", "-o", path("gnu.txt"), path("keys.txt")],
    env={**os.environ, "LC_ALL": "C"})
text["gnu_sort_s"] = time.perf_counter() - start
results["text_100M_i32"] = text

print("out of core: in core, --gpu-memory 1/4 of the file, spilled (--host-memory 1/8), cp", file=sys.stderr)
file_bytes = os.path.getsize(path("keys.bin"))
quarter, eighth = str(file_bytes // 4), str(file_bytes // 8)
out_of_core = {
    "file_bytes": file_bytes,
    "in_core": best_radix_sort([path("keys.bin"), "--type", "i32", "--no-progress"], "in_core.bin"),
    "gpu_memory_quarter": best_radix_sort(
        [path("keys.bin"), "--type", "i32", "--no-progress", "--gpu-memory", quarter], "quarter.bin"),
    "spill": best_radix_sort([path("keys.bin"), "--type", "i32", "--no-progress", "--gpu-memory", quarter,
                              "--host-memory", eighth, "--tmpdir", data_dir], "spill.bin"),
}
cp_runs = []
for _ in range(2):
    fresh("copy.bin")
    start = time.perf_counter()
    run(["cp", "--reflink=never", path("keys.bin"), path("copy.bin")])
    cp_runs.append(time.perf_counter() - start)
out_of_core["cp_s"] = min(cp_runs)
results["out_of_core_1GiB_i32"] = out_of_core
for name in ("in_core.bin", "quarter.bin", "spill.bin"):
    run(["cmp", path("sorted.bin"), path(name)])

# Every output sorted, and the programs agree.
run([radix_sort, path("sorted.bin"), "--type", "i32", "-c"])
run([radix_sort, path("sorted.npy"), "-c"])
run([radix_sort, path("sorted.txt"), "-c"])
run(["cmp", path("sorted.bin"), path("numpy.bin")])
assert np.array_equal(np.load(path("sorted.npy")), np.load(path("numpy.npy")))
run(["cmp", path("sorted.txt"), path("gnu.txt")])
results["verified"] = True

rows = [("1 GiB i32 binary", results["binary_1GiB_i32"], "numpy"),
        ("1 GiB i32 .npy", results["npy_1GiB_i32"], "numpy"),
        ("100M i32 text", results["text_100M_i32"], "GNU sort")]
print(f"\n{'input':18} {'radix_sort s':>12} {'baseline':>10} {'baseline s':>10} {'speed-up':>9}   radix_sort phases (s)")
for name, result, baseline in rows:
    ours = result["radix_sort"]["wall_s"]
    theirs = result["numpy_s"]["total"] if "numpy_s" in result else result["gnu_sort_s"]
    phases = " ".join(f"{k}={v:.3f}" for k, v in result["radix_sort"]["phases_s"].items())
    result["speedup"] = theirs / ours
    print(f"{name:18} {ours:12.3f} {baseline:>10} {theirs:10.3f} {theirs / ours:8.1f}x   {phases}")
for name, result, baseline in rows[:2]:
    n = result["numpy_s"]
    print(f"numpy {name}: read {n['read']:.3f}  sort {n['sort']:.3f}  write {n['write']:.3f}")

print(f"\n{'1 GiB i32 binary':18} {'wall s':>8} {'/in core':>8} {'/cp':>7}   plan")
for name in ("in_core", "gpu_memory_quarter", "spill"):
    r = out_of_core[name]
    r["vs_in_core"] = r["wall_s"] / out_of_core["in_core"]["wall_s"]
    r["vs_cp"] = r["wall_s"] / out_of_core["cp_s"]
    print(f"{name:18} {r['wall_s']:8.3f} {r['vs_in_core']:7.2f}x {r['vs_cp']:6.2f}x   {r['plan']}")
print(f"{'cp':18} {out_of_core['cp_s']:8.3f}")

with open(os.path.join(out_dir, "radix_sort_app.json"), "w") as f:
    json.dump(results, f, indent=2)
print(f"\nwrote {os.path.join(out_dir, 'radix_sort_app.json')}")
PY
