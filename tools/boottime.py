#!/usr/bin/env python3
"""boottime.py - how long each architecture takes to boot into the shell.

    python3 tools/boottime.py [-n ROUNDS] [--arch riscv,x86_64]

Each round boots every architecture once, in turn (so host load falls on
both alike), through tools/run-qemu.sh with a fresh copy of the root disk
(build/disk0.img, the image `make qemu` boots; the same bytes on both
machines) and CMD='cat /etc/motd > /dev/null; echo boot-ready': the shell
has started, mounted the root unixfs and read a file.  Host wall-clock
times from starting QEMU, per boot:

    kernel   the kernel's first line ("exodisk kernel: ..."): QEMU, the
             firmware (OpenSBI on RISC-V, SeaBIOS on the PC) and loading
             the kernel and initrd
    shell    "boot-ready": the kernel's boot (console, memory, traps,
             timer, devices, the exodisk's mount of unit 0), the shell,
             the root mount and one file read
    off      QEMU has exited after power-off

It prints each boot, then the median and range of each over the rounds,
and the ratio of the medians to the first architecture.  Build both first
(`make all` and `make all ARCH=x86_64`).  Timings include QEMU's start-up
and depend on the host's load: quote medians and ratios, and the load.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CMD = "cat /etc/motd > /dev/null; echo boot-ready"


def boot(arch, build, image):
    scratch = tempfile.mkdtemp(prefix="boottime-")
    try:
        shutil.copyfile(image, os.path.join(scratch, "disk0.img"))
        env = dict(os.environ, ARCH=arch, CMD=CMD, BUILD=build, EXODISK_SCRATCH=scratch, EXODISK_NO_DEPS="1")
        env.pop("BOOTARGS", None)
        env.pop("DISK", None)
        env.pop("DISKS", None)
        t0 = time.monotonic()
        p = subprocess.Popen([os.path.join(ROOT, "tools", "run-qemu.sh")], cwd=ROOT, env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        marks = {}
        for raw in p.stdout:
            line = raw.decode("utf-8", "replace")
            now = time.monotonic() - t0
            if "kernel" not in marks and line.startswith("exodisk kernel:"):
                marks["kernel"] = now
            if "shell" not in marks and line.strip() == "boot-ready":
                marks["shell"] = now
        status = p.wait()
        marks["off"] = time.monotonic() - t0
        if status != 0 or len(marks) != 3:
            sys.exit("boottime: %s: status %d, saw %s" % (arch, status, ", ".join(sorted(marks))))
        return marks
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", "--rounds", type=int, default=5)
    ap.add_argument("--arch", default="riscv,x86_64")
    args = ap.parse_args()
    arches = args.arch.split(",")
    build = os.environ.get("BUILD", "build")
    image = os.path.join(ROOT, build, "disk0.img")
    for arch in arches:
        kernel = os.path.join(ROOT, build, "kernel.elf" if arch == "riscv" else "x86_64/kernel.mb")
        for f in (image, kernel):
            if not os.path.exists(f):
                sys.exit("boottime: %s is missing: make all%s" % (f, "" if arch == "riscv" else " ARCH=" + arch))
    res = {a: [] for a in arches}
    load0 = os.getloadavg()[0]
    for r in range(args.rounds):
        for a in arches:
            m = boot(a, build, image)
            res[a].append(m)
            print("round %d %-7s kernel %.2fs  shell %.2fs  off %.2fs" % (r + 1, a, m["kernel"], m["shell"], m["off"]),
                  flush=True)
    print("load average %.1f before, %.1f after; %d rounds" % (load0, os.getloadavg()[0], args.rounds))
    base = arches[0]
    print("%-8s %-22s %-22s %-22s" % ("arch", "kernel s (median, range)", "shell s", "off s"))
    for a in arches:
        cols = []
        for k in ("kernel", "shell", "off"):
            v = [m[k] for m in res[a]]
            cols.append("%.2f [%.2f-%.2f]" % (statistics.median(v), min(v), max(v)))
        print("%-8s %-22s %-22s %-22s" % (a, *cols))
    for a in arches[1:]:
        ratios = ["%s %.2fx" % (k, statistics.median(m[k] for m in res[a]) /
                                statistics.median(m[k] for m in res[base])) for k in ("kernel", "shell", "off")]
        print("%s / %s (ratio of medians): %s" % (a, base, ", ".join(ratios)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
