"""scale.py - the exodisk scaling experiment (issue 11): its entries, a
runner of its own, and its part of a report.

  python3 tools/bench/scale.py [--quick] [--many [FILES]] [--sizes 512M,1T] [--runs N]
                               [--files N] [--out DIR]

runs the boots below through tools/run-qemu.sh (after `make`), one entry at
a time, interleaving the sizes run by run so that a change in the host's
load falls on every size alike; it writes DIR/records.json, DIR/report.md
(the table and the targets, medians over the runs), DIR/fig-scale.png if
matplotlib is there, and the boots' logs.  (Not yet an experiment of `make
bench`: tools/bench/run.py runs one command per boot and has no per-entry
disk size; report() and plot() are written for report.py to call.)

Each size of disk gets boots of its own on a fresh, blank, sparse image
(apps/edscale.c does the measuring in the guest):

  boot 1  the kernel formats the blank unit and mounts it; edscale reports
          the time from power-on to the shell's first program, the mount,
          what the format wrote and the unit's kernel memory; then makes a
          unixfs, checkpoints, creates FILES files (100 per directory),
          syncs, and reports what the next checkpoint writes;
  boot 2  the same disk, now holding that unixfs: the mount again.

The 16 TiB image lives in /dev/shm (ext4 stops 4 KiB short of 16 TiB).
The million-file run creates 1,000,000 files of 1 KiB, 100 per directory,
on a 64 GiB disk, timing every 10,000.

Targets (docs/exodisk.md section 12): boot with a 1 TiB blank unit <= 1.5x
the boot with 512 MiB; mount of a 1 TiB unit holding the unixfs likewise;
format <= 4 MiB at any size; the checkpoint after 1,000 files within 10%
on 512 MiB and 1 TiB; the create cost at the millionth file within 1.25x of
the thousandth.
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

SIZES = [("512M", "512 MiB"), ("64G", "64 GiB"), ("1T", "1 TiB"), ("16T", "16 TiB")]
TMPFS = {"16T"}
FILES = 1000
QUICK_FILES = 100
RUNS = 3
MANY = 1000000


def entries(quick):
    """The suite's entries: per size, RUNS pairs of boots (one in QUICK)."""
    out = []
    files = QUICK_FILES if quick else FILES
    sizes = [s for s in SIZES if s[0] in ("512M", "1T")] if quick else SIZES
    for size, _ in sizes:
        for run in range(1 if quick else RUNS):
            e = dict(id="scale-%s-%d" % (size.lower(), run + 1), exp="edscale", boot="", timeout=900,
                     cmd=["edscale -n %d -d 100" % files, "edscale"],
                     env={"DISK": "virtio", "DISK_SIZE": size}, platforms=["virtio"])
            if size in TMPFS:
                e["scratch_in"] = "/dev/shm"
            out.append(e)
    if not quick:
        out.append(dict(id="scale-many", exp="edscale", boot="", timeout=12 * 3600,
                        cmd="edscale -n %d -d 100 -c 10000" % MANY,
                        env={"DISK": "virtio", "DISK_SIZE": "64G"}, platforms=["virtio"]))
    return out


def _size_name(sectors):
    for size, name in SIZES:
        mult = {"M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[size[-1]]
        if int(size[:-1]) * mult // 512 == sectors:
            return name
    return "%d sectors" % sectors


def _med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def compute(records):
    """Per disk size: medians over the runs of every figure."""
    recs = [r for r in records if r.get("bench") == "edscale"]
    by = {}
    for r in recs:
        if r["entry"] == "scale-many" or r["what"] not in ("boot", "files"):
            continue
        d = by.setdefault(r["sectors"], {"blank": [], "populated": [], "files": []})
        if r["what"] == "boot":
            d["blank" if r.get("format_sectors", 0) > 0 else "populated"].append(r)
        elif r["what"] == "files":
            d["files"].append(r)
    rows = []
    for sectors in sorted(by):
        d = by[sectors]
        rows.append(dict(
            sectors=sectors, name=_size_name(sectors), runs=len(d["blank"]),
            format_sectors=_med([r["format_sectors"] for r in d["blank"]]),
            boot_ms=_med([r["boot_ms"] for r in d["blank"]]),
            mount_us=_med([r["mount_us"] for r in d["blank"]]),
            mount_sectors=_med([r["mount_sectors"] for r in d["blank"]]),
            kmem_kib=_med([r["kmem_kib"] for r in d["blank"]]),
            files=_med([r["files"] for r in d["files"]]),
            ckpt_sectors=_med([r["ckpt_sectors"] for r in d["files"]]),
            kmem_files_kib=_med([r["kmem_kib"] for r in d["files"]]),
            pboot_ms=_med([r["boot_ms"] for r in d["populated"]]),
            pmount_us=_med([r["mount_us"] for r in d["populated"]]),
            pmount_sectors=_med([r["mount_sectors"] for r in d["populated"]]),
            pkmem_kib=_med([r["kmem_kib"] for r in d["populated"]])))
    many = sorted((r for r in recs if r["entry"] == "scale-many" and r["what"] == "create"),
                  key=lambda r: r["files"])
    return rows, many


def _ratio(a, b):
    return a / b if a is not None and b else None


def _fmt(v, nd=0):
    if v is None:
        return "-"
    return ("%%.%df" % nd) % v


def report(records):
    """Markdown lines for report.md, and the targets as (what, value, met)."""
    rows, many = compute(records)
    if not rows and not many:
        return [], []
    base = next((r for r in rows if r["name"] == "512 MiB"), None)
    out = ["## The exodisk on big disks (issue 11)", "",
           "Each size: a blank sparse image formatted at boot; medians over the runs. Boot: power-on "
           "to the first program (rdtime). Mount: the exodisk's, in the kernel. The checkpoint: what "
           "ED_OP_CHECKPOINT writes after %s files of 1 KiB (100 per directory) on a unixfs, "
           "synced. Populated: the next boot on that disk." % (_fmt(rows[0]["files"]) if rows else "-"), "",
           "| unit | runs | format (sectors) | boot, blank (ms) | x 512 MiB | mount blank (ms / sectors) "
           "| checkpoint after files (sectors) | x 512 MiB | boot, populated (ms) | mount populated "
           "(ms / sectors) | x 512 MiB | kernel memory blank / populated (KiB) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append("| %s | %d | %s | %s | %s | %s / %s | %s | %s | %s | %s / %s | %s | %s / %s |" % (
            r["name"], r["runs"], _fmt(r["format_sectors"]), _fmt(r["boot_ms"]),
            _fmt(_ratio(r["boot_ms"], base and base["boot_ms"]), 2),
            _fmt(r["mount_us"] and r["mount_us"] / 1000, 1), _fmt(r["mount_sectors"]),
            _fmt(r["ckpt_sectors"]), _fmt(_ratio(r["ckpt_sectors"], base and base["ckpt_sectors"]), 2),
            _fmt(r["pboot_ms"]), _fmt(r["pmount_us"] and r["pmount_us"] / 1000, 1),
            _fmt(r["pmount_sectors"]), _fmt(_ratio(r["pmount_us"], base and base["pmount_us"]), 2),
            _fmt(r["kmem_kib"]), _fmt(r["pkmem_kib"])))
    out.append("")
    targets = []
    one = next((r for r in rows if r["name"] == "1 TiB"), None)
    if base and one:
        b = _ratio(one["boot_ms"], base["boot_ms"])
        targets.append(("boot with a 1 TiB blank unit <= 1.5x 512 MiB", _fmt(b, 2) + "x",
                        b is not None and b <= 1.5))
        m = _ratio(one["pmount_us"], base["pmount_us"])
        targets.append(("mount of a 1 TiB unit holding the unixfs <= 1.5x 512 MiB", _fmt(m, 2) + "x",
                        m is not None and m <= 1.5))
        c = _ratio(one["ckpt_sectors"], base["ckpt_sectors"])
        targets.append(("checkpoint after the files, 1 TiB within 10% of 512 MiB", _fmt(c, 2) + "x",
                        c is not None and abs(c - 1) <= 0.10))
    if rows:
        worst = max(r["format_sectors"] or 0 for r in rows)
        targets.append(("format writes <= 4 MiB at any size", "%d sectors at most" % worst,
                        worst <= 8192))
    if many:
        first = next((m for m in many if m["files"] >= 1000), many[0])
        last = many[-1]
        g = _ratio(last["us_per_file"], first["us_per_file"])
        out += ["Creating %d files (100 per directory, 1 KiB each) on a 64 GiB unit: time per file "
                "over each %d files." % (last["files"], last["every"]), "",
                "| files | us per file | elapsed (s) |", "|---|---|---|"]
        for m in many:
            out.append("| %d | %d | %.0f |" % (m["files"], m["us_per_file"], m["elapsed_ms"] / 1000))
        out.append("")
        targets.append(("create cost at file %d within 1.25x of file %d" % (last["files"], first["files"]),
                        _fmt(g, 2) + "x", g is not None and g <= 1.25))
    for what, v, ok in targets:
        out.append("* %s: %s - %s" % (what, v, "met" if ok else "MISSED"))
    out.append("")
    return out, targets


def plot(outdir, records, quick):
    """fig-scale.png: costs against disk size; the million-file curve if run."""
    rows, many = compute(records)
    if not rows:
        return []
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs = [r["sectors"] * 512 / (1 << 30) for r in rows]
    ncol = 3 if many else 2
    fig, ax = plt.subplots(1, ncol, figsize=(5 * ncol, 4))
    a = ax[0]
    for key, label in (("boot_ms", "boot, blank (ms)"), ("pboot_ms", "boot, populated (ms)")):
        a.plot(xs, [r[key] for r in rows], marker="o", label=label)
    a.plot(xs, [r["pmount_us"] / 1000 if r["pmount_us"] else None for r in rows], marker="s",
           label="mount, populated (ms)")
    a.set_xscale("log")
    a.set_xlabel("disk size (GiB)")
    a.set_ylabel("ms")
    a.set_ylim(bottom=0)
    a.set_title("time%s" % (" (QUICK)" if quick else ""))
    a.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), fontsize=8)
    b = ax[1]
    for key, label in (("format_sectors", "format writes"), ("ckpt_sectors", "checkpoint after files"),
                       ("pmount_sectors", "mount reads"), ("kmem_kib", "kernel memory (KiB)")):
        b.plot(xs, [r[key] for r in rows], marker="o", label=label)
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("disk size (GiB)")
    b.set_ylabel("sectors / KiB")
    b.set_title("what it costs, against the disk's size")
    b.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), fontsize=8)
    if many:
        c = ax[2]
        c.plot([m["files"] for m in many], [m["us_per_file"] for m in many], marker=".")
        c.set_xscale("log")
        c.set_xlabel("files")
        c.set_ylabel("us per file created")
        c.set_ylim(bottom=0)
        c.set_title("unixfs, 100 files per directory, 64 GiB")
    fig.tight_layout()
    path = os.path.join(outdir, "fig-scale.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def check(records, quick):
    """Problems with the experiment's records (for make test's bench-check)."""
    rows, _ = compute(records)
    problems = []
    if not rows:
        return ["edscale: no records"]
    for r in rows:
        for key in ("format_sectors", "boot_ms", "mount_sectors", "ckpt_sectors", "pmount_sectors",
                    "kmem_kib"):
            if r[key] is None or r[key] <= 0:
                problems.append("edscale %s: %s missing or not positive" % (r["name"], key))
    return problems


def boot_entry(entry, out, quiet=False):
    """Run an entry's boots on one fresh scratch directory; its records."""
    cmds = entry["cmd"] if isinstance(entry["cmd"], list) else [entry["cmd"]]
    records = []
    with qemuboot.scratch("edscale-", entry.get("scratch_in")) as d:
        for i, cmd in enumerate(cmds):
            log = os.path.join(out, "logs", "%s-boot%d.log" % (entry["id"], i + 1))
            t0 = time.time()
            status = qemuboot.boot(cmd, log, d, env=entry["env"], bootargs=entry["boot"],
                                   timeout=entry["timeout"])
            got = qemuboot.records(log)
            for rec in got:
                rec["entry"] = entry["id"]
                rec["boot"] = i + 1
            if status != 0 or not any(r.get("bench") == "edscale" for r in got):
                raise RuntimeError("%s boot %d: exit %d, see %s" % (entry["id"], i + 1, status, log))
            if not quiet:
                print("  %s boot %d: %.1f s, %d records" % (entry["id"], i + 1, time.time() - t0, len(got)),
                      flush=True)
            records += got
    return records


def main(argv):
    ap = argparse.ArgumentParser(description="the exodisk scaling experiment (issue 11)")
    ap.add_argument("--quick", action="store_true", help="512 MiB and 1 TiB, %d files, one run" % QUICK_FILES)
    ap.add_argument("--many", type=int, nargs="?", const=MANY, default=0, metavar="FILES",
                    help="also the many-file run on 64 GiB: %d files (hours) or FILES" % MANY)
    ap.add_argument("--sizes", help="comma-separated sizes among %s" % ",".join(s for s, _ in SIZES))
    ap.add_argument("--runs", type=int, help="runs per size (default %d)" % RUNS)
    ap.add_argument("--files", type=int, help="files per run (default %d)" % FILES)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "scale"))
    a = ap.parse_args(argv)
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    ents = [e for e in entries(a.quick) if e["id"] != "scale-many"]
    if a.sizes:
        want = {x.strip().lower() for x in a.sizes.split(",")}
        ents = [e for e in ents if e["env"]["DISK_SIZE"].lower() in want]
    if a.runs:
        base = {e["env"]["DISK_SIZE"]: e for e in ents}
        ents = [dict(e, id="scale-%s-%d" % (size.lower(), r + 1)) for r in range(a.runs)
                for size, e in base.items()]
    if a.files:
        for e in ents:
            e["cmd"] = ["edscale -n %d -d 100" % a.files, "edscale"]
    # Interleave: run 1 of every size, then run 2, ...
    ents.sort(key=lambda e: int(e["id"].rsplit("-", 1)[1]))
    if a.many:
        for e in entries(False):
            if e["id"] == "scale-many":
                e["cmd"] = "edscale -n %d -d 100 -c %d" % (a.many, max(a.many // 100, 100))
                ents.append(e)
    if not ents:
        print("scale: no boots chosen (--sizes %s: sizes are %s)" % (a.sizes, ",".join(s for s, _ in SIZES)),
              file=sys.stderr)
        return 2
    records = []
    load = []
    for e in ents:
        load.append(os.getloadavg()[0])
        records += boot_entry(e, a.out)
    with open(os.path.join(a.out, "records.json"), "w") as f:
        json.dump(records, f, indent=1)
    lines, targets = report(records)
    lines.insert(1, "")
    lines.insert(2, "Command: `python3 tools/bench/scale.py %s`; host load average %.1f-%.1f during "
                 "the runs (shared machine)." % (" ".join(argv), min(load), max(load)))
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    try:
        plot(a.out, records, a.quick)
    except ImportError:
        pass
    return 0 if all(ok for _, _, ok in targets) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
