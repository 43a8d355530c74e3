#!/usr/bin/env python3
"""Wall time and peak memory of whole processes, for the GPU scripts (probe-gpu.sh, gpu-nccl.sh).

    measure_runs.py RUNS COMMANDS_JSON [--interleave]

COMMANDS_JSON is a list of [name, argv]. Each command runs once to warm up, then RUNS times; with
--interleave the commands take turns (a machine that gets busier or quieter meanwhile weighs on
all alike), else each runs all its times in a row. Peak memory: /proc is sampled every 2 ms for
the process and its children (`cvm probe` runs cvm-probe as a child) and the largest sum of their
resident sizes, or the largest single VmHWM, is kept; wait4's ru_maxrss is given too, but it cannot
go below this Python's own size (a forked child starts with its parent's pages). Prints one JSON
list: per command its runs, walls_s, mean_s, median_s, min_s, max_s, peak_rss_mib, ru_maxrss_mib,
exit_codes.
"""
import json
import os
import statistics
import subprocess
import sys
import time


def kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree(pid):
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return pids


def once(argv):
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        pids = tree(child.pid)
        peak = max(peak, sum(kib(p, "VmRSS") for p in pids), *(kib(p, "VmHWM") for p in pids))
        time.sleep(0.002)
    return time.perf_counter() - start, peak / 1024.0, usage.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status)


def main():
    runs = int(sys.argv[1])
    commands = json.loads(sys.argv[2])
    interleave = "--interleave" in sys.argv[3:]
    seen = {name: [] for name, _ in commands}
    if interleave:
        for _, argv in commands:
            once(argv)
        for _ in range(runs):
            for name, argv in commands:
                seen[name].append(once(argv))
    else:
        for name, argv in commands:
            once(argv)
            seen[name] = [once(argv) for _ in range(runs)]
    out = []
    for name, _ in commands:
        walls = [r[0] for r in seen[name]]
        out.append({"name": name, "runs": runs, "walls_s": walls, "mean_s": statistics.mean(walls),
                    "median_s": statistics.median(walls), "min_s": min(walls), "max_s": max(walls),
                    "peak_rss_mib": max(r[1] for r in seen[name]),
                    "ru_maxrss_mib": max(r[2] for r in seen[name]),
                    "exit_codes": sorted(set(r[3] for r in seen[name]))})
    json.dump(out, sys.stdout, indent=2)


if __name__ == "__main__":
    main()
