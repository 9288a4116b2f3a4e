#!/usr/bin/env python3
"""Sums an ncu CSV (--metrics gpu__time_duration.sum --csv) per kernel.

Usage: kernel_profile.py NCU_CSV [STEP_KERNEL]
Prints, per kernel name (template arguments kept, parameters dropped), the
launches, total and mean GPU microseconds, and the share of the total; and the
time per decode step, counting steps by STEP_KERNEL (default: argmax).
ncu serializes kernels and times each alone: the sum is GPU busy time without
launch gaps, the floor a CUDA-graph decode step would approach.
"""
import csv
import re
import sys
from collections import defaultdict


def short(name):
    name = re.sub(r"\(.*$", "", name)  # parameters
    name = re.sub(r"hearth::kernels::cuda::(\(anonymous namespace\)::)?", "", name)
    name = re.sub(r"hearth::kernels::GgmlType\)?", "", name)
    return name[:100]


def main():
    path = sys.argv[1]
    step_kernel = sys.argv[2] if len(sys.argv) > 2 else "argmax"
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    rows = list(csv.DictReader(lines))
    per = defaultdict(lambda: [0, 0.0])
    for r in rows:
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        v = float(r["Metric Value"].replace(",", ""))
        unit = r.get("Metric Unit", "nsecond")
        us = v / 1000.0 if unit.startswith("n") else v if unit.startswith("u") else v * 1000.0
        k = short(r["Kernel Name"])
        per[k][0] += 1
        per[k][1] += us
    total = sum(t for _, t in per.values())
    steps = sum(n for k, (n, _) in per.items() if step_kernel in k) or 1
    print(f"ncu: {sum(n for n, _ in per.values())} kernels, {total:.0f} us GPU time, {steps} steps "
          f"({step_kernel}): {total / steps:.0f} us per step")
    for k, (n, t) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        print(f"  {t / steps:8.1f} us/step {100 * t / total:5.1f}%  {n / steps:6.1f}/step  mean {t / n:7.2f} us  {k}")


if __name__ == "__main__":
    main()
