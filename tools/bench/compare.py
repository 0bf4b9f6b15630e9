"""compare.py - the Linux comparison's part of the report (report.py calls
it; docs/linux-baseline.md explains how to read it).

The comparison's records are those run.py marked "group": "compare": in
each round, our library file systems (`exobench fs`, "os": "exodisk",
"org" the libFS's name), the exodisk's exonode and raw paths (`exobench
smallfile -c` and `largefile -c`, "org" exonode or raw), and Debian's
Linux on each file system and on the raw device (lxbench, "os": "linux",
"org" the file system or raw).  A cell is one system on one row, with a
value per round; tables show medians over the rounds, and each of ours
beside the best Linux file system of its row.

Columns are found in the records, never listed here: a new libFS added to
suite.LIBFS appears in the tables by its name.
"""
import math
import statistics

SMALL_PHASES = [("write", "create+write"), ("read", "read"), ("dealloc", "delete")]
LARGE_ROWS = [("alloc", "create (ms)", False), ("seqwrite", "seq write (MB/s)", True),
              ("seqread", "seq read (MB/s)", True), ("randwrite", "rand write (MB/s)", True),
              ("randread", "rand read (MB/s)", True), ("dealloc", "delete (ms)", False)]
LINUX_ORDER = ["ext4", "ext2", "vfat", "f2fs", "nilfs2"]
PATHS = {"exonode": "exodisk exonode path", "raw": "exodisk raw path"}


def column(r):
    """The system a record measures: ("linux", fs), ("libfs", name) or ("path", exonode|raw)."""
    if r.get("os") == "linux":
        return ("linux", r["org"])
    if r.get("os") == "exodisk":
        return ("libfs", r["org"])
    return ("path", r["org"])


def label(col):
    kind, name = col
    if kind == "linux":
        return "Linux raw device" if name == "raw" else "Linux %s" % name
    return PATHS.get(name, name) if kind == "path" else name


class Data:
    """Cells of the comparison: values[(row, col)] = {round: value}."""

    def __init__(self, records):
        self.values = {}
        self.small_sizes = []     # (files, bytes) in the order first met
        self.large_bytes = None
        self.large_ops = None
        self.cache_left = {}      # col -> most cache entries a cold step left
        self.rounds = set()
        for r in records:
            if r.get("group") != "compare" or "run" not in r or "ns" not in r or r.get("summary"):
                continue
            col = column(r)
            self.rounds.add(r["round"])
            self.cache_left[col] = max(self.cache_left.get(col, 0), r.get("cache_left", 0))
            if r["bench"] == "smallfile":
                size = (r["files"], r["bytes"])
                if size not in self.small_sizes:
                    self.small_sizes.append(size)
                row = ("small", size, r["phase"])
                v = r["ns"] / r["files"] / 1e6
            elif r["bench"] == "largefile":
                self.large_bytes = r["file_bytes"]
                if r["phase"] == "randwrite":
                    self.large_ops = r["ops"]
                row = ("large", r["phase"])
                v = r["bytes"] / r["ns"] * 1e3 if r["bytes"] else r["ns"] / 1e6
            else:
                continue
            self.values.setdefault((row, col), {})[r["round"]] = v
        cols = {c for _, c in self.values}
        self.linux = [c for c in (("linux", fs) for fs in LINUX_ORDER) if c in cols] + \
            sorted(c for c in cols if c[0] == "linux" and c[1] not in LINUX_ORDER and c[1] != "raw")
        self.libfs = sorted(c for c in cols if c[0] == "libfs")
        self.paths = [c for c in (("path", "exonode"), ("path", "raw")) if c in cols]
        self.linux_raw = [("linux", "raw")] if ("linux", "raw") in cols else []
        self.ours = self.libfs + self.paths

    def vals(self, row, col):
        d = self.values.get((row, col), {})
        return [d[k] for k in sorted(d)]

    def median(self, row, col):
        v = self.vals(row, col)
        return statistics.median(v) if v else math.nan

    def best_linux(self, row, higher):
        """The best Linux file system on a row: (median, its column)."""
        best = (math.nan, None)
        for c in self.linux:
            m = self.median(row, c)
            if not math.isnan(m) and (math.isnan(best[0]) or (m > best[0] if higher else m < best[0])):
                best = (m, c)
        return best

    def rows(self):
        """(row key, title, higher is better) of both tables, in order."""
        out = []
        for files, nbytes in self.small_sizes:
            for ph, what in SMALL_PHASES:
                out.append((("small", (files, nbytes), ph), "%s x %s %s" % (count(files), kb(nbytes), what), False))
        if self.large_bytes:
            out += [(("large", ph), what, higher) for ph, what, higher in LARGE_ROWS]
        return out


def count(n):
    return "{:,}".format(n)


def kb(nbytes):
    return "%g KB" % (nbytes / 1024) if nbytes % 1024 == 0 else "%d B" % nbytes


def mib(nbytes):
    return "%g MiB" % (nbytes / 1048576)


def fmt(v):
    if v is None or math.isnan(v):
        return "–"
    a = abs(v)
    return "%.0f" % v if a >= 1000 else "%.1f" % v if a >= 100 else "%.2f" % v if a >= 1 else "%.3f" % v


def speedup(ours, best, higher):
    """How many times faster ours is than the best Linux FS (times: best / ours)."""
    if math.isnan(ours) or math.isnan(best) or ours <= 0 or best <= 0:
        return math.nan
    return ours / best if higher else best / ours


def fmt_x(x):
    if math.isnan(x):
        return "–"
    f = x if x >= 1 else 1 / x
    return ("%.2f" if f < 10 else "%.1f") % f + ("× faster" if x >= 1 else "× slower")


def report(records, table):
    """The markdown lines of the comparison, or [] when it did not run."""
    D = Data(records)
    if not D.values:
        return []
    n = len(D.rounds)
    L = ["## Beside Linux 6.12 (Debian), same machine, same workload\n"]
    L.append("Medians over %d round%s; in each round our boots and Linux's ran one after another, so the host's "
             "noise fell on both.  Every phase starts cold on both sides and every write and delete phase ends "
             "durable (docs/linux-baseline.md).  *vs best Linux FS*: how many times faster ours is than the best "
             "Linux file system of the row (`best / ours` for times, `ours / best` for MB/s); the Linux raw device "
             "is shown for reference, never counted as a file system.\n" % (n, "" if n == 1 else "s"))
    sections = [("small", "Small files (ms per file, lower is better)"),
                ("large", "Large file, %s%s (MB/s higher is better; create and delete in ms)" % (
                    mib(D.large_bytes) if D.large_bytes else "?",
                    ", %s random 4 KB blocks" % count(D.large_ops) if D.large_ops else ""))]
    for kind, title in sections:
        rows = [r for r in D.rows() if r[0][0] == kind]
        if not rows:
            continue
        head = ["row"] + [label(c) for c in D.linux] + ["best Linux FS"]
        for c in D.ours:
            head += [label(c), "vs best Linux FS"]
        head += [label(c) for c in D.linux_raw]
        out = []
        for row, what, higher in rows:
            best, bc = D.best_linux(row, higher)
            r = [what] + [fmt(D.median(row, c)) for c in D.linux]
            r.append("%s (%s)" % (fmt(best), bc[1]) if bc else "–")
            for c in D.ours:
                m = D.median(row, c)
                nothing = c[1] == "raw" and row[-1] in ("dealloc", "alloc")
                r += [fmt(m), "–" if nothing else fmt_x(speedup(m, best, higher))]
            r += [fmt(D.median(row, c)) for c in D.linux_raw]
            out.append(r)
        L.append("### %s\n" % title)
        L.append(table(head, out))
        L.append("")
    L.append("The raw paths have nothing to create or delete (no metadata): those cells only time an empty loop.  "
             "Cache entries a cold step could not empty (the most in any phase): %s.\n" % ", ".join(
                 "%s %d" % (label(c), D.cache_left[c]) for c in D.ours if c in D.cache_left))
    L.append("![Beside Linux](plots/fig-linux.png)\n")
    return L


def plot(records, plt, path, quick):
    """fig-linux.png: every system's medians, whiskers from the fastest to
    the slowest round; False when there is nothing to draw."""
    D = Data(records)
    if not D.values:
        return False
    cols = D.linux + D.linux_raw + D.ours
    greys = ["#bbbbbb", "#999999", "#777777", "#555555", "#333333", "#dddddd"]
    colour = {}
    for k, c in enumerate(D.linux + D.linux_raw):
        colour[c] = greys[k % len(greys)]
    for k, c in enumerate(D.ours):
        colour[c] = "C%d" % ((k + 3) % 10)
    panels = []
    small = [r for r in D.rows() if r[0][0] == "small"]
    if small:
        panels.append(("small files: ms per file (lower is better)", small))
    large = [r for r in D.rows() if r[0][0] == "large" and r[2]]
    if large:
        panels.append(("large file: MB/s (higher is better)", large))
    fig, axes = plt.subplots(1, len(panels), figsize=(7.5 * len(panels), 4.4))
    axes = axes if len(panels) > 1 else [axes]
    w = 0.8 / max(1, len(cols))
    for ax, (title, rows) in zip(axes, panels):
        for k, c in enumerate(cols):
            xs, hs, lo, hi = [], [], [], []
            for i, (row, _, _) in enumerate(rows):
                v = D.vals(row, c)
                if not v or min(v) <= 0 or (c[1] == "raw" and row[-1] in ("alloc", "dealloc")):
                    continue                 # the raw paths' empty deletes are not drawn
                m = statistics.median(v)
                xs.append(i - 0.4 + w * (k + 0.5))
                hs.append(m)
                lo.append(m - min(v))
                hi.append(max(v) - m)
            if xs:
                ax.bar(xs, hs, w, yerr=[lo, hi], capsize=1.5, label=label(c), color=colour[c],
                       error_kw={"elinewidth": 0.8})
        ax.set_yscale("log")
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([what.replace(" x ", "×").replace(" (MB/s)", "") for _, what, _ in rows], fontsize=7,
                           rotation=20, ha="right")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=4, frameon=False)
    fig.suptitle("Ours beside Linux 6.12 on the same QEMU machine: medians of %d round%s, whiskers the fastest and "
                 "slowest%s; log scale" % (len(D.rounds), "" if len(D.rounds) == 1 else "s",
                                          " (QUICK sizes)" if quick else ""), fontsize=10)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return True


def check(records, info):
    """Problems with the comparison's results: every system on every row,
    with a value per round, each finite and not negative."""
    rounds = info.get("compare_rounds", 0)
    ran = [b for b in info.get("boots", []) if b.get("group") == "compare"]
    if not rounds or not ran:
        return []
    D = Data(records)
    problems = []
    if not D.linux or not D.libfs or len(D.paths) != 2:
        problems.append("compare: missing systems (Linux %s, ours %s)" % (
            [c[1] for c in D.linux], [c[1] for c in D.ours]))
    if len(D.small_sizes) == 0 or not D.large_bytes:
        problems.append("compare: no small-file or no large-file rows")
    for row, what, _ in D.rows():
        for c in D.linux + D.linux_raw + D.ours:
            v = D.vals(row, c)
            if len(v) != rounds:
                problems.append("compare %s, %s: %d rounds, not %d" % (what, label(c), len(v), rounds))
            elif any(not math.isfinite(x) or x < 0 for x in v):
                problems.append("compare %s, %s: values %r" % (what, label(c), v))
            elif any(x == 0 for x in v) and not (c[1] == "raw" and row[-1] in ("alloc", "dealloc")):
                problems.append("compare %s, %s: a zero" % (what, label(c)))
    return problems
