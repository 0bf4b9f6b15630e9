#!/usr/bin/env python3
"""million.py - issue 11's million-file target, as the lead checks it: the
mean time per file over the last 100,000 files of one run against the mean
over its first 100,000 (target: at most 1.25x), on 16 GiB and 64 GiB disks.

  python3 tools/bench/million.py [--sizes 16G,64G] [--rounds R] [--files N]
        [--icount] [--memtouch] [--out DIR]
  python3 tools/bench/million.py --logs LOG...     (the figures again from logs)

Each run boots `mkfs; edscale -n N -d 100 -c 5000; df /` on a new sparse
disk of each size, with 1 GiB of memory, through qemuboot.boot (its own
scratch directory each time; stopped with its QEMU after a day); rounds
go through the sizes in turn so that a load that drifts weighs on both.
Elapsed time unless --icount (ICOUNT=1: the guest's clock counts
instructions, exact whatever the host's load; the elapsed target cannot
be read from such a run).  With --memtouch, QEMU runs tools/memtouch
(make memtouch) and its per-file locality figures (pages, lines,
TLB-model and cache-model misses) are given for the same first and last
100,000 files.  `uptime` is printed
before and after each run: elapsed figures mean little on a loaded host.

Per run it prints: the window means per file (us_per_file, and
cpu_us_per_file: the time less sleeps) over files (0, W] and (N - W, N],
with W = N / 10, their ratio, and the whole run's time.  Logs are kept in
DIR (default a new directory under /tmp).  Needs `make` (and `make
memtouch` for --memtouch).
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemuboot  # noqa: E402

TIMEOUT = 24 * 3600      # a million files take hours (as manyfiles.py allows)


def parse(path):
    """The create windows and the memtouch lines of one run's log."""
    creates = [r for r in qemuboot.records(path) if r.get("what") == "create"]
    touch = []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("memtouch units="):
                touch.append(dict((k, float(v)) for k, v in
                                  (w.split("=") for w in line.split()[1:])))
    return creates, touch


def mean_over(rows, key, lo, hi, at="files"):
    """The mean of key over windows ending in (lo, hi]: the mean per file,
    the windows being of equal size."""
    v = [r[key] for r in rows if lo < r[at] <= hi]
    return sum(v) / len(v) if v else float("nan")


def report(path, label):
    creates, touch = parse(path)
    if not creates:
        print(f"{label}: no create windows in {path}")
        return None
    n = max(r["files"] for r in creates)
    w = n // 10
    out = {}
    for key in ("us_per_file", "cpu_us_per_file"):
        a, b = mean_over(creates, key, 0, w), mean_over(creates, key, n - w, n)
        out[key] = (a, b, b / a if a else float("nan"))
    total = max(r["elapsed_ms"] for r in creates) / 1000
    e, c = out["us_per_file"], out["cpu_us_per_file"]
    print(f"{label}: {n} files in {total:.1f} s; per file, first {w} / last {w}: "
          f"elapsed {e[0]:.2f} / {e[1]:.2f} us = {e[2]:.2f}x; "
          f"cpu {c[0]:.2f} / {c[1]:.2f} us = {c[2]:.2f}x")
    # memtouch: a line per `every` units; units count files (the last line,
    # after the final mark, is the sync and is left out).
    touch = [t for t in touch if t["units"] <= n]
    if touch:
        parts = []
        for key in ("insns", "acc", "pages", "lines", "tlbmiss", "cmiss"):
            a = mean_over(touch, key, 0, w, "units")
            b = mean_over(touch, key, n - w, n, "units")
            parts.append(f"{key} {a:.1f} -> {b:.1f}")
        print(f"{label}: memtouch per file, first -> last: " + "; ".join(parts))
    return out


def uptime():
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="16G,64G")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--files", type=int, default=1000000)
    ap.add_argument("--icount", action="store_true")
    ap.add_argument("--memtouch", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--logs", nargs="*")
    a = ap.parse_args()
    if a.logs:
        for p in a.logs:
            report(p, os.path.basename(p))
        return 0
    out = os.path.abspath(a.out or tempfile.mkdtemp(prefix="million."))
    os.makedirs(out, exist_ok=True)
    every = 5000 if a.files >= 50000 else max(1, a.files // 20)
    for rnd in range(1, a.rounds + 1):
        for size in a.sizes.split(","):
            log = os.path.join(out, f"r{rnd}-{size}{'-icount' if a.icount else ''}.log")
            env = {"DISK_SIZE": size, "MEM": "1G"}
            if a.icount:
                env["ICOUNT"] = "1"
            if a.memtouch:
                env["PLUGIN"] = f"build/tools/memtouch.so,every={every},out={log}.memtouch"
            print(f"round {rnd} {size}: before: {uptime()}", flush=True)
            with qemuboot.scratch("million-disk.") as d:
                status = qemuboot.boot(f"mkfs; edscale -n {a.files} -d 100 -c {every}; df /",
                                       log, d, env=env, timeout=TIMEOUT)
            print(f"round {rnd} {size}: after:  {uptime()}  (QEMU status {status}, log {log})",
                  flush=True)
            if a.memtouch and os.path.exists(log + ".memtouch"):
                with open(log, "a") as f, open(log + ".memtouch") as m:
                    f.write(m.read())
            report(log, f"round {rnd} {size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
