#!/usr/bin/env python3
"""Where a decode step's wall time goes, from an nsys trace (issue 20).

Reads the sqlite export of `nsys profile -t cuda --cuda-graph-trace=node`
and splits the kernels into steps at each occurrence of the step's last
kernel (a name given on the command line: Hearth's argmax), or before
each occurrence of its first (the name after a '^': llama.cpp's get_rows). For the steady steps (the first few and the last are skipped)
each kernel is charged its *marginal* time: its end minus the previous
kernel's end, the wall time the step would lose without it in a serial
chain (kernels that PDL or a second stream overlap are charged only what
sticks out; a step's first kernel is charged from the end of the step
before, so the host's time between steps lands on it). Per kernel (name, grid, dynamic shared memory): launches a
step, mean duration, mean marginal time, mean start-to-previous-end gap.

Usage: step_timeline.py TRACE.sqlite LAST_KERNEL_SUBSTRING [SKIP=4]
"""
import sqlite3
import sys
from collections import defaultdict


def main():
    path, last = sys.argv[1], sys.argv[2]
    skip = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    db = sqlite3.connect(path)
    names = dict(db.execute("select id, value from StringIds"))
    rows = db.execute(
        "select start, end, shortName, gridX, gridY, gridZ, dynamicSharedMemory from CUPTI_ACTIVITY_KIND_KERNEL "
        "order by end").fetchall()
    first = last.startswith("^")  # split before this kernel instead of after it
    last = last.lstrip("^")
    steps, cur = [], []
    for start, end, sid, gx, gy, gz, smem in rows:
        name = names.get(sid, str(sid))
        if first and last in name and cur:
            steps.append(cur)
            cur = []
        cur.append((start, end, name, (gx, gy, gz), smem))
        if not first and last in name:
            steps.append(cur)
            cur = []
    # Steps that look like decode steps: the most common kernel count.
    counts = defaultdict(int)
    for s in steps:
        counts[len(s)] += 1
    if not counts:
        print("no steps found (last kernel %r)" % last)
        return 1
    n = max(counts, key=lambda k: (counts[k], k))
    # Each step with the end of the step before it (its wall time runs from
    # there: the host's work between steps counts).
    steady = [(steps[i - 1][-1][1], s) for i, s in enumerate(steps) if i > 0 and len(s) == n][skip:-1]
    if not steady:
        print("too few steady steps: %s" % dict(counts))
        return 1
    agg = defaultdict(lambda: [0, 0.0, 0.0, 0.0])  # launches, duration, marginal, gap
    walls, busy = [], []
    for before, s in steady:
        walls.append(s[-1][1] - before)
        prev_end = before
        covered, cov_end = 0, before
        for start, end, name, grid, smem in s:
            key = (name[:40], "%dx%dx%d" % grid, smem)
            a = agg[key]
            a[0] += 1
            a[1] += end - start
            a[2] += max(0, end - prev_end)
            a[3] += start - prev_end
            prev_end = max(prev_end, end)
            lo = max(start, cov_end)
            if end > lo:
                covered += end - lo
                cov_end = end
        busy.append(covered)
    k = len(steady)
    wall = sum(walls) / k / 1e3
    print("steps %d (of %d; %d kernels each), wall %.1f us a step, kernels running %.1f us (%.0f%%)" %
          (k, len(steps), n, wall, sum(busy) / k / 1e3, 100.0 * sum(busy) / sum(walls)))
    print("%-40s %-12s %7s %6s %9s %9s %9s %9s" %
          ("kernel", "grid", "smem", "/step", "dur us", "marg us", "gap us", "marg/step"))
    for key, a in sorted(agg.items(), key=lambda kv: -kv[1][2]):
        c = a[0]
        print("%-40s %-12s %7d %6.1f %9.2f %9.2f %9.2f %9.1f" %
              (key[0], key[1], key[2], c / k, a[1] / c / 1e3, a[2] / c / 1e3, a[3] / c / 1e3, a[2] / k / 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
