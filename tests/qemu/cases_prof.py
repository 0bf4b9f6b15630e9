"""cases_prof.py - the profiler (issue 10, docs/profiling.md): prof finds
where a CPU-bound program spends its time, sees kernel time and sleeping,
counts system calls and disk requests per phase, and its record read on
the host by tools/prof-report says the same as the guest."""
import os
import re
import subprocess
import tempfile

from qemutest import Case, ROOT


def table(out, heading):
    """Rows (self%, self, total%, name) of the first table after heading."""
    at = out.find(heading)
    if at < 0:
        return None
    rows = []
    lines = out[at:].splitlines()
    first = next(i for i, l in enumerate(lines) if "self%" in l) + 1
    for line in lines[first:]:
        m = re.match(r"^\s+([\d.]+)%\s+(\d+)\s+([\d.]+)%(?:\s+[\d.]+%)?\s+(.+)$", line)
        if not m:
            break
        rows.append((float(m.group(1)), int(m.group(2)), float(m.group(3)), m.group(4)))
    return rows


def spin_in_main(out):
    """Nearly all of spin's running samples are in its main (the busy loop).
    (How many there are depends on the host's load: spin runs for a time by
    the guest's clock, which goes on while a busy host keeps QEMU waiting;
    sampling at 5 kHz leaves enough even when QEMU runs a tenth of the time.)"""
    rows = table(out, "Running (user, kernel and interrupt samples), by self:")
    if not rows:
        return "no running-samples table"
    pct, n, _, name = rows[0]
    if name != "main" or pct < 80 or n < 30:
        return "top function %s with %.1f%% of %d samples; expected main with >= 80%% of >= 30" % (name, pct, n)
    return None


def kernel_seen(out):
    """Spawning through the shell shows kernel time in the spawn system call."""
    rows = table(out, "Running, by total")
    if not rows:
        return "no running-by-total table"
    names = [r[3] for r in rows]
    if not any(n in ("sys_spawn [k]", "proc_spawn [k]") for n in names):
        return "no kernel spawn frames among %s" % names
    if not re.search(r"^  running in the kernel\s+[1-9]", out, re.M):
        return "no kernel samples"
    return None


def waits_seen(out):
    """A shell waiting for its child sleeps in proc_wait."""
    rows = table(out, "Wall clock (every sample: asleep and ready too), by self:")
    if not rows or not any(r[3] == "proc_wait [k]" for r in rows):
        return "proc_wait [k] is not where the shell waited"
    return None


def host_report_agrees(out):
    """tools/prof-report on the console dump finds spin's main on top too."""
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write(out)
        log = f.name
    try:
        r = subprocess.run([os.path.join(ROOT, "build", "tools", "prof-report"), "--log", log],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(log)
    if r.returncode != 0:
        return "prof-report failed: %s" % r.stderr.strip()
    return spin_in_main(r.stdout)


def heap_census(out):
    """edscale -m: a heap census per window whose parts add up to the heap
    (within the rounding to KiB), with call sites holding live bytes, and
    unixfs's pool among the large blocks: its names, objects and small
    files' bytes are carved from chunks of 32 KiB spans (userfs/unixfs/
    pool.c), so 3,000 files' worth is a site holding MiBs in a few blocks."""
    import json
    lines = [json.loads(m.group(1)) for m in re.finditer(r"EXOBENCH (\{.*\})", out)]
    heaps = [r for r in lines if r.get("what") == "heap"]
    if len(heaps) != 3:
        return "%d heap lines, expected 3" % len(heaps)
    for r in heaps:
        parts = r["top_kib"] + r["small_live_kib"] + r["small_idle_kib"] + r["large_live_kib"] + r["large_idle_kib"]
        if not r["heap_kib"] - 8 <= parts <= r["heap_kib"] + 1:
            return "heap %d KiB, its parts %d KiB: %s" % (r["heap_kib"], parts, r)
        if not r["sites"] or r["sites"][0][2] <= 0 or not r["classes"]:
            return "no sites or classes: %s" % r
    last = heaps[-1]
    if last["large_live_kib"] < 1024 or not any(s[2] >= (1 << 20) and s[1] <= 16 for s in last["sites"]):
        return "no site holding the unixfs pool's chunks: %s" % last
    return None


def phases_counted(out):
    """fsbench's phases each get counts per file: a create writes, a read reads
    (unixfs groups a directory's small files, so fewer than one per file)."""
    for phase, col in (("small create+write", 7), ("small read", 5)):
        m = re.search(r"^  %s\s+(.*)$" % re.escape(phase), out, re.M)
        if not m:
            return "no row for phase %s" % phase
        v = m.group(1).split()
        # ms units ms/unit syscalls exodisk reads writes flushes ...
        if int(v[1]) != 30 or float(v[3]) <= 0 or float(v[col - 1]) <= 0:
            return "phase %s: unexpected counts %s" % (phase, v)
    return None


CASES = [
    Case("prof-cpu-bound-main", "prof -f 5000 spin A 3 200", expect=[r"^A 2$", r"^prof: spin A 3 200$"],
         check=spin_in_main),
    # Under ICOUNT=1 the guest's clock counts instructions, so the samples
    # do not depend on how much of the host QEMU got (on a busy CI machine
    # eight spawns once ran in 22 ms of host time without one sample).
    # Children that outlast a scheduler tick make the shell wait in
    # proc_wait whatever the tick's phase (a true can end before the shell
    # gets back to waiting for it, and then it never sleeps).
    Case("prof-kernel-and-sleep", "prof -f 10000 -n 60 sh -c '%s'" % "; ".join(["true"] * 20 + ["spin w 1 20"] * 4),
         check=lambda out: kernel_seen(out) or waits_seen(out), env={"ICOUNT": "1"}),
    Case("prof-host-report", "prof -f 5000 -d -q spin B 2 200", expect=[r"prof-dump: begin \d+", r"prof-dump: end"],
         check=host_report_agrees),
    Case("prof-phases-and-counts", "mkfs; mkdir /b; prof -q -o /b.prof fsbench -n 30 -m 1 -r 5 /b; "
         "prof -n 5 fsbench -n 30 -m 1 -r 5 /b",
         expect=[r"^Phases", r"^Phase small read: \d+ samples", r"disk requests\s+\d+ reads"],
         check=phases_counted, timeout=180),
    Case("prof-heap-census", "mkfs; edscale -n 3000 -d 100 -c 1000 -m",
         expect=[r"edscale: 3000 files, a checkpoint after them wrote \d+ sectors"], check=heap_census,
         timeout=120),
    Case("prof-errors", "prof; echo st=$?; prof nosuchprog; echo st=$?; prof -f 5 spin A 1; echo st=$?; "
         "prof prof spin A 1 10; echo st=$?",
         expect=[r"^usage: prof", r"^st=125$", r"prof: nosuchprog: command not found", r"^st=127$",
                 r"prof: cannot start a profile: invalid argument",
                 r"prof: cannot start a profile: resource busy"]),
]

# The profiler samples through RISC-V's trap and frame conventions
# (kernel/arch/riscv/prof_sample.c); the x86-64 kernel says it has no
# sampler (kernel/arch/x86_64/prof_none.c).
for _c in CASES:
    _c.arches = ("riscv",)
CASES.append(Case("prof-not-on-x86", "prof spin A 1; echo st=$?", arches=("x86_64",),
                  expect=[r"^prof: cannot start a profile: unknown system call$", r"^st=125$"]))
