"""manywall.py - the million-file curve in elapsed time, with ext4 beside it
(issue 11): unixfs (`edscale`) and Linux's ext4 (`lxbench -F`, the same
work: files of 1 KiB, 100 per directory, no sync until the end) on the
same machine, disk and memory, their boots interleaved.

  tools/bench/python.sh tools/bench/manywall.py [--files N] [--every K]
        [--rounds R] [--size SIZE] [--mem MEM] [--out DIR]
  tools/bench/python.sh tools/bench/manywall.py --logs DIR [--out DIR]

Needs `make` and `make linux-guest`.  Each round boots our kernel
(`mkfs; edscale -n N -d 100 -c K`) and Linux (tools/linux/run.sh ext4 -F N
-P 100 -E K), both through tools/bench/qemuboot.py, each on a new sparse
disk of SIZE (default 16G: ext4's one inode per 16 KiB then gives the
1,048,576 inodes that a million files in 10,000 directories need) and MEM
of memory (default 1G); without ICOUNT, so the guests' clocks are the
host's.  Odd rounds boot unixfs first, even rounds ext4 first, so a load
that drifts during a round weighs on both sides alike.  The host's load
average is taken before and after every boot (DIR/loads.csv).  The second
form reads the logs of such a run again.

Writes DIR/manywall.csv (per window of K files: each side's elapsed and CPU
time per file, medians over the rounds, and memory), DIR/manywall.md (the
table at 10^3 .. N, the ratios, the loads) and DIR/fig-manywall.png.

What is compared is the time to accept the files (no sync until the end;
the final sync is reported apart): each side writes back when it chooses
(unixfs every 8 MiB of small files and a commit every 16,384 files; Linux
in its flusher threads and the ext4 journal's commit every 5 s).  Elapsed
time under TCG depends on the host's load: read the ratio of the two sides
in the same round.  CPU per file: our program's time less its sleeps in
system calls; Linux's CLOCK_PROCESS_CPUTIME_ID (user and system time of
lxbench, not of the kernel's threads).  Memory: our program's heap (the
library file system's state) beside Linux's slab (dentries, inodes, buffer
heads, journal) and page cache.
"""
import argparse
import csv
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qemuboot  # noqa: E402
from qemuboot import ROOT  # noqa: E402

SIDES = ("unixfs", "ext4")


def run(a):
    """Boot the rounds; logs DIR/unixfs-R.log and DIR/ext4-R.log."""
    os.makedirs(a.out, exist_ok=True)
    env = {"DISK_SIZE": a.size, "MEM": a.mem, "ICOUNT": ""}
    timeout = max(900, a.files // 50)
    with open(os.path.join(a.out, "loads.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "side", "status", "seconds", "load_before", "load_after"])
        for rnd in range(1, a.rounds + 1):
            order = SIDES if rnd % 2 else SIDES[::-1]
            for side in order:
                log = os.path.join(a.out, "%s-%d.log" % (side, rnd))
                before, t0 = os.getloadavg()[0], time.time()
                with qemuboot.scratch("manywall-") as d:
                    try:
                        if side == "unixfs":
                            rc = qemuboot.boot("mkfs; edscale -n %d -d 100 -c %d" % (a.files, a.every),
                                               log, d, env=env, timeout=timeout)
                        else:
                            rc = qemuboot.boot(None, log, d, env=env, timeout=timeout,
                                               linux=["ext4", "-F", a.files, "-P", 100, "-E", a.every])
                    except Exception as e:  # a time limit: the boot and its QEMU are stopped
                        print("manywall: round %d %s: %s" % (rnd, side, e), file=sys.stderr)
                        rc = 124
                secs, after = time.time() - t0, os.getloadavg()[0]
                w.writerow([rnd, side, rc, "%.1f" % secs, "%.1f" % before, "%.1f" % after])
                f.flush()
                print("manywall: round %d %s: status %d, %.0f s, load %.1f -> %.1f" %
                      (rnd, side, rc, secs, before, after), flush=True)


def creates(log):
    return {r["files"]: r for r in qemuboot.records(log) if r.get("what") == "create"}


def finals(log):
    return [r for r in qemuboot.records(log) if r.get("what") == "files"]


def at(win, n, key="us_per_file"):
    """The cost at n files of one run: the median over its windows ending in
    (n/2, n] (at n = the first mark, its one window there)."""
    v = [float(r[key]) for f, r in win.items() if n / 2 < f <= n]
    return statistics.median(v) if v else None


def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def fmt(x, spec):
    return "-" if x is None else spec.format(x)


def report(a):
    logs = {s: sorted(os.path.join(a.logs, l) for l in os.listdir(a.logs)
                      if l.startswith(s + "-") and l.endswith(".log")) for s in SIDES}
    runs = {s: [w for w in (creates(l) for l in logs[s]) if w] for s in SIDES}
    for s in SIDES:
        if not runs[s]:
            print("manywall: no create lines for %s in %s" % (s, a.logs), file=sys.stderr)
            return 1
    # Each side's windows that every one of its runs reached (a run cut
    # short - a time limit - ends its side's curve there).
    files = {s: sorted(set.intersection(*(set(w) for w in runs[s]))) for s in SIDES}
    every = files["unixfs"][1] - files["unixfs"][0] if len(files["unixfs"]) > 1 else files["unixfs"][0]
    rounds = min(len(runs["unixfs"]), len(runs["ext4"]))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "manywall.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["files", "unixfs_us_per_file", "ext4_us_per_file", "unixfs_cpu_us_per_file",
                    "ext4_cpu_us_per_file", "unixfs_heap_kib", "ext4_slab_kib", "ext4_cached_kib"])
        u, x = runs["unixfs"], runs["ext4"]
        fu, fx = set(files["unixfs"]), set(files["ext4"])
        for n in sorted(fu | fx):
            w.writerow([n] + [med(r[n]["us_per_file"] for r in u) if n in fu else "",
                              med(r[n]["us_per_file"] for r in x) if n in fx else "",
                              med(r[n]["cpu_us_per_file"] for r in u) if n in fu else "",
                              med(r[n]["cpu_us_per_file"] for r in x) if n in fx else "",
                              max(r[n]["heap_kib"] for r in u) if n in fu else "",
                              max(r[n]["slab_kib"] for r in x) if n in fx else "",
                              max(r[n]["cached_kib"] for r in x) if n in fx else ""])
    first = min(files["unixfs"][0], files["ext4"][0])
    last = max(files["unixfs"][-1], files["ext4"][-1])
    marks = [n for n in (1000, 10000, 100000, 1000000) if first <= n <= last]
    for s in SIDES:
        if files[s][-1] not in marks:
            marks.append(files[s][-1])
    marks.sort()

    def side_at(s, n, key="us_per_file"):
        if n > files[s][-1]:
            return None
        return med(at({f: r[f] for f in files[s]}, n, key) for r in runs[s])

    def mem_at(s, n, key):
        v = [r[f][key] for r in runs[s] for f in files[s] if f <= n]
        return max(v) / 1024 if v else None

    out = ["| files | unixfs us/file | vs its first | ext4 us/file | vs its first | ext4 / unixfs "
           "(rounds' median, range) | CPU us/file unixfs / ext4 | unixfs heap / ext4 slab (MiB) |",
           "|---|---|---|---|---|---|---|---|"]
    base = {s: side_at(s, marks[0]) for s in SIDES}
    for n in marks:
        e = {s: side_at(s, n) for s in SIDES}
        c = {s: side_at(s, n, "cpu_us_per_file") for s in SIDES}
        ratio = "-"
        if e["unixfs"] is not None and e["ext4"] is not None:
            rs = [at({f: runs["ext4"][i][f] for f in files["ext4"]}, n) /
                  at({f: runs["unixfs"][i][f] for f in files["unixfs"]}, n) for i in range(rounds)]
            ratio = "{:.1f}x ({:.1f}-{:.1f})".format(statistics.median(rs), min(rs), max(rs))
        out.append("| {:,} | {} | {} | {} | {} | {} | {} / {} | {} / {} |".format(
            n, fmt(e["unixfs"], "{:.1f}"),
            fmt(e["unixfs"] / base["unixfs"] if e["unixfs"] is not None else None, "{:.2f}x"),
            fmt(e["ext4"], "{:.1f}"),
            fmt(e["ext4"] / base["ext4"] if e["ext4"] is not None else None, "{:.2f}x"), ratio,
            fmt(c["unixfs"], "{:.1f}"), fmt(c["ext4"], "{:.1f}"),
            fmt(mem_at("unixfs", n, "heap_kib") if n <= files["unixfs"][-1] else None, "{:.0f}"),
            fmt(mem_at("ext4", n, "slab_kib") if n <= files["ext4"][-1] else None, "{:.0f}")))
    out.append("")
    out.append("%d round(s); per run, the median of its windows of %d files ending in (N/2, N]; then the "
               "median over the rounds." % (rounds, every))
    for s in SIDES:
        if files[s][-1] < last:
            out.append("%s: its runs stopped at %s files." % (s, "{:,}".format(files[s][-1])))
    fu = [finals(l) for l in logs["unixfs"]]
    fx = [finals(l) for l in logs["ext4"]]
    if all(fu) and all(fx):
        out.append("All %s files to the end of the final sync, per round: unixfs %s s; ext4 %s s "
                   "(of which the final sync %s s)." % (
                       "{:,}".format(fu[0][0]["files"]),
                       ", ".join("%.1f" % (r[0]["create_ms"] / 1000) for r in fu),
                       ", ".join("%.1f" % ((r[0]["create_ms"] + r[0]["sync_ms"]) / 1000) for r in fx),
                       ", ".join("%.1f" % (r[0]["sync_ms"] / 1000) for r in fx)))
    loads = os.path.join(a.logs, "loads.csv")
    if os.path.exists(loads):
        with open(loads) as f:
            rows = list(csv.DictReader(f))
        lv = [float(r[k]) for r in rows for k in ("load_before", "load_after")]
        if lv:
            out.append("Host load average (1 min) before and after the boots: %.1f-%.1f; boots: %s." % (
                min(lv), max(lv), ", ".join("%s %s s" % (r["side"], r["seconds"]) for r in rows)))
    text = "\n".join(out) + "\n"
    with open(os.path.join(a.out, "manywall.md"), "w") as f:
        f.write(text)
    print(text, end="")
    plot(a, files, runs)
    return 0


def plot(a, files, runs):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("manywall: no matplotlib, no figure", file=sys.stderr)
        return
    fig, (t, m) = plt.subplots(1, 2, figsize=(11, 4))
    for side, label, color in (("unixfs", "unixfs (edscale)", "C0"), ("ext4", "Linux ext4 (lxbench -F)", "C3")):
        x = files[side]
        t.plot(x, [med(r[n]["us_per_file"] for r in runs[side]) for n in x], ".", ms=3,
               color=color, label=label + ": elapsed")
        t.plot(x, [med(r[n]["cpu_us_per_file"] for r in runs[side]) for n in x], "-", lw=0.8,
               color=color, alpha=0.6, label=label + ": its CPU")
    every = files["unixfs"][1] - files["unixfs"][0] if len(files["unixfs"]) > 1 else 1
    t.set_xscale("log")
    t.set_yscale("log")
    t.set_xlabel("files on the file system")
    t.set_ylabel("time per file created, windows of %d (us)" % every)
    t.set_title("Per file, medians over %d round(s)" % min(len(runs["unixfs"]), len(runs["ext4"])))
    t.legend(fontsize=7)
    xu, xx = files["unixfs"], files["ext4"]
    m.plot(xu, [max(r[n]["heap_kib"] for r in runs["unixfs"]) / 1024 for n in xu], color="C0",
           label="unixfs: the program's heap")
    m.plot(xx, [max(r[n]["slab_kib"] for r in runs["ext4"]) / 1024 for n in xx], color="C3",
           label="Linux: kernel slab (dentries, inodes, ...)")
    m.plot(xx, [max(r[n]["cached_kib"] for r in runs["ext4"]) / 1024 for n in xx], color="C3", ls="--",
           label="Linux: page cache")
    m.set_xscale("log")
    m.set_yscale("log")
    m.set_xlabel("files on the file system")
    m.set_ylabel("MiB")
    m.set_title("Memory that follows the files (guest of %s)" % a.mem)
    m.legend(fontsize=7)
    fig.tight_layout()
    path = os.path.join(a.out, "fig-manywall.png")
    fig.savefig(path, dpi=110)
    print("manywall: figure in %s" % path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=100000)
    ap.add_argument("--every", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", default="16G")
    ap.add_argument("--mem", default="1G")
    ap.add_argument("--logs", help="read the logs in this directory instead of running")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "manywall"))
    a = ap.parse_args(argv)
    if a.files < a.every or a.every <= 0 or a.rounds <= 0:
        ap.error("--files must be at least --every, and both and --rounds positive")
    if a.logs is None:
        run(a)
        a.logs = a.out
    return report(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
