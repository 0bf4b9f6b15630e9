"""lfsclean.py - lfs's cleaner experiment (issue 13): its boots, a runner of
its own, and its part of a report - the table and the plot in the manner of
Sprite LFS (write cost against the disk's utilization) and the throughput
over time with the cleaner running.

  tools/bench/python.sh tools/bench/lfsclean.py [--quick] [--icount] [--runs N] [--out DIR]
  tools/bench/python.sh tools/bench/lfsclean.py --logs LOG... [--out DIR]

runs `exobench lfsclean` (apps/exobench/lfsclean.c) through
tools/run-qemu.sh (after `make`) on a blank 512 MiB virtio-blk disk, one
boot per workload per run, the workloads interleaved run by run so the
host's load falls on both alike:

  uniform   files chosen uniformly at random are overwritten
  hot-cold  90% of the overwrites go to a tenth of the files (Sprite LFS's
            hot-and-cold), so the cost-benefit policy has ages to use

Each boot does every utilization (20, 40, 60, 80, 90% of a 32 MiB lfs
volume live: 256 segments of 128 KiB; files of 16 KiB), each on a fresh
lfs, overwriting 10 times the free space in 20 parts.  --icount boots
with ICOUNT=1 on a RAM disk instead: time is executed instructions, so the
figures are the same on a loaded host and one run is enough (the CPU's
share of the cleaner's cost; a real disk adds its transfers and
flushes).  --logs builds the
report from boots already run.  Writes DIR/records.json, DIR/report.md
(medians over the runs) and DIR/fig-lfsclean.png (if matplotlib is there;
tools/bench/python.sh finds a python3 that has it), and the boots' logs.
(Not an experiment of `make bench`: tools/bench/run.py runs one command
per boot with its own report; report() and plot() are written so that
report.py can call them.)

Write cost is Sprite LFS's: (bytes the log wrote, new and the cleaner's,
plus the bytes the cleaner read) / new bytes.  The reference curve
2/(1-u) is the cost of cleaning segments exactly as full as the disk.
Issue 13's target: at 80%, the throughput of overwriting stays >= 50% of
the empty-disk figure (the fill: the same files written into the empty
file system, in the same boot).
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemuboot  # noqa: E402
from qemuboot import ROOT  # noqa: E402

RUNS = 3
ENV = {"ARCH": "riscv", "DISK": "virtio", "DISK_SIZE": "512M", "MEM": "1G"}
ICOUNT_ENV = {"ARCH": "riscv", "DISK": "ram", "ICOUNT": "1", "MEM": "1G"}
ICOUNT_BOOT = "rawio=1 edbind=20480 ramdisk=256"
WORKLOADS = [("uniform", ""), ("hot-cold", " -H 90")]


def entries(quick, runs, icount=False):
    cmd = "exobench lfsclean -U 50,80 -S 64 -x 2 -i 4" if quick else "exobench lfsclean"
    out = []
    for r in range(runs):
        for name, extra in WORKLOADS:
            out.append(dict(id="%s-%d" % (name, r + 1), workload=name, run=r + 1, cmd=cmd + extra,
                            boot=ICOUNT_BOOT if icount else "rawio=1",
                            env=ICOUNT_ENV if icount else ENV, timeout=600 if quick else 3 * 3600))
    return out


def boot(entry, out):
    log = os.path.join(out, "logs", entry["id"] + ".log")
    t0 = time.time()
    with qemuboot.scratch("lfsclean-") as d:
        status = qemuboot.boot(entry["cmd"], log, d, env=entry["env"], bootargs=entry["boot"],
                               timeout=entry["timeout"])
    recs = parse(log, entry["workload"], entry["run"])
    if status != 0 or not any(r["phase"] == "overwrite" for r in recs):
        raise RuntimeError("%s: exit %d, see %s" % (entry["id"], status, log))
    print("  %s: %.0f s, %d records" % (entry["id"], time.time() - t0, len(recs)), flush=True)
    return recs


def parse(path, workload=None, run=None):
    recs = []
    for r in qemuboot.records(path):
        if r.get("bench") != "lfsclean":
            continue
        r["workload"] = workload or ("hot-cold" if r.get("hot") else "uniform")
        r["run"] = run or path
        recs.append(r)
    return recs


def _med(v):
    return statistics.median(v) if v else None


def empty_figure(records):
    """The empty-disk figure of each boot: the median MB/s of its fills (the
    files written into an empty file system, at every utilization: one
    short fill alone is at the mercy of the host's load)."""
    fills = {}
    for r in records:
        if r["phase"] == "fill":
            fills.setdefault((r["workload"], r["run"]), []).append(r["mbps"])
    return {k: statistics.median(v) for k, v in fills.items()}


def compute(records):
    """Per workload and utilization: medians over the runs."""
    empty = empty_figure(records)
    rows = {}
    for r in records:
        key = (r["workload"], r["util"])
        row = rows.setdefault(key, {"fill": [], "ow": [], "worst": [], "wcost": [], "cleaned": [],
                                    "ucl": [], "runs": set()})
        row["runs"].add(r["run"])
        e = empty.get((r["workload"], r["run"]))
        if r["phase"] == "fill":
            row["fill"].append(e)
        elif r["phase"] == "overwrite":
            row["ow"].append(r["mbps"])
            row["worst"].append(r["worst_mbps"] / e if e else None)
            row["wcost"].append(r["wcost"])
            row["cleaned"].append(r["cleaned"])
            if "u_cleaned" in r and r["cleaned"]:
                row["ucl"].append(r["u_cleaned"])
    out = []
    for (w, u), row in sorted(rows.items(), key=lambda kv: ([n for n, _ in WORKLOADS].index(kv[0][0])
                                                            if kv[0][0] in dict(WORKLOADS) else 9, kv[0][1])):
        fill, ow = _med(row["fill"]), _med(row["ow"])
        out.append(dict(workload=w, util=u, runs=len(row["runs"]), fill=fill, ow=ow,
                        ow_vs_fill=ow / fill if fill and ow is not None else None,
                        worst_vs_fill=_med([w for w in row["worst"] if w is not None]), wcost=_med(row["wcost"]),
                        cleaned=_med(row["cleaned"]), ucl=_med(row["ucl"])))
    return out


def _f(v, fmt):
    return "-" if v is None else fmt % v


def report(records):
    rows = compute(records)
    L = ["## lfs: the cleaner - write cost and throughput against utilization", ""]
    L.append("Empty-disk figure: per boot, the median MB/s of its fills (files written into the empty "
             "file system, at every utilization).  Overwrite: all of the overwriting; slowest part: the "
             "slowest of its timed parts.  u of those: the live share of the segments cleaned, when "
             "chosen (2/(1-u) of it is the write cost before summaries, inodes and checkpoints).  "
             "Medians over the runs.")
    L.append("")
    L.append("| workload | utilization | runs | empty-disk MB/s | overwrite MB/s | overwrite / empty "
             "| slowest part / empty | write cost | 2/(1-u) | segments cleaned | u of those |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        u = r["util"] / 100
        L.append("| %s | %d%% | %d | %s | %s | %s | %s | %s | %.2f | %s | %s |" % (
            r["workload"], r["util"], r["runs"], _f(r["fill"], "%.2f"), _f(r["ow"], "%.2f"),
            _f(r["ow_vs_fill"] and 100 * r["ow_vs_fill"], "%.0f%%"),
            _f(r["worst_vs_fill"] and 100 * r["worst_vs_fill"], "%.0f%%"), _f(r["wcost"], "%.2f"),
            2 / (1 - u), _f(r["cleaned"], "%.0f"), _f(r["ucl"], "%.2f")))
    L.append("")
    targets = []
    for r in rows:
        if r["util"] == 80 and r["ow_vs_fill"] is not None:
            targets.append(("%s, 80%% full: the overwriting >= 50%% of the empty-disk figure"
                            % r["workload"], "%.0f%%" % (100 * r["ow_vs_fill"]), r["ow_vs_fill"] >= 0.5))
        if r["util"] == 80 and r["worst_vs_fill"] is not None:
            ok = r["worst_vs_fill"] >= 0.5
            targets.append(("%s, 80%% full: slowest part of the overwriting >= 50%% of the empty-disk "
                            "figure" % r["workload"], "%.0f%%" % (100 * r["worst_vs_fill"]), ok))
    for name, got, ok in targets:
        L.append("- %s: %s (%s)" % (name, got, "met" if ok else "NOT met"))
    L.append("")
    L.append("![lfs cleaner](fig-lfsclean.png)")
    return L, targets


def plot(outdir, records, quick):
    """fig-lfsclean.png: throughput over time at 80%, and write cost against utilization."""
    rows = compute(records)
    if not rows:
        return []
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    a = ax[0]
    util = 80 if any(r["util"] == 80 for r in rows) else rows[-1]["util"]
    for w, _ in WORKLOADS:
        runs = sorted({r["run"] for r in records if r["workload"] == w and r["util"] == util}, key=str)
        for k, run in enumerate(runs):
            pts = sorted((r["i"], r) for r in records if r["workload"] == w and r["util"] == util
                         and r["run"] == run and r["phase"] == "interval")
            fill = [empty_figure(records).get((w, run))]
            if not pts or not fill[0]:
                continue
            xs = [r["at_bytes"] / (1 << 20) for _, r in pts]
            ys = [100 * r["mbps"] / fill[0] for _, r in pts]
            a.plot(xs, ys, marker=".", color="C0" if w == "uniform" else "C1", alpha=0.8,
                   label=w if k == 0 else None)
    a.axhline(100, color="gray", lw=0.8)
    a.axhline(50, color="red", lw=0.8, ls="--", label="target: 50% of the empty disk")
    a.set_xlabel("MiB overwritten")
    a.set_ylabel("throughput, % of the empty-disk figure")
    a.set_ylim(bottom=0)
    a.set_title("overwriting at %d%% full, cleaner running%s" % (util, " (QUICK)" if quick else ""))
    a.legend(fontsize=8)
    b = ax[1]
    for w, _ in WORKLOADS:
        pts = [(r["util"], r["wcost"]) for r in rows if r["workload"] == w and r["wcost"] is not None]
        if pts:
            b.plot([u for u, _ in pts], [c for _, c in pts], marker="o", label="lfs, " + w)
    us = [x / 100 for x in range(5, 96)]
    b.plot([100 * u for u in us], [2 / (1 - u) for u in us], color="gray", ls=":",
           label="2/(1-u): segments as full as the disk")
    b.set_xlabel("disk utilization (%)")
    b.set_ylabel("write cost")
    b.set_ylim(0, 20)
    b.set_xlim(0, 100)
    b.set_title("write cost (Sprite LFS's definition)")
    b.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(outdir, "fig-lfsclean.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def main(argv):
    ap = argparse.ArgumentParser(description="lfs's cleaner experiment (issue 13)")
    ap.add_argument("--quick", action="store_true", help="a 8 MiB volume, 50 and 80%%, one run")
    ap.add_argument("--icount", action="store_true",
                    help="time in executed instructions on a RAM disk (one run is enough)")
    ap.add_argument("--runs", type=int, help="runs per workload (default %d; 1 with --quick)" % RUNS)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "lfsclean"))
    ap.add_argument("--logs", nargs="+", help="build the report from these boots' logs instead")
    a = ap.parse_args(argv)
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    records, load = [], []
    if a.logs:
        for p in a.logs:
            records += parse(p)
    else:
        for e in entries(a.quick, a.runs or (1 if a.quick or a.icount else RUNS), a.icount):
            load.append(os.getloadavg()[0])
            records += boot(e, a.out)
    with open(os.path.join(a.out, "records.json"), "w") as f:
        json.dump(records, f, indent=1)
    lines, targets = report(records)
    lines.insert(1, "")
    where = ("host load average %.1f-%.1f during the runs (shared machine)" % (min(load), max(load))
             if load else "from logs")
    lines.insert(2, "Command: `tools/bench/python.sh tools/bench/lfsclean.py %s`; %s." % (" ".join(argv), where))
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    try:
        plot(a.out, records, a.quick)
    except ImportError:
        print("lfsclean.py: no matplotlib: no plot (tools/bench/python.sh finds one)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
