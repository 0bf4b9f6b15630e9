#!/usr/bin/env python3
"""run.py - QEMU integration tests: boot the kernel, run guest commands,
check their output and exit status.

Test cases live in tests/qemu/cases_*.py; each defines CASES, a list of
Case objects (see qemutest.py).  Usage:

    python3 tests/qemu/run.py [--arch riscv|x86_64|both] [--make-test] [-j JOBS] [-k SUBSTRING]
                              [--list] [-v]

--arch (default riscv, or $ARCH) boots that architecture's kernel
(tools/run-qemu.sh reads ARCH) and runs the cases that say they run there
(Case.arches); `both` runs RISC-V's and x86-64's cases in one pool of JOBS
QEMUs, each case named arch/name.  Cases start longest first (by their
time limit), so the pool does not end on one long case while the other
CPU idles.  --make-test leaves out what tests/qemu/maketest.py says `make
test` leaves out, to stay inside the test budget.

Exit status 0 when every selected case passes or is skipped (a case whose
skip() says the host lacks what it needs, such as a usable /dev/kvm, is not
run and is counted apart, as SKIP with the reason).  A failing case prints
why, the command, and the tail of the guest's output.
"""
import argparse
import concurrent.futures
import importlib.util
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from qemutest import run_case  # noqa: E402
from maketest import NAMED, left_out  # noqa: E402

ARCHES = ("riscv", "x86_64")


def load_cases(arch):
    """The cases that run on arch, made for it (their expectations may
    depend on the machine: qemutest.slot)."""
    os.environ["ARCH"] = arch
    cases = []
    for name in sorted(os.listdir(HERE)):
        if name.startswith("cases_") and name.endswith(".py"):
            spec = importlib.util.spec_from_file_location(name[:-3], os.path.join(HERE, name))
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            cases.extend(mod.CASES)
    names = [c.name for c in cases]
    dups = {n for n in names if names.count(n) > 1}
    if dups:
        sys.exit("run.py: duplicate test names: %s" % ", ".join(sorted(dups)))
    cases = [c for c in cases if arch in c.arches]
    for c in cases:
        c.arch = arch
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-j", "--jobs", type=int, default=int(os.environ.get("QEMU_TEST_JOBS", "2")))
    ap.add_argument("-k", "--filter", action="append", default=[])
    ap.add_argument("--list", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--arch", default=os.environ.get("ARCH", "riscv"), choices=ARCHES + ("both",))
    ap.add_argument("--make-test", action="store_true",
                    help="leave out what tests/qemu/maketest.py says make test leaves out")
    args = ap.parse_args()
    arches = ARCHES if args.arch == "both" else (args.arch,)

    cases = []
    for arch in arches:
        mine = load_cases(arch)
        if args.make_test:
            unknown = sorted(set(NAMED[arch]) - {c.name for c in mine})
            if unknown:
                sys.exit("run.py: tests/qemu/maketest.py names cases that do not run on %s: %s" % (
                    arch, ", ".join(unknown)))
            mine = [c for c in mine if not left_out(arch, c.name)]
        cases.extend(mine)
    # A boot outside a case (none should happen) goes to the first one.
    os.environ["ARCH"] = arches[0]
    if args.filter:
        cases = [c for c in cases if any(f in c.name for f in args.filter)]

    def label(c):
        return c.arch + "/" + c.name if len(arches) > 1 else c.name

    if args.list:
        for c in cases:
            print(label(c))
        return 0

    # Longest first: the time limit is what the case says of its length.
    order = sorted(cases, key=lambda c: -c.timeout)
    start = time.time()
    failed, skipped = [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_case, c): c for c in order}
        for fut in concurrent.futures.as_completed(futures):
            c = futures[fut]
            res = fut.result()
            if res.skipped:
                print("  SKIP  %-47s %s" % (label(c), res.why), flush=True)
                skipped.append(c)
                continue
            status = "PASS" if res.ok else "FAIL"
            print("  %s  %-47s %6.1fs" % (status, label(c), res.seconds), flush=True)
            if not res.ok or args.verbose:
                for line in res.report().splitlines():
                    print("        | " + line)
            if not res.ok:
                failed.append(c)
    what = ", make test's selection" if args.make_test else ""
    for arch in arches:
        mine = [c for c in cases if c.arch == arch]
        bad = sorted(c.name for c in failed if c.arch == arch)
        skip = sorted(c.name for c in skipped if c.arch == arch)
        print("qemu tests (%s%s): %d passed, %d failed%s%s" % (
            arch, what, len(mine) - len(bad) - len(skip), len(bad),
            (" (" + ", ".join(bad) + ")") if bad else "",
            (", %d skipped (%s)" % (len(skip), ", ".join(skip))) if skip else ""))
    print("qemu tests: %d cases in %.0fs, %d failed%s" % (
        len(cases), time.time() - start, len(failed),
        (", %d skipped" % len(skipped)) if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
