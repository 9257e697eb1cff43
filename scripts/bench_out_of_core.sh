#!/usr/bin/env bash
# The out-of-core pipeline of apps/radix_sort on one large u32 file, against the in-core sort and `cp`.
#
#   scripts/bench_out_of_core.sh BUILD_DIR OUTDIR [COUNT] [GPU_CAP] [HOST_CAP]
#
# Makes COUNT (a bash arithmetic expression; default 2**31: 8 GiB) random u32 keys in /dev/shm, then sorts them to
# OUTDIR/data on disk: in core, out of core with --gpu-memory GPU_CAP (default a quarter of the file; buckets in
# host memory), spilled (also --host-memory HOST_CAP, default an eighth of the file, spill files in OUTDIR/data;
# HOST_CAP 0 leaves this run out, for files whose spill would not fit the disk beside two outputs), and copies the
# input with `cp` to the same place. Every timed run writes a new file with no writes pending (sync before) and
# the outputs kept for comparison dropped from the page cache; every output is checked with `radix_sort --check` and
# compared with the in-core output. Prints wall times, --stats phases and the maximum resident memory, and writes
# OUTDIR/out_of_core.json.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR OUTDIR [COUNT] [GPU_CAP] [HOST_CAP]" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
mkdir -p "$2"
out_dir=$(cd "$2" && pwd)
count=$(( ${3:-2**31} ))
radix_sort="$build_dir/apps/radix_sort/radix_sort"
make_sample="$build_dir/apps/make_sample/make_sample"
data_dir="$out_dir/data"
input=/dev/shm/prims-out-of-core-input.bin
mkdir -p "$data_dir"
trap 'rm -rf "$data_dir" "$input"' EXIT

file_bytes=$((count * 4))
gpu_cap=${4:-$((file_bytes / 4))}
host_cap=${5:-$((file_bytes / 8))}
"$make_sample" --count "$count" --type u32 --format bin --seed 7 -o "$input"

python3 - "$radix_sort" "$input" "$data_dir" "$out_dir" "$gpu_cap" "$host_cap" <<'PY'
import json, os, re, resource, subprocess, sys, time

radix_sort, source, data_dir, out_dir, gpu_cap, host_cap = sys.argv[1:7]
out = lambda name: os.path.join(data_dir, name)

def fresh(path):
    """Before a timed run: its output gone, no writes pending, and the outputs kept for comparison out of the page
    cache, so that every run starts with about the same memory free."""
    if os.path.exists(path):
        os.remove(path)
    os.sync()
    for name in os.listdir(data_dir):
        fd = os.open(os.path.join(data_dir, name), os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)

def timed(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(command, check=True, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, done.stderr, peak * 1024 if peak > before else None

runs = {}
cases = [("in_core", []), ("gpu_cap", ["--gpu-memory", gpu_cap])]
if host_cap != "0":
    cases.append(("spill", ["--gpu-memory", gpu_cap, "--host-memory", host_cap, "--tmpdir", data_dir]))
names = [name for name, _ in cases]
for name, args in cases:
    fresh(out(name + ".bin"))
    wall, stderr, peak = timed([radix_sort, source, "-t", "u32", "-o", out(name + ".bin"), "--stats",
                                "--no-progress", *args])
    plan = re.search(r"^radix_sort: plan: (.*)$", stderr, re.M)
    phases = dict((k.replace(" ", "_"), float(v)) for k, v in
                  re.findall(r"^\s+(read|split|to GPU|sort|back|write|setup|total)\s+([0-9.]+) s", stderr, re.M))
    runs[name] = {"args": args, "wall_s": wall, "plan": plan.group(1) if plan else None, "phases_s": phases,
                  "max_rss_bytes_upper_bound": peak, "stats": stderr}
    print(f"{name}: {wall:.2f} s  {runs[name]['plan']}", file=sys.stderr)
    # Checked at once, and each out-of-core output removed once it equals the in-core one: the disk never holds
    # more than two outputs.
    subprocess.run([radix_sort, out(name + ".bin"), "-t", "u32", "--check"], check=True)
    if name != "in_core":
        subprocess.run(["cmp", out("in_core.bin"), out(name + ".bin")], check=True)
        os.remove(out(name + ".bin"))
fresh(out("cp.bin"))
start = time.perf_counter()
subprocess.run(["cp", "--reflink=never", source, out("cp.bin")], check=True)
runs["cp_s"] = time.perf_counter() - start
os.remove(out("cp.bin"))
runs["verified"] = True
runs["file_bytes"] = os.path.getsize(source)

print(f"\n{os.path.getsize(source) / 2**30:.1f} GiB u32, /dev/shm -> disk; every output --check OK and equal")
print(f"{'case':10} {'wall s':>7} {'/in core':>9} {'/cp':>6}  plan; --stats phases (s)")
for name in names:
    r = runs[name]
    phases = " ".join(f"{k}={v:.2f}" for k, v in r["phases_s"].items())
    print(f"{name:10} {r['wall_s']:7.2f} {r['wall_s'] / runs['in_core']['wall_s']:8.2f}x "
          f"{r['wall_s'] / runs['cp_s']:5.2f}x  {r['plan']}; {phases}")
print(f"{'cp':10} {runs['cp_s']:7.2f}")
with open(os.path.join(out_dir, "out_of_core.json"), "w") as f:
    json.dump(runs, f, indent=2)
PY
