#!/usr/bin/env python3
"""Checks apps/radix_sort's out-of-core path against numpy.

    scripts/check_out_of_core_numpy.py BUILD_DIR WORK_DIR [--count N]

For every key type class (i8, u16, i32, u64, f32 with NaN and -0.0, f64) and every data shape (uniform bits, 90% of
keys in one top digit, all keys equal, keys that differ only in the low byte), sorts N keys (default 2^23) with
`--gpu-memory` a quarter of the keys (buckets in host memory) and again with `--host-memory` an eighth as well
(buckets in spill files), ascending and descending, and compares each output with numpy's stable sort: keys with
np.sort, `--argsort` and `--values` with np.argsort(kind="stable"). Descending is numpy's stable order of the negated
keys (for floats: NaN first, then from +inf down, -0.0 and 0.0 kept in input order). Prints one line per case and
exits non-zero at the first mismatch. Needs numpy; files go to WORK_DIR (removed at the end).
"""
import argparse
import math
import os
import shutil
import subprocess
import sys

import numpy as np

TYPES = {"i8": np.int8, "u16": np.uint16, "i32": np.int32, "u64": np.uint64, "f32": np.float32, "f64": np.float64}
SHAPES = ("uniform", "one_top_digit", "all_equal", "low_byte_only")


def make_keys(type_name, shape, count, rng):
    dtype = np.dtype(TYPES[type_name])
    bits = rng.integers(0, 256, size=count * dtype.itemsize, dtype=np.uint8).view(dtype).copy()
    unsigned = np.dtype(f"u{dtype.itemsize}")
    raw = bits.view(unsigned)
    top_shift = unsigned.type(8 * dtype.itemsize - 8)
    if shape == "one_top_digit":
        # 90% of the keys share the top byte of one random key.
        pick = rng.random(count) < 0.9
        low_mask = unsigned.type((1 << (8 * dtype.itemsize - 8)) - 1)
        raw[pick] = (raw[pick] & low_mask) | (raw[0] >> top_shift << top_shift)
    elif shape == "all_equal":
        raw[:] = raw[0]
    elif shape == "low_byte_only":
        raw[:] = (raw[0] & ~unsigned.type(0xFF)) | (raw & unsigned.type(0xFF))
    keys = raw.view(dtype)
    if dtype.kind == "f" and shape != "all_equal":
        # Special values where numpy's order is defined: NaN last, -0.0 and 0.0 equal (input order kept).
        special = np.array([np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf], dtype=dtype)
        where = rng.integers(0, count, size=min(count, 4096))
        keys[where] = special[rng.integers(0, len(special), size=len(where))]
    return keys


def stable_order(keys, descending):
    """numpy's stable sorting permutation; descending as the stable order of reversed ranks."""
    if not descending:
        return np.argsort(keys, kind="stable")
    if keys.dtype.kind == "f":
        # Largest first with NaN first: sort by (not NaN, -key), stably.
        nan = np.isnan(keys)
        negated = -np.where(nan, keys.dtype.type(0), keys)
        return np.lexsort((negated, ~nan))
    if keys.dtype.kind == "u":
        return np.argsort(np.iinfo(keys.dtype).max - keys, kind="stable")
    return np.argsort(-keys.astype(np.int64) if keys.dtype.itemsize < 8 else ~keys, kind="stable")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("work_dir")
    parser.add_argument("--count", type=int, default=1 << 23)
    args = parser.parse_args()
    radix_sort = os.path.join(args.build_dir, "apps", "radix_sort", "radix_sort")
    os.makedirs(args.work_dir, exist_ok=True)
    path = lambda name: os.path.join(args.work_dir, name)
    rng = np.random.default_rng(7)
    cases = 0
    try:
        for type_name in TYPES:
            for shape in SHAPES:
                keys = make_keys(type_name, shape, args.count, rng)
                np.save(path("keys.npy"), keys)
                values = np.arange(args.count, dtype=np.uint32)
                np.save(path("values.npy"), values)
                def caps(place, element_bytes):
                    """--gpu-memory a quarter of the data; for spill files --host-memory an eighth, or the least the
                    plan's index of spill pieces needs (it grows as the square root of the data)."""
                    data = args.count * element_bytes
                    flags = ["--gpu-memory", str(data // 4)]
                    if place == "spill files":
                        least = int(math.sqrt(data * 256 * 16 * 64)) + (2 << 20)
                        flags += ["--host-memory", str(max(data // 8, least)), "--tmpdir", args.work_dir]
                    return flags
                for descending in (False, True):
                    order = stable_order(keys, descending)
                    expected = keys[order]
                    for place in ("host buckets", "spill files"):
                        common = (["-r"] if descending else []) + ["--no-progress", "--stats"]
                        flags = caps(place, keys.itemsize) + common
                        # Keys, with the plan checked to be out of core.
                        done = subprocess.run([radix_sort, path("keys.npy"), "-o", path("out.npy"), *flags],
                                              check=True, capture_output=True, text=True)
                        plan = next(line for line in done.stderr.splitlines() if "plan:" in line)
                        if "out of core" not in plan or (place == "spill files") != ("spill" in plan):
                            sys.exit(f"{type_name} {shape}: unexpected plan for {place}: {plan}")
                        got = np.load(path("out.npy"))
                        # Bit for bit: NaN payloads and the places of -0.0 and 0.0 too.
                        if not np.array_equal(got.view(f"u{keys.itemsize}"), expected.view(f"u{keys.itemsize}")):
                            sys.exit(f"MISMATCH keys: {type_name} {shape} {'desc' if descending else 'asc'} {place}")
                        # The permutation, and values carried along.
                        flags = caps(place, keys.itemsize + 8) + common
                        subprocess.run([radix_sort, path("keys.npy"), "--argsort", "-o", path("perm.npy"), *flags],
                                       check=True, capture_output=True)
                        if not np.array_equal(np.load(path("perm.npy")), order):
                            sys.exit(f"MISMATCH argsort: {type_name} {shape} {'desc' if descending else 'asc'} {place}")
                        flags = caps(place, keys.itemsize + 4) + common
                        subprocess.run([radix_sort, path("keys.npy"), "--values", path("values.npy"), "--values-out",
                                        path("vout.npy"), "-o", path("kout.npy"), *flags],
                                       check=True, capture_output=True)
                        if not np.array_equal(np.load(path("vout.npy")), values[order]):
                            sys.exit(f"MISMATCH values: {type_name} {shape} {'desc' if descending else 'asc'} {place}")
                        cases += 1
                        print(f"ok  {type_name:4} {shape:14} {'desc' if descending else 'asc ':4} {place:13} {plan}",
                              flush=True)
    finally:
        shutil.rmtree(args.work_dir, ignore_errors=True)
    print(f"all {cases} cases equal to numpy (keys, argsort and values each)")


if __name__ == "__main__":
    main()
