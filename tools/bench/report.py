#!/usr/bin/env python3
"""report.py - the report of `make bench`: our numbers beside the thesis's.

    report.py [--results DIR] [--beside DIR2] [--check]

Reads DIR/results.jsonl and DIR/run.json (written by tools/bench/run.py)
and the thesis's published numbers (tools/bench/thesis-results.csv), and
writes:

    DIR/report.md      one table per Appendix A table (and Figure 5-6's
                       experiment), ours on each platform beside the thesis's;
                       the ratios that matter; the targets, met or missed;
                       ours beside Linux when the comparison ran (compare.py)
    DIR/summary.csv    every cell: runs, mean, sample sd, median, min, max
    DIR/plots/*.png    figures in the manner of thesis Figures 5-1 to 5-7,
                       titled with the sizes that actually ran, and
                       fig-linux.png

--beside DIR2 adds the platforms of another run that DIR lacks (`make
bench ARCH=x86_64` puts RISC-V's results/ beside its results/x86_64/, so
the protection overheads of both architectures stand in the same tables);
they are shown, never checked.

With --check it also verifies that the results are well formed - every
cell of every table present on every platform that ran, with the runs
the suite asked for, every value a finite number of the right sign - and
that the report and plots were written; exit status 1 otherwise.  It never
judges the timings themselves (make test runs it after `make bench QUICK=1`).

Needs matplotlib (Debian's python3-matplotlib; tools/bench/bench.mk picks
an interpreter that has it).
"""
import argparse
import csv
import json
import math
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare  # noqa: E402
import suite  # noqa: E402

PLATFORM_TITLE = {"model": "RZ25 model", "virtio": "virtio-blk",
                  "x86_64-model": "RZ25 model, x86-64", "x86_64-virtio": "virtio-blk, x86-64"}

# Our names -> the thesis's (tools/bench/thesis-results.csv).
SMALL_ROWS = [("extent", "Extent"), ("exonode", "Exonode"), ("raw", "Disk Driver"), ("unixfs", "Ultrix FS")]
SMALL_PHASES = [("write", "alloc+write"), ("read", "read"), ("dealloc", "dealloc")]
LARGE_PHASES = [("seqwrite", "seq write"), ("seqread", "seq read"), ("randwrite", "rand write"),
                ("randread", "rand read")]
LAYOUTS = [("partitioned", "Partitioned"), ("neighboring", "Neighboring"), ("interleaved", "Interleaved")]
IL_PHASES = [("seqwrite", "seq write"), ("seqread", "seq read"), ("randwrite", "rand write"),
             ("randread", "rand read"), ("dealloc", "dealloc")]
INSERT_SIZES = [(10240, "10KB"), (102400, "100KB"), (1024000, "1000KB")]
INSERT_ROWS = [("indexed", "insert", "Insert (Indexed)"), ("indexed", "read", "Read (Indexed)"),
               ("copy", "insert", "Insert (Copy)"), ("copy", "read", "Read (Copy)")]
PERSIST_ROWS = [("memory", "Memory"), ("metadata", "Metadata"), ("data", "Data")]
DDIO_NS = [1, 2, 4, 8, 16, 32, 64, 128]


# ---- input -------------------------------------------------------------------

def load_thesis():
    t = {}
    with open(os.path.join(HERE, "thesis-results.csv")) as f:
        rows = [line for line in f if not line.startswith("#")]
    for r in csv.DictReader(rows):
        t[(r["table"], r["row"], r["column"])] = float(r["value"])
    return t


def thesis_table(t, prefix):
    """The thesis's values of one table, by (row, column)."""
    return {(row, col): v for (table, row, col), v in t.items() if table.startswith(prefix)}


class Cell:
    """One table cell on one platform: a value per run."""

    def __init__(self, values, unit):
        self.values = list(values)
        self.unit = unit

    @property
    def n(self):
        return len(self.values)

    def mean(self):
        return statistics.fmean(self.values) if self.values else math.nan

    def sd(self):
        return statistics.stdev(self.values) if len(self.values) > 1 else 0.0

    def median(self):
        return statistics.median(self.values) if self.values else math.nan


def by_run(records, key, value):
    """Group records by key(r), then collect value(r) per run in run order."""
    out = {}
    for r in records:
        k = key(r)
        if k is None:
            continue
        out.setdefault(k, {})[r["run"]] = value(r)
    return out


def cells(records, unit, key, value):
    return {k: Cell([v[run] for run in sorted(v)], unit) for k, v in by_run(records, key, value).items()}


def per_run(records):
    """The per-run measurements (summary lines and one-off lines have no run)."""
    return [r for r in records if "run" in r and "ns" in r and not r.get("summary")]


def compute(records):
    """Every cell of every table: {table: {platform: {key: Cell}}}.  The
    Linux comparison's boots (compare.py) are not part of these tables."""
    records = [r for r in records if r.get("group") != "compare"]
    recs = per_run(records)
    plats = sorted({r["platform"] for r in records})
    T = {}
    for p in plats:
        mine = [r for r in recs if r["platform"] == p]
        small = [r for r in mine if r["bench"] == "smallfile"]
        for table, size in (("A.1", 10240), ("A.2", 1024)):
            T.setdefault(table, {})[p] = cells(
                [r for r in small if r["bytes"] == size], "ms/file",
                lambda r: (r["org"], r["phase"]), lambda r: r["ns"] / r["files"] / 1e6)
        large = [r for r in mine if r["bench"] == "largefile"]
        T.setdefault("A.3", {})[p] = cells(
            large, "MB/s or s", lambda r: (r["org"], r["phase"]),
            lambda r: r["bytes"] / r["ns"] * 1e3 if r["bytes"] else r["ns"] / 1e9)
        # Interleaving: the mean of the two applications, run by run.
        il = {}
        for r in mine:
            if r["bench"] == "interleave":
                il.setdefault((r["layout"], r["phase"], r["run"]), []).append(r["ns"] / r["files"] / 1e6)
        T.setdefault("A.4", {})[p] = {}
        for (lay, ph, run), v in sorted(il.items()):
            if len(v) == 2:
                T["A.4"][p].setdefault((lay, ph), Cell([], "ms/file")).values.append(statistics.fmean(v))
        T.setdefault("A.5", {})[p] = cells(
            [r for r in mine if r["bench"] == "insert"], "ms/file",
            lambda r: (r["method"], r["phase"], r["size"]), lambda r: r["ns"] / r["files"] / 1e6)
        T.setdefault("5.4.2", {})[p] = cells(
            [r for r in mine if r["bench"] == "ddio"], "requests/s",
            lambda r: (r["mode"], r["n"]), lambda r: r["reads"] / r["ns"] * 1e9)
        T.setdefault("A.6", {})[p] = cells(
            [r for r in mine if r["bench"] == "persist"], "ms/file",
            lambda r: (r["model"], r["phase"]), lambda r: r["ns"] / r["files"] / 1e6)
    return plats, T


# ---- formatting --------------------------------------------------------------

def num(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    a = abs(v)
    if a >= 100:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3f" % v


def ms(c):
    """mean ± sd, with the sd at the mean's precision."""
    if c is None or c.n == 0:
        return "–"
    m = num(c.mean())
    decimals = len(m.split(".")[1]) if "." in m else 0
    return "%s ± %.*f" % (m, decimals, c.sd())


def pct(x):
    return "–" if x is None or math.isnan(x) else "%+.1f%%" % (100 * x)


def ratio(a, b):
    """a / b - 1 of two means, or nan."""
    if a is None or b is None or a.n == 0 or b.n == 0 or b.mean() == 0:
        return math.nan
    return a.mean() / b.mean() - 1


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# ---- plots -------------------------------------------------------------------

def beside(label, rows, cols, thesis, ours, plats):
    """A table with the thesis's value, then ours on each platform, per column.
    rows: (name, thesis row, our key prefix or None for a thesis-only row);
    cols: (our last key part, thesis column)."""
    head = [label]
    for _, col in cols:
        head += ["%s: thesis" % col] + [PLATFORM_TITLE.get(p, p) for p in plats]
    out = []
    for name, trow, key in rows:
        r = [name]
        for ph, col in cols:
            r.append(num(thesis.get((trow, col))))
            r += [ms(ours[p].get(key + (ph,))) if key is not None else "–" for p in plats]
        out.append(r)
    return table(head, out)


def org_rows():
    """The organizations of Tables A.1-A.3, named as beside the thesis's rows."""
    names = {"raw": "Raw (thesis: Disk Driver)", "unixfs": "unixfs (thesis: Ultrix FS)"}
    return ([(names.get(org, trow), trow, (org,)) for org, trow in SMALL_ROWS] +
            [("thesis only: Raw Ultrix", "Raw Ultrix", None)])


def sizes(records, info):
    """What the runs measured, for titles: QUICK runs are smaller than the
    thesis's, and a title must say so."""
    recs = [r for r in per_run(records) if r.get("group") != "compare"]

    def n(v):
        return "{:,}".format(v)

    def files(bench, default, **kw):
        got = sorted({r["files"] for r in recs if r["bench"] == bench and all(r.get(k) == v for k, v in kw.items())})
        return " / ".join(n(v) for v in got) if got else default

    S = {"A.1": "%s x 10 KB" % files("smallfile", "1,000", bytes=10240),
         "A.2": "%s x 1 KB" % files("smallfile", "10,000", bytes=1024),
         "A.4": "%s x 10 KB" % files("interleave", "1,000"),
         "A.6": "%s x 10 KB" % files("persist", "1,000")}
    large = [r for r in recs if r["bench"] == "largefile"]
    fb = sorted({r["file_bytes"] for r in large})
    S["A.3"] = " / ".join("80 MB" if b == 80 << 20 else "%g MiB" % (b / 1048576) for b in fb) or "80 MB"
    ops = sorted({r["ops"] for r in large if r["phase"] == "randwrite"})
    if fb and ops and ops[-1] < fb[-1] // 4096:
        S["A.3"] += " (%s random 4 KB blocks)" % " / ".join(n(o) for o in ops)
    ins = []
    for size, name in INSERT_SIZES:
        f = sorted({r["files"] for r in recs if r["bench"] == "insert" and r["size"] == size})
        ins.append("%s x %s" % (" / ".join(n(v) for v in f) if f else "?", name.replace("KB", " KB")))
    S["A.5"] = ", ".join(ins)
    reads = sorted({r["reads"] for r in recs if r["bench"] == "ddio"})
    mib = 122
    for b in info.get("boots", []):
        m = re.search(r"-m (\d+)", b["cmd"]) if b.get("exp") == "ddio" else None
        if m:
            mib = int(m.group(1))
    S["5.4.2"] = "%s random one-sector reads of a %d MB extent" % (" / ".join(n(v) for v in reads) or "10,240", mib)
    return S


def plots(outdir, plats, T, th, S, records, quick):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(os.path.join(outdir, "plots"), exist_ok=True)
    written = []
    linux_fig = os.path.join(outdir, "plots", "fig-linux.png")
    if not plats:
        # `make bench-linux`: the comparison alone.
        if compare.plot(records, plt, linux_fig, quick):
            written.append("fig-linux.png")
        return written

    # One colour per organization, whichever panel it is in: ours beside
    # the thesis's counterpart.
    colour = {"extent": "C0", "Extent": "C0", "exonode": "C1", "Exonode": "C1", "raw (disk driver)": "C2",
              "Disk Driver": "C2", "Raw Ultrix": "C7", "unixfs": "C3", "Ultrix FS": "C3"}

    def whiskers(c, log):
        """(below, above) the bar of Cell c: one standard deviation, never
        below zero; on a log scale the slowest and fastest run instead
        (a standard deviation there would reach below zero)."""
        m = c.mean()
        if log:
            return m - min(c.values), max(c.values) - m
        return min(c.sd(), m), c.sd()

    def bars(ax, groups, series, title, ylabel, log=False):
        """groups: labels on x; series: [(label, [a number (the thesis's),
        a Cell (ours) or None])].  The legend goes under the axes, never
        over the bars."""
        n = max(1, len(series))
        w = 0.8 / n
        for k, (label, vals) in enumerate(series):
            xs, v, lo, hi = [], [], [], []
            for i, x in enumerate(vals):
                m = x.mean() if isinstance(x, Cell) and x.n else x if isinstance(x, (int, float)) else None
                if m is None or math.isnan(m) or (log and m <= 0):
                    continue
                xs.append(i - 0.4 + w * (k + 0.5))
                v.append(m)
                b, a = whiskers(x, log) if isinstance(x, Cell) else (0, 0)
                lo.append(b)
                hi.append(a)
            if xs:
                ax.bar(xs, v, w, yerr=[lo, hi] if any(lo) or any(hi) else None, label=label, capsize=2,
                       color=colour.get(label, "C%d" % (k % 10)))
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_ylabel(ylabel, fontsize=8)
        if log:
            ax.set_yscale("log")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3, frameon=False)

    def save(fig, name):
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "plots", name + ".png"), dpi=110, bbox_inches="tight")
        plt.close(fig)
        written.append(name + ".png")

    def figure(name, caption, panels, log=False):
        fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.9))
        axes = axes if len(panels) > 1 else [axes]
        for ax, (title, groups, series, ylabel) in zip(axes, panels):
            bars(ax, groups, series, title, ylabel, log)
        fig.suptitle(caption + (" [QUICK sizes]" if quick else ""), fontsize=10)
        save(fig, name)

    def ours_series(tab, p, rows, cols, key):
        return [(label, [T[tab][p].get(key(rk, ck)) for ck, _ in cols]) for rk, label in rows]

    def thesis_series(prefix, rows, cols):
        t = thesis_table(th, prefix)
        return [(r, [t.get((r, c)) for _, c in cols]) for r in rows]

    # Figures 5-1 and 5-2: small files.
    for fig, tab, prefix, what in (("fig5-1", "A.1", "A.1", S["A.1"]), ("fig5-2", "A.2", "A.2", S["A.2"])):
        labels = [c for _, c in SMALL_PHASES]
        panels = [("thesis (DECstation, RZ25)", labels,
                   thesis_series(prefix, ["Extent", "Exonode", "Disk Driver", "Raw Ultrix", "Ultrix FS"], SMALL_PHASES),
                   "ms per file")]
        for p in plats:
            rows = [(o, "%s" % (o if o != "raw" else "raw (disk driver)")) for o, _ in SMALL_ROWS]
            panels.append((PLATFORM_TITLE.get(p, p), labels,
                           ours_series(tab, p, rows, SMALL_PHASES, lambda r, c: (r, c)), "ms per file"))
        figure(fig, "Small file I/O, %s: latency per file (smaller is better)" % what, panels)

    # Figure 5-3: the large file.
    labels = [c for _, c in LARGE_PHASES]
    panels = [("thesis", labels, thesis_series("A.3", ["Extent", "Exonode", "Disk Driver", "Raw Ultrix", "Ultrix FS"],
                                               LARGE_PHASES), "MB/s")]
    for p in plats:
        rows = [(o, o if o != "raw" else "raw (disk driver)") for o, _ in SMALL_ROWS]
        panels.append((PLATFORM_TITLE.get(p, p), labels,
                       ours_series("A.3", p, rows, LARGE_PHASES, lambda r, c: (r, c)), "MB/s"))
    figure("fig5-3", "Large file I/O, %s: throughput (larger is better)" % S["A.3"], panels)

    # Figure 5-4: interleaving.
    labels = [c for _, c in IL_PHASES]
    panels = [("thesis", labels, thesis_series("A.4", [l for _, l in LAYOUTS], IL_PHASES), "ms per file")]
    for p in plats:
        panels.append((PLATFORM_TITLE.get(p, p), labels,
                       ours_series("A.4", p, LAYOUTS, IL_PHASES, lambda r, c: (r, c)), "ms per file"))
    figure("fig5-4", "Two applications, %s each: partitioned vs interleaved (smaller is better)" % S["A.4"], panels)

    # Figure 5-5: insertion (log scale: copying 1,000 KB is 100 times an insert).
    labels = [s for _, s in INSERT_SIZES]
    t = thesis_table(th, "A.5")
    panels = [("thesis", labels, [(name, [t.get((name, s)) for _, s in INSERT_SIZES])
                                  for _, _, name in INSERT_ROWS], "ms per file")]
    for p in plats:
        ser = [(name, [T["A.5"][p].get((m, ph, size)) for size, _ in INSERT_SIZES]) for m, ph, name in INSERT_ROWS]
        panels.append((PLATFORM_TITLE.get(p, p), labels, ser, "ms per file"))
    figure("fig5-5", "Inserting 16 bytes in the middle of %s, then reading (smaller is better; log scale)" % S["A.5"],
           panels, log=True)

    # Figure 5-6: disk-directed I/O, requests per second against N, and the gain.
    fig, axes = plt.subplots(1, len(plats) + 1, figsize=(4.2 * (len(plats) + 1), 3.6))
    for ax, p in zip(axes, plats):
        for mode, label in (("sync", "one at a time"), ("ddio", "disk-directed")):
            pts = [(n, T["5.4.2"][p].get((mode, n))) for n in DDIO_NS]
            pts = [(n, c) for n, c in pts if c]
            ax.errorbar([n for n, _ in pts], [c.mean() for _, c in pts],
                        yerr=[[whiskers(c, False)[0] for _, c in pts], [c.sd() for _, c in pts]],
                        marker="o", label=label, capsize=2)
        ax.set_xscale("log", base=2)
        ax.set_xticks(DDIO_NS)
        ax.set_xticklabels([str(n) for n in DDIO_NS], fontsize=8)
        ax.set_xlabel("requests issued at once (N)", fontsize=8)
        ax.set_ylabel("requests per second", fontsize=8)
        ax.set_title(PLATFORM_TITLE.get(p, p), fontsize=10)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    ax = axes[-1]
    for p in plats:
        pts = [(n, ratio(T["5.4.2"][p].get(("ddio", n)), T["5.4.2"][p].get(("sync", n)))) for n in DDIO_NS]
        pts = [(n, g) for n, g in pts if not math.isnan(g)]
        ax.plot([n for n, _ in pts], [100 * g for _, g in pts], marker="o", label=PLATFORM_TITLE.get(p, p))
    tg = thesis_table(th, "5.4.2")
    ax.plot([32, 128], [tg.get(("gain over synchronous", "32 outstanding")),
                        tg.get(("gain over synchronous", "128 outstanding"))], "k*", markersize=10, label="thesis")
    ax.set_xscale("log", base=2)
    ax.set_xticks(DDIO_NS)
    ax.set_xticklabels([str(n) for n in DDIO_NS], fontsize=8)
    ax.set_xlabel("N", fontsize=8)
    ax.set_ylabel("gain over one at a time (%)", fontsize=8)
    ax.set_title("gain", fontsize=10)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False)
    fig.suptitle("Disk-directed I/O: %s (larger is better)%s" % (S["5.4.2"], " [QUICK sizes]" if quick else ""),
                 fontsize=10)
    save(fig, "fig5-6")

    # Figure 5-7: persistence models (log scale).
    labels = [c for _, c in SMALL_PHASES]
    panels = [("thesis", labels, thesis_series("A.6", [l for _, l in PERSIST_ROWS], SMALL_PHASES), "ms per file")]
    for p in plats:
        panels.append((PLATFORM_TITLE.get(p, p), labels,
                       ours_series("A.6", p, PERSIST_ROWS, SMALL_PHASES, lambda r, c: (r, c)), "ms per file"))
    figure("fig5-7", "Persistence models, %s (smaller is better; log scale)" % S["A.6"], panels, log=True)

    if compare.plot(records, plt, linux_fig, quick):
        written.append("fig-linux.png")
    return written


# ---- the report --------------------------------------------------------------

def write_report(outdir, info, plats, T, th, figs, S, records):
    L = []
    add = L.append
    host = info.get("host", {})
    runs = suite.QUICK_RUNS if info.get("quick") else suite.RUNS
    add("# exodisk: thesis chapter 5 and Appendix A, measured\n")
    add("Generated by `tools/bench/report.py` from `results.jsonl` (written by `tools/bench/run.py`).%s\n" % (
        " **QUICK run**: scaled-down sizes, %d runs; the numbers show the suite works, not the system's "
        "performance." % runs if info.get("quick") else ""))
    add("- started %s, finished %s, %.0f s of host time" % (info.get("started"), info.get("finished"),
                                                            info.get("seconds", 0)))
    add("- host: %s, %s CPUs (%s); %s; git %s%s" % (host.get("cpu", "?"), host.get("cpus", "?"),
                                                  host.get("system", "?"), host.get("qemu", "?"), host.get("git", "?"),
                                                  " (with uncommitted changes)" if host.get("git_dirty") else ""))
    add("- platforms: **RZ25 model** (`DISK=model`: the DEC RZ25 of the thesis, simulated; QEMU `-icount`, so its "
        "times are deterministic and independent of the host) and **virtio-blk** (a 512 MiB image file on the "
        "host: memory speed, noisy on a shared host)%s" % (
            "; each on RISC-V (QEMU `virt`) and on x86-64 (QEMU `q35`, `make bench ARCH=x86_64`): the same "
            "disks, programs and file systems, another kernel port and C library" if any(
                p.startswith("x86_64-") for p in plats) else ""))
    if info.get("beside", {}).get("platforms"):
        add("- beside this run: %s from `%s` (another run, on the same host at another time)" % (
            ", ".join("**%s**" % PLATFORM_TITLE.get(p, p) for p in info["beside"]["platforms"]),
            info["beside"]["dir"]))
    add("- every figure is the mean ± sample standard deviation over %d runs in one boot (Appendix A: mean of five "
        "runs); medians, minima and maxima are in `summary.csv`.  Times come from the guest's `rdtime` counter "
        "(10 MHz: 100 ns resolution).  MB = 10^6 bytes in rates; the thesis's 80 MB file is 80 MiB and its "
        "122 MB extent 122 MiB.\n" % runs)
    add(table(["boot", "command", "boot options", "host s", "load before/after", "status"],
              [["%s %s" % (b["platform"], b["entry"]) if b.get("group") != "compare" else
                "compare round %d %s" % (b["round"] + 1, b["entry"]),
                "`%s`" % b["cmd"], b["bootargs"] or "–", "%.0f" % b["seconds"],
                "%s / %s" % (num(b["load_before"]) if b["load_before"] is not None else "?",
                             num(b["load_after"]) if b["load_after"] is not None else "?"),
                "ok" if b["ok"] else "FAILED: " + b["why"]] for b in info.get("boots", [])]))
    add("")

    L += compare.report(records, table)
    if not any(b.get("group") != "compare" for b in info.get("boots", [])):
        # `make bench-linux`: the comparison alone.
        with open(os.path.join(outdir, "report.md"), "w") as f:
            f.write("\n".join(L) + "\n")
        return

    targets = target_rows(plats, T, th)
    add("## Targets\n")
    add(table(["target", "measured", "thesis", "met?"], targets))
    add("")

    # A.1 and A.2
    for tab, what in (("A.1", S["A.1"] + " files"), ("A.2", S["A.2"] + " files")):
        t = thesis_table(th, tab)
        add("## Table %s: small file I/O, %s (ms per file)\n" % (tab, what))
        add(beside("organization", org_rows(), SMALL_PHASES, t, T[tab], plats))
        add("\n![Figure %s](plots/%s.png)\n" % ("5-1" if tab == "A.1" else "5-2", "fig5-1" if tab == "A.1" else "fig5-2"))
        add("Protection overhead against Raw (the thesis: against its Disk Driver):\n")
        rows = []
        for org in ("extent", "exonode"):
            for ph, col in SMALL_PHASES[:2]:
                thv = t.get(({"extent": "Extent", "exonode": "Exonode"}[org], col))
                thb = t.get(("Disk Driver", col))
                rows.append([org, col, pct(thv / thb - 1 if thv and thb else math.nan)] +
                            [pct(ratio(T[tab][p].get((org, ph)), T[tab][p].get(("raw", ph)))) for p in plats])
        add(table(["organization", "phase", "thesis"] + [PLATFORM_TITLE.get(p, p) for p in plats], rows))
        add("")

    # A.3
    t = thesis_table(th, "A.3")
    add("## Table A.3: large file I/O, %s (MB/s)\n" % S["A.3"])
    add(beside("organization", org_rows(), LARGE_PHASES, t, T["A.3"], plats))
    add("\nAllocation and deallocation (seconds; the thesis: under 0.06 s and 0.035 s, Ultrix deallocation "
        "1.39 s):\n")
    add(table(["organization"] + ["%s %s" % (ph, PLATFORM_TITLE.get(p, p)) for ph in ("alloc", "dealloc")
                                  for p in plats],
              [[org] + [ms(T["A.3"][p].get((org, ph))) for ph in ("alloc", "dealloc") for p in plats]
               for org, _ in SMALL_ROWS]))
    add("\n![Figure 5-3](plots/fig5-3.png)\n")
    add("Protection overhead against Raw, in time (Raw's throughput / ours - 1):\n")
    rows = []
    for org in ("extent", "exonode"):
        for ph, col in LARGE_PHASES:
            thv = t.get(({"extent": "Extent", "exonode": "Exonode"}[org], col))
            thb = t.get(("Disk Driver", col))
            rows.append([org, col, pct(thb / thv - 1 if thv and thb else math.nan)] +
                        [pct(ratio(T["A.3"][p].get(("raw", ph)), T["A.3"][p].get((org, ph)))) for p in plats])
    add(table(["organization", "phase", "thesis"] + [PLATFORM_TITLE.get(p, p) for p in plats], rows))
    add("")

    # A.4
    t = thesis_table(th, "A.4")
    add("## Table A.4: two applications, %s files each (ms per file, mean of the two)\n" % S["A.4"])
    add(beside("layout", [(trow, trow, (lay,)) for lay, trow in LAYOUTS], IL_PHASES, t, T["A.4"], plats))
    add("\nGain over Partitioned (1 - layout / partitioned):\n")
    rows = []
    for lay, trow in LAYOUTS[1:]:
        for ph, col in IL_PHASES[:4]:
            thv, thp = t.get((trow, col)), t.get(("Partitioned", col))
            rows.append([trow, col, pct(1 - thv / thp if thv and thp else math.nan)] +
                        [pct(-ratio(T["A.4"][p].get((lay, ph)), T["A.4"][p].get(("partitioned", ph)))) for p in plats])
    add(table(["layout", "phase", "thesis"] + [PLATFORM_TITLE.get(p, p) for p in plats], rows))
    add("\n![Figure 5-4](plots/fig5-4.png)\n")

    # A.5
    t = thesis_table(th, "A.5")
    add("## Table A.5: file insertion, %s files (ms per file)\n" % S["A.5"])
    add(beside("operation", [(name, name, (m, ph)) for m, ph, name in INSERT_ROWS], INSERT_SIZES, t, T["A.5"],
               plats))
    add("\nSpeed-up of Indexed over Copy (copy / indexed), for the insert alone and for insert + read:\n")
    rows = []
    for size, s in INSERT_SIZES:
        for what, phs in (("insert", ("insert",)), ("insert + read", ("insert", "read"))):
            thi = sum(t.get(("%s (Indexed)" % ph.capitalize(), s), math.nan) for ph in phs)
            thc = sum(t.get(("%s (Copy)" % ph.capitalize(), s), math.nan) for ph in phs)
            r = [s, what, "%.1fx" % (thc / thi)]
            for p in plats:
                ci = [T["A.5"][p].get(("indexed", ph, size)) for ph in phs]
                cc = [T["A.5"][p].get(("copy", ph, size)) for ph in phs]
                ok = all(ci) and all(cc)
                r.append("%.1fx" % (sum(c.mean() for c in cc) / sum(c.mean() for c in ci)) if ok else "–")
            rows.append(r)
    add(table(["size", "what", "thesis"] + [PLATFORM_TITLE.get(p, p) for p in plats], rows))
    add("\n![Figure 5-5](plots/fig5-5.png)\n")

    # 5.4.2
    tg = thesis_table(th, "5.4.2")
    add("## Section 5.4.2 (Figure 5-6): disk-directed I/O, %s (requests per second)\n" % S["5.4.2"])
    head = ["N"]
    for p in plats:
        head += ["%s one at a time" % PLATFORM_TITLE.get(p, p), "%s disk-directed" % PLATFORM_TITLE.get(p, p),
                 "%s gain" % PLATFORM_TITLE.get(p, p)]
    head.append("thesis gain")
    rows = []
    for n in DDIO_NS:
        r = [str(n)]
        for p in plats:
            s, d = T["5.4.2"][p].get(("sync", n)), T["5.4.2"][p].get(("ddio", n))
            r += [ms(s), ms(d), pct(ratio(d, s))]
        g = tg.get(("gain over synchronous", "%d outstanding" % n))
        r.append(pct(g / 100) if g is not None else "–")
        rows.append(r)
    add(table(head, rows))
    add("\n![Figure 5-6](plots/fig5-6.png)\n")

    # A.6
    t = thesis_table(th, "A.6")
    add("## Table A.6: persistence models, %s files (ms per file)\n" % S["A.6"])
    add(beside("model", [(trow, trow, (m,)) for m, trow in PERSIST_ROWS], SMALL_PHASES, t, T["A.6"], plats))
    add("\nData / Memory (how many times faster Memory is):\n")
    rows = []
    for what, phs in (("allocate+write", ("write",)), ("all three phases", ("write", "read", "dealloc"))):
        cols = [c for ph, c in SMALL_PHASES if ph in phs]
        thr = sum(t.get(("Data", c), math.nan) for c in cols) / sum(t.get(("Memory", c), math.nan) for c in cols)
        r = [what, "%.1fx" % thr]
        for p in plats:
            cd = [T["A.6"][p].get(("data", ph)) for ph in phs]
            cm = [T["A.6"][p].get(("memory", ph)) for ph in phs]
            r.append("%.1fx" % (sum(c.mean() for c in cd) / sum(c.mean() for c in cm)) if all(cd) and all(cm) else "–")
        rows.append(r)
    add(table(["phases", "thesis"] + [PLATFORM_TITLE.get(p, p) for p in plats], rows))
    add("\n![Figure 5-7](plots/fig5-7.png)\n")
    add("## Plots\n")
    add("\n".join("- [%s](plots/%s)" % (f, f) for f in figs))
    add("")
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n".join(L) + "\n")


def target_rows(plats, T, th):
    """The issue's targets, each with what we measured and whether it is met."""
    rows = []

    def yes(ok):
        return "–" if ok is None else ("**met**" if ok else "**missed**")

    # Protection overhead <= 3 % on every row, each platform.
    for p in plats:
        worst, where = -math.inf, ""
        for tab, phases in (("A.1", SMALL_PHASES[:2]), ("A.2", SMALL_PHASES[:2])):
            for org in ("extent", "exonode"):
                for ph, col in phases:
                    o = ratio(T[tab][p].get((org, ph)), T[tab][p].get(("raw", ph)))
                    if not math.isnan(o) and o > worst:
                        worst, where = o, "%s %s %s" % (tab, org, col)
        for org in ("extent", "exonode"):
            for ph, col in LARGE_PHASES:
                o = ratio(T["A.3"][p].get(("raw", ph)), T["A.3"][p].get((org, ph)))
                if not math.isnan(o) and o > worst:
                    worst, where = o, "A.3 %s %s" % (org, col)
        ok = None if worst == -math.inf else worst <= 0.03
        rows.append(["protection overhead of Extent and Exonode against Raw <= 3%% on every row (%s)" %
                     PLATFORM_TITLE.get(p, p), "worst %s (%s)" % (pct(worst), where),
                     "Exonode < 10%; Extent reads +86.6%", yes(ok)])
    if "model" in plats:
        t = thesis_table(th, "A.4")
        for ph, col in IL_PHASES[2:4]:
            g = -ratio(T["A.4"]["model"].get(("interleaved", ph)), T["A.4"]["model"].get(("partitioned", ph)))
            thg = 1 - t[("Interleaved", col)] / t[("Partitioned", col)]
            rows.append(["interleaved beats partitioned by >= 40%% on %s (model)" % col, pct(g), pct(thg),
                         yes(None if math.isnan(g) else g >= 0.40)])
        g = ratio(T["5.4.2"]["model"].get(("ddio", 128)), T["5.4.2"]["model"].get(("sync", 128)))
        rows.append(["disk-directed I/O >= +39% at 128 outstanding (model)", pct(g), "+39%",
                     yes(None if math.isnan(g) else g >= 0.39)])
        A5 = T["A.5"]["model"]
        ci, cc = [A5.get(("indexed", ph, 1024000)) for ph in ("insert", "read")], \
                 [A5.get(("copy", ph, 1024000)) for ph in ("insert", "read")]
        if all(ci) and all(cc):
            both = sum(c.mean() for c in cc) / sum(c.mean() for c in ci)
            alone = cc[0].mean() / ci[0].mean()
            rows.append(["indexed insert >= 6x faster than copy at 1,000 KB (model; insert + read, as the thesis's 6x)",
                         "%.1fx (insert alone %.1fx)" % (both, alone), "6.0x (insert alone 89x)", yes(both >= 6)])
        ins = [A5.get(("indexed", "insert", s)) for s, _ in INSERT_SIZES]
        if all(ins):
            spread = max(c.mean() for c in ins) / min(c.mean() for c in ins)
            rows.append(["indexed insert constant in file size (model; largest / smallest of 10-1,000 KB <= 1.5)",
                         "%.2f (%s ms)" % (spread, ", ".join(num(c.mean()) for c in ins)), "1.12 (37.3-41.9 ms)",
                         yes(spread <= 1.5)])
        A6 = T["A.6"]["model"]
        d, m = A6.get(("data", "write")), A6.get(("memory", "write"))
        if d and m:
            r = d.mean() / m.mean()
            rows.append(["Memory >= 20x faster than Data for allocate+write (model)", "%.0fx" % r,
                         "47x (alloc+write; 21x all phases)", yes(r >= 20)])
    return rows


def write_summary(outdir, plats, T, records):
    with open(os.path.join(outdir, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["table", "key", "platform", "unit", "runs", "mean", "sd", "median", "min", "max"])
        D = compare.Data(records)
        for row, what, higher in D.rows():
            for c in D.linux + D.linux_raw + D.ours:
                v = D.vals(row, c)
                if v:
                    w.writerow(["linux", "%s/%s" % (what, compare.label(c)), "virtio",
                                "MB/s" if higher else "ms" if row[0] == "large" else "ms/file", len(v),
                                statistics.fmean(v), statistics.stdev(v) if len(v) > 1 else 0.0,
                                statistics.median(v), min(v), max(v)])
        for tab in sorted(T):
            for p in plats:
                for key in sorted(T[tab].get(p, {}), key=str):
                    c = T[tab][p][key]
                    w.writerow([tab, "/".join(str(k) for k in key), p, c.unit, c.n, c.mean(), c.sd(), c.median(),
                                min(c.values), max(c.values)])


# ---- --check -----------------------------------------------------------------

def check(outdir, info, plats, T, figs, records):
    """Every cell present with the runs asked for, values finite and of the right sign."""
    problems = []
    runs = suite.QUICK_RUNS if info.get("quick") else suite.RUNS
    ran = {b["platform"] for b in info.get("boots", []) if b.get("group") != "compare"}
    if not info.get("boots"):
        problems.append("run.json lists no boots")
    for b in info.get("boots", []):
        if not b["ok"]:
            problems.append("boot %s %s failed: %s" % (b["platform"], b["entry"], b["why"]))
    want = {
        "A.1": [(o, ph) for o, _ in SMALL_ROWS for ph, _ in SMALL_PHASES],
        "A.2": [(o, ph) for o, _ in SMALL_ROWS for ph, _ in SMALL_PHASES],
        "A.3": [(o, ph) for o, _ in SMALL_ROWS for ph in ("alloc", "seqwrite", "seqread", "randwrite", "randread",
                                                           "dealloc")],
        "A.4": [(l, ph) for l, _ in LAYOUTS for ph, _ in IL_PHASES],
        "A.5": [(m, ph, s) for m, ph, _ in INSERT_ROWS for s, _ in INSERT_SIZES],
        "5.4.2": [(m, n) for m in ("sync", "ddio") for n in DDIO_NS],
        "A.6": [(m, ph) for m, _ in PERSIST_ROWS for ph, _ in SMALL_PHASES],
    }
    for p in sorted(ran):
        if p not in plats:
            problems.append("%s: no records at all" % p)
            continue
        for tab, keys in want.items():
            for k in keys:
                c = T[tab][p].get(k)
                if c is None:
                    problems.append("%s %s %s: missing" % (p, tab, "/".join(map(str, k))))
                    continue
                if c.n != runs:
                    problems.append("%s %s %s: %d runs, not %d" % (p, tab, "/".join(map(str, k)), c.n, runs))
                # Raw deallocates nothing: its time may round to zero.
                zero_ok = k[0] == "raw" and k[-1] in ("dealloc", "alloc")
                for v in c.values:
                    if not math.isfinite(v) or v < 0 or (v == 0 and not zero_ok):
                        problems.append("%s %s %s: value %r" % (p, tab, "/".join(map(str, k)), v))
                        break
    for name in ["report.md", "summary.csv"] + ["plots/" + f for f in figs]:
        path = os.path.join(outdir, name)
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            problems.append("%s was not written" % name)
    want_figs = (7 if ran else 0) + (1 if info.get("compare_rounds") else 0)
    if len(figs) != want_figs:
        problems.append("%d plots, not %d" % (len(figs), want_figs))
    return problems + compare.check(records, info)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", default=os.path.join(HERE, "..", "..", "results"))
    ap.add_argument("--beside", default="", help="another run's results directory, shown beside")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    out = args.results
    records = []
    with open(os.path.join(out, "results.jsonl")) as f:
        for line in f:
            records.append(json.loads(line))
    with open(os.path.join(out, "run.json")) as f:
        info = json.load(f)
    if args.beside:
        # Another run's platforms (not its Linux comparison), for the tables;
        # --check judges only this run's boots (info["boots"]).
        mine = {r["platform"] for r in records}
        path = os.path.join(args.beside, "results.jsonl")
        if os.path.exists(path):
            with open(path) as f:
                extra = [json.loads(line) for line in f]
            extra = [r for r in extra if r.get("group") != "compare" and r["platform"] not in mine]
            records += extra
            info["beside"] = {"dir": args.beside, "platforms": sorted({r["platform"] for r in extra})}
        else:
            print("report: --beside %s: no results.jsonl there (run `make bench` first); this run alone" %
                  args.beside)
    th = load_thesis()
    plats, T = compute(records)
    S = sizes(records, info)
    figs = plots(out, plats, T, th, S, records, info.get("quick"))
    write_report(out, info, plats, T, th, figs, S, records)
    write_summary(out, plats, T, records)
    print("report: %s" % os.path.join(out, "report.md"))
    if args.check:
        problems = check(out, info, plats, T, figs, records)
        for pr in problems:
            print("report: check: " + pr)
        print("report: check: %s" % ("results well formed" if not problems else "%d problems" % len(problems)))
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
