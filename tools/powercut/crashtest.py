#!/usr/bin/env python3
"""crashtest.py - power-cut testing of the real stack (docs/powercut.md).

For the exodisk alone (edtest powercut-run: extents and exonodes, no
libFS) and each library file system (LIBFS_TYPES in userfs/userfs.mk; or
-t), the guest runs its workload (`pcwork run`) on unit 0 served by
tools/powercut/pcdisk, a disk that loses its unflushed writes when the
power fails at a chosen request.
First an uncut run counts the requests that change the disk (writes,
flushes): R.  Then for each cut point c in 1..R (all with --all, else a
sample spread evenly), from the same prepared image:

  0. the disk is filled with 0xEE and formatted with a small log (once).
  1. boot, run the workload; the power fails at request c: the unflushed
     writes are lost (mode none) or each sector kept or lost by chance
     (mode random, seeded by c), QEMU is killed.  The acknowledgements the
     guest printed before it died say which step was durable (A).
  2. on the host, `exotool check` of the image as it is: the exodisk's
     invariants after the replay the next mount will do; for fatfs, the
     volume exported (exotool fat-export) is repaired by dosfstools'
     `fsck.fat -a` and then clean by `fsck.fat -n`.
  3. boot again: the kernel recovers the exodisk; `pcwork check ... A`
     checks every file and listing against the model as of step A or A+1
     and walks the file system through its operations; then the type's
     own `fsck`.  A type whose format cannot be crash-consistent without a
     repair (FAT: lost clusters, REPAIRABLE below) may have problems that
     `fsck -r` repairs; a second `fsck` must then be clean.  Any other type
     must be clean at once.
  4. `exotool check` again after that boot.

Stacks of layers (STACKS below: crypt and compress over unixfs) run the
same way, the workload on the top layer, the checks on the file system.
TYPE@rewrite runs pcwork's rewrite workload (-w rewrite) on TYPE.

Usage:
    crashtest.py [-t TYPE,...] [--steps N] [--cuts K | --all] [--modes none,random]
                 [-j JOBS] [-v] [--keep DIR]

Prints one line per type and mode: requests, cuts tried, how many passed;
each failure with the cut, mode and what was wrong (reproduce one with
--only TYPE:MODE:CUT).  Exit status 0 when every cut recovered.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BUILD", "build")
EXOTOOL = os.path.join(ROOT, BUILD, "tools", "exotool")
RUNQEMU = os.path.join(ROOT, "tools", "run-qemu.sh")
OPTS = "key=pc"
DISK_SIZE = "64M"          # in MiB: the image is filled with 0xEE
# What each type's documentation says a power cut may leave for its
# checker to repair (a regular expression over fsck's problem lines); any
# other problem after a cut is a failure, and so is anything fsck -r
# leaves.  FAT cannot order its updates to stay consistent: lost clusters,
# chains longer than their files and names whose frees were not yet
# durable are what fsck.fat -a repairs (docs/fatfs.md, "Crash safety").
# unixfs makes a directory's or large file's node durable before the record
# that names it and frees it after the record is gone, so a cut in between
# leaves an orphan node (leaked space, no data lost: docs/unixfs.md, "What
# a crash can leave").
REPAIRABLE = {"fatfs": r".", "unixfs": r"orphan node"}
CUT_STATUS = 250          # tools/run-qemu.sh: the power failed
# The exodisk alone: edtest's workload of extents and exonodes
# (apps/edtest/t_powercut.c), no library file system.
EXODISK = "exodisk"
# Stacks of layers over a file system (docs/stacking.md), named as pcwork
# and exobench name them: LAYER[+LAYER]/TYPE.  The layers that rewrite
# whole blocks (crypt, compress) keep two slots per block
# (docs/stacking.md, "Power cuts"): no block may be left unreadable, so the
# check allows nothing more for them than for the file system.
# TYPE@rewrite runs pcwork's other workload (-w rewrite): one file made, then
# rewritten in place at every step - the case of acknowledged bytes in the
# blocks a cut write was rewriting.
STACKS = ["crypt/unixfs", "compress/unixfs", "crypt/unixfs@rewrite", "compress/unixfs@rewrite"]


def stack_name(typ):
    """The stack or type without its @workload."""
    return typ.split("@")[0]


def slug(typ):
    """The type as a file name."""
    return typ.replace("/", "-").replace("+", "-").replace("@", "-")


def base_type(typ):
    """The file system at the bottom of a stack (the type itself if none)."""
    return stack_name(typ).split("/")[-1]


def work_args(typ):
    """pcwork's options for a type: -w for another workload; or ""."""
    return "-w %s " % typ.split("@")[1] if "@" in typ else ""


def libfs_types():
    with open(os.path.join(ROOT, "userfs", "userfs.mk")) as f:
        for line in f:
            m = re.match(r"\s*LIBFS_TYPES\s*:?=\s*(.*)$", line)
            if m:
                return m.group(1).split()
    raise SystemExit("crashtest: userfs/userfs.mk names no LIBFS_TYPES")


def boot(scratch, cmd, powercut=None, timeout=180):
    """Boot on scratch/disk0.img with CMD; returns (status, output, stats)."""
    env = dict(os.environ, CMD=cmd, EXODISK_NO_DEPS="1", EXODISK_SCRATCH=scratch,
               DISK_SIZE=DISK_SIZE, BUILD=BUILD)
    env.pop("POWERCUT", None)
    stats = os.path.join(scratch, "pcstats")
    if powercut is not None:
        env["POWERCUT"] = powercut
        env["POWERCUT_STATS"] = stats
        if os.path.exists(stats):
            os.unlink(stats)
    proc = subprocess.Popen([RUNQEMU], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    timer = threading.Timer(timeout, os.killpg, (proc.pid, signal.SIGKILL))
    timer.start()
    try:
        out, _ = proc.communicate()
    finally:
        timer.cancel()
    out = out.decode("utf-8", "replace").replace("\r", "")
    if proc.returncode == -signal.SIGKILL:
        raise RuntimeError("boot of %r: no power-off within %ds:\n%s" % (cmd, timeout, out[-1500:]))
    st = {}
    if powercut is not None and os.path.exists(stats):
        with open(stats) as f:
            w = f.read().split()
            st = {w[i]: int(w[i + 1]) for i in range(0, len(w) - 1, 2)}
    return proc.returncode, out, st


def exotool_check(img):
    p = subprocess.run([EXOTOOL, "check", img], cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def fat_host_check(img, scratch):
    """A FAT volume after the cut, as the rest of the world sees it: exported
    by exotool, repaired by dosfstools' fsck.fat -a, then clean by -n.
    "" or what was wrong."""
    out = os.path.join(scratch, "fat.img")
    p = subprocess.run([EXOTOOL, "fat-export", img, out, "-o", OPTS], cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        return "exotool fat-export: " + p.stdout.decode("utf-8", "replace").strip()
    env = dict(os.environ, PATH=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    a = subprocess.run(["fsck.fat", "-a", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    n = subprocess.run(["fsck.fat", "-n", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    os.unlink(out)
    if a.returncode not in (0, 1) or n.returncode != 0:
        return "fsck.fat -a then -n: %d, %d: %s" % (a.returncode, n.returncode,
                                                   n.stdout.decode("utf-8", "replace").strip()[-300:])
    return ""


# Checks on the host of the volume the cut left, for types the rest of the
# world reads (issue 12: "the volume is what fsck.fat can repair").
HOST_CHECK = {"fatfs": fat_host_check}


def problems(out):
    """The problem counts of each `fsck:` summary line, in order."""
    return [int(m.group(1)) for m in re.finditer(r"^fsck: .*: (\d+) problems?", out, re.M)]


class TypeRun:
    """One type's prepared image and workload size."""

    def __init__(self, typ, steps, work):
        self.typ, self.steps, self.work = typ, steps, work
        self.base = os.path.join(work, slug(typ) + "-base.img")

    def prepare(self, log):
        scratch = tempfile.mkdtemp(prefix="pc-prep-", dir=self.work)
        # Every sector holds 0xEE before the exodisk is made (as the host
        # harness's PC_GARBAGE): a file showing such a byte shows sectors it
        # never wrote.  A small commit log, so the exodisk wraps it and
        # checkpoints within the workload: those writes get cut too.
        img = os.path.join(scratch, "disk0.img")
        with open(img, "wb") as f:
            chunk = b"\xee" * (1 << 20)
            for _ in range(int(DISK_SIZE[:-1])):
                f.write(chunk)
        subprocess.run([EXOTOOL, "format", img, "-s", DISK_SIZE, "-l", str(log)], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
        if self.typ != EXODISK:
            status, out, _ = boot(scratch, "pcwork %sprep %s %s" % (work_args(self.typ),
                                                                stack_name(self.typ), OPTS))
            if status != 0 or "pcwork: %s made" % stack_name(self.typ) not in out:
                raise RuntimeError("%s: preparing failed (%s):\n%s" % (self.typ, status, out[-1500:]))
        shutil.copyfile(os.path.join(scratch, "disk0.img"), self.base)
        shutil.rmtree(scratch, ignore_errors=True)
        # The uncut run: how many requests the workload makes, and that it
        # works at all.
        status, out, st, why = self.one("none", 0)
        if why:
            raise RuntimeError("%s: the run without a power cut failed: %s" % (self.typ, why))
        self.requests = st.get("requests", 0)
        if self.requests == 0:
            raise RuntimeError("%s: pcdisk counted no requests" % self.typ)

    def one(self, mode, cut, keep=None):
        """Cut at request `cut` (0: never).  Returns (status, output, stats, why);
        why is "" when everything recovered."""
        scratch = tempfile.mkdtemp(prefix="pc-%s-%s-%d-" % (slug(self.typ),
                                                           mode, cut), dir=self.work)
        img = os.path.join(scratch, "disk0.img")
        shutil.copyfile(self.base, img)
        why, out = "", ""
        try:
            pc = "%d:%s:%d" % (cut, mode, cut)
            if self.typ == EXODISK:
                run = "edtest powercut-run %d" % self.steps
            else:
                run = "pcwork %srun %s %s %d" % (work_args(self.typ), stack_name(self.typ), OPTS,
                                                 self.steps)
            status, out, st = boot(scratch, run, powercut=pc)
            if "kernel panic" in out:
                return status, out, st, "kernel panic during the workload"
            acks = [int(a) for a in re.findall(r"^pcwork: ack (\d+)$", out, re.M)]
            acked = max(acks) if acks else 0
            if status == CUT_STATUS:
                if st.get("cut") != cut:
                    return status, out, st, "run-qemu said cut, pcdisk's stats say %r" % st
            elif status == 0:
                # The workload ended before request `cut` (or there was none).
                if acked != self.steps:
                    return status, out, st, "finished uncut with %d of %d steps acknowledged" % (
                        acked, self.steps)
            else:
                return status, out, st, "the workload boot ended with status %s" % status
            rc, text = exotool_check(img)
            if rc != 0:
                return status, out + text, st, "exotool check after the cut: " + \
                    (text.strip().splitlines() or ["?"])[-1]
            if base_type(self.typ) in HOST_CHECK:
                why = HOST_CHECK[base_type(self.typ)](img, scratch)
                if why:
                    return status, out, st, why
            fsck = "fsck -t %s %s" % (base_type(self.typ), OPTS)
            if self.typ == EXODISK:
                cmd = "edtest powercut-check %d %d; echo pcwork=$?" % (self.steps, acked)
            else:
                cmd = "pcwork %scheck %s %s %d %d; echo pcwork=$?; %s; fsck -t %s -r %s; %s" % (
                    work_args(self.typ), stack_name(self.typ), OPTS, self.steps, acked, fsck,
                    base_type(self.typ),
                    OPTS, fsck)
            cstatus, cout, _ = boot(scratch, cmd)
            out = out + "\n--- after the power came back ---\n" + cout
            if "kernel panic" in cout:
                return status, out, st, "kernel panic after the cut"
            if not re.search(r"^pcwork=0$", cout, re.M):
                lines = [l for l in cout.splitlines() if l.startswith("pcwork: ")]
                return status, out, st, "acked %d: %s" % (acked, "; ".join(lines[-4:]) or "no check")
            p = problems(cout) if self.typ != EXODISK else [0, 0, 0]
            if len(p) != 3:
                return status, out, st, "fsck did not run three times (%r)" % p
            if p[2] != 0:
                return status, out, st, "fsck -r left %d problems" % p[2]
            if p[0] != 0:
                # The first fsck's problem lines (before its summary line).
                first = cout[cout.index("pcwork=0"):]
                first = first[:re.search(r"^fsck: .*: \d+ problems?", first, re.M).start()]
                found = [l for l in first.splitlines() if l.startswith("fsck: ")]
                allowed = REPAIRABLE.get(base_type(self.typ))
                unexpected = [l for l in found if allowed is None or not re.search(allowed, l)]
                if unexpected or not found:
                    return status, out, st, "fsck found %d problems: %s" % (
                        p[0], "; ".join((unexpected or found)[:3]))
            rc, text = exotool_check(img)
            if rc != 0:
                return status, out + text, st, "exotool check after recovery: " + \
                    (text.strip().splitlines() or ["?"])[-1]
            st["acked"] = acked
            st["repaired"] = p[0]
            return status, out, st, ""
        finally:
            if keep:
                dst = os.path.join(keep, os.path.basename(scratch))
                shutil.copytree(scratch, dst, dirs_exist_ok=True)
                with open(os.path.join(dst, "output.txt"), "w") as f:
                    f.write(out)
            shutil.rmtree(scratch, ignore_errors=True)


def cut_points(n, k):
    """Every request 1..n when k <= 0 or k >= n, else k cut points spread
    evenly inside the workload (the middle of k equal parts)."""
    if k <= 0 or k >= n:
        return list(range(1, n + 1))
    return sorted({1 + ((2 * i + 1) * n) // (2 * k) for i in range(k)})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-t", "--types", default=",".join([EXODISK] + libfs_types() + STACKS))
    ap.add_argument("--steps", type=int, default=int(os.environ.get("PC_STEPS", "12")))
    ap.add_argument("--cuts", type=int, default=4, help="cut points per type and mode")
    ap.add_argument("--all", action="store_true", help="cut at every request")
    ap.add_argument("--modes", default="none,random")
    ap.add_argument("--log", type=int, default=64, help="exodisk log sectors (exotool format -l)")
    ap.add_argument("--only", help="TYPE:MODE:CUT, one run")
    ap.add_argument("-j", "--jobs", type=int, default=int(os.environ.get("PC_JOBS", "2")))
    ap.add_argument("--keep", help="keep each run's images and output under this directory")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    for tool in (EXOTOOL, os.path.join(ROOT, BUILD, "tools", "pcdisk")):
        if not os.path.exists(tool):
            raise SystemExit("crashtest: %s is missing (make host-tools)" % tool)
    work = tempfile.mkdtemp(prefix="exodisk-crash-")
    start = time.time()
    types = args.types.split(",")
    modes = args.modes.split(",")
    if args.only:
        types, modes, only_cut = [args.only.split(":")[0]], [args.only.split(":")[1]], \
            int(args.only.split(":")[2])
    runs = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            # The exodisk's steps are cheaper (a few requests each): twice as many.
            trs = [TypeRun(t, args.steps * (2 if t == EXODISK else 1), work) for t in types]
            for fut, tr in [(pool.submit(tr.prepare, args.log), tr) for tr in trs]:
                fut.result()
            jobs = []
            for tr in trs:
                cuts = [only_cut] if args.only else cut_points(tr.requests, 0 if args.all else args.cuts)
                for mode in modes:
                    runs[(tr.typ, mode)] = []
                    for c in cuts:
                        jobs.append((tr, mode, c, pool.submit(tr.one, mode, c, args.keep)))
            failed = 0
            for tr, mode, c, fut in jobs:
                try:
                    status, out, st, why = fut.result()
                except Exception as e:  # a broken run must fail loudly
                    why, out, st = "harness error: %r" % (e,), "", {}
                runs[(tr.typ, mode)].append((c, why, st))
                if why:
                    failed += 1
                    print("crashtest: FAIL %s mode %s cut %d: %s" % (tr.typ, mode, c, why), flush=True)
                    if args.verbose:
                        for line in out.splitlines()[-30:]:
                            print("    | " + line)
                elif args.verbose:
                    print("crashtest: ok %s mode %s cut %d: acked %d, %d unflushed sectors lost%s"
                          % (tr.typ, mode, c, st.get("acked", 0), st.get("lost", 0),
                             ", fsck repaired %d" % st["repaired"] if st.get("repaired") else ""),
                          flush=True)
        for tr in trs:
            for mode in modes:
                r = runs[(tr.typ, mode)]
                bad = sum(1 for _, why, _ in r if why)
                lost = sum(st.get("lost", 0) for _, why, st in r if not why)
                rep = sum(1 for _, why, st in r if not why and st.get("repaired"))
                print("crashtest: %-7s %-6s %d steps, %d requests, %d cuts, %d recovered, %d failed"
                      " (%d unflushed sectors lost in all; %d needed fsck -r)"
                      % (tr.typ, mode, tr.steps, tr.requests, len(r), len(r) - bad, bad, lost, rep))
        print("crashtest: %s in %.0fs" % ("all recovered" if failed == 0 else "%d FAILED" % failed,
                                          time.time() - start))
        return 1 if failed else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
