#!/usr/bin/env python3
"""run.py - QEMU integration tests: boot the kernel, run guest commands,
check their output and exit status.

Test cases live in tests/qemu/cases_*.py; each defines CASES, a list of
Case objects (see qemutest.py).  Usage:

    python3 tests/qemu/run.py [--arch riscv|x86_64] [--sample] [-j JOBS] [-k SUBSTRING] [--list] [-v]

--arch (default riscv, or $ARCH) boots that architecture's kernel
(tools/run-qemu.sh reads ARCH) and runs the cases that say they run there
(Case.arches).  --sample runs only the bounded sample of tests/qemu/sample.py
(what `make test` runs on x86-64).

Exit status 0 when every selected case passes.  A failing case prints why,
the command, and the tail of the guest's output.
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
from sample import SAMPLE  # noqa: E402


def load_cases():
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
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-j", "--jobs", type=int, default=int(os.environ.get("QEMU_TEST_JOBS", "2")))
    ap.add_argument("-k", "--filter", action="append", default=[])
    ap.add_argument("--list", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--arch", default=os.environ.get("ARCH", "riscv"), choices=("riscv", "x86_64"))
    ap.add_argument("--sample", action="store_true", help="only the cases of tests/qemu/sample.py")
    args = ap.parse_args()
    # Every boot, the cases' own helpers' included, goes to this architecture.
    os.environ["ARCH"] = args.arch

    cases = [c for c in load_cases() if args.arch in c.arches]
    if args.sample:
        unknown = sorted(set(SAMPLE) - {c.name for c in cases})
        if unknown:
            sys.exit("run.py: tests/qemu/sample.py names cases that do not run on %s: %s" % (
                args.arch, ", ".join(unknown)))
        cases = [c for c in cases if c.name in SAMPLE]
    if args.filter:
        cases = [c for c in cases if any(f in c.name for f in args.filter)]
    if args.list:
        for c in cases:
            print(c.name)
        return 0

    start = time.time()
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_case, c): c for c in cases}
        for fut in concurrent.futures.as_completed(futures):
            c = futures[fut]
            res = fut.result()
            status = "PASS" if res.ok else "FAIL"
            print("  %s  %-40s %6.1fs" % (status, c.name, res.seconds), flush=True)
            if not res.ok or args.verbose:
                for line in res.report().splitlines():
                    print("        | " + line)
            if not res.ok:
                failed.append(c.name)
    print("qemu tests (%s%s): %d passed, %d failed in %.0fs%s" % (
        args.arch, ", sample" if args.sample else "", len(cases) - len(failed), len(failed), time.time() - start,
        (" (" + ", ".join(sorted(failed)) + ")") if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
