#!/usr/bin/env python3
"""run.py - the host side of `make bench`: boot the guest once per
experiment and platform (tools/bench/suite.py), show progress, and collect
the guest's machine-readable lines; then the Linux comparison's rounds
(suite.compare_entries: our boots and Debian Linux's, interleaved).

    run.py [--quick] [--out DIR] [--platforms model,virtio] [--only ID,...] [--quiet]
           [--linux yes|no|only]

Each boot gets a fresh scratch directory for its disk images
(EXODISK_SCRATCH), so every experiment starts on a blank disk.  --linux no
leaves the comparison out, --linux only runs nothing else.  Written to DIR
(default results/):

    results.jsonl   every "EXOBENCH {...}" line of every boot, as JSON, with
                    "platform" and "entry" added (and, for the comparison's
                    boots, "group": "compare" and "round")
    logs/P-ID.log   each boot's whole console output (compare-rN-ID.log)
    run.json        what ran: the commands, boot options, host, QEMU and
                    git revision, and how long each boot took

Exit status 0 when every boot powered off with status 0.  Standard library
only, so any python3 can run it.
"""
import argparse
import json
import os
import platform as pyplatform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import suite  # noqa: E402

LINE = re.compile(r"EXOBENCH (\{.*\})\s*$")


def host_info():
    info = {"machine": pyplatform.machine(), "system": pyplatform.platform(), "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        info["qemu"] = subprocess.run(["qemu-system-riscv64", "--version"], capture_output=True,
                                      text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        pass
    try:
        info["git"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                     text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        info["git_dirty"] = bool(dirty)
    except OSError:
        pass
    return info


def loadavg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def boot(entry, plat, out, quiet, rnd=None):
    """Run one entry on one platform (or, with a round number rnd, one boot
    of the Linux comparison); return (ok, records, summary)."""
    scratch = tempfile.mkdtemp(prefix="exobench-")
    env = dict(os.environ)
    penv = suite.COMPARE_ENV if rnd is not None else suite.PLATFORMS[plat]
    env.update(penv)
    env.update({"EXODISK_SCRATCH": scratch, "EXODISK_NO_DEPS": "1"})
    if entry.get("side") == "linux":
        # tools/linux/run.sh FS OPTIONS: the same tools/run-qemu.sh, with
        # Debian's kernel and our lxbench in its initramfs.
        argv = [os.path.join(ROOT, "tools", "linux", "run.sh"), entry["fs"]] + entry["cmd"].split()[3:]
        env.pop("CMD", None)
        env.pop("BOOTARGS", None)
    else:
        argv = [os.path.join(ROOT, "tools", "run-qemu.sh")]
        env.update({"CMD": entry["cmd"], "BOOTARGS": entry["boot"]})
    name = "%s-%s" % (plat, entry["id"]) if rnd is None else "compare-r%d-%s" % (rnd + 1, entry["id"])
    logpath = os.path.join(out, "logs", name + ".log")
    records, status, why = [], None, ""
    start, load0 = time.time(), loadavg()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    timer = threading.Timer(entry["timeout"], os.killpg, (proc.pid, signal.SIGKILL))
    timer.start()
    try:
        with open(logpath, "w") as log:
            for raw in proc.stdout:
                line = raw.decode("utf-8", "replace").replace("\r", "")
                log.write(line)
                m = LINE.search(line)
                if m:
                    try:
                        rec = json.loads(m.group(1))
                    except ValueError:
                        why = why or "a line that is not JSON: " + line.strip()[:120]
                        continue
                    rec["platform"] = plat
                    rec["entry"] = entry["id"]
                    if rnd is not None:
                        rec["group"] = "compare"
                        rec["round"] = rnd
                    records.append(rec)
                elif not quiet and (line.startswith("  run ") or re.match(r"^\w+: ", line)):
                    print("    | " + line.rstrip(), flush=True)
        proc.wait()
    finally:
        timer.cancel()
        shutil.rmtree(scratch, ignore_errors=True)
    status = proc.returncode
    if status == -signal.SIGKILL:
        why = why or "no power-off within %ds" % entry["timeout"]
    elif status != 0:
        why = why or "exit status %d" % status
    with open(logpath) as f:
        if "kernel panic" in f.read().lower():
            why = why or "kernel panic"
    if not why and not any(r.get("bench") == "meta" for r in records):
        why = "no EXOBENCH meta line: the experiment did not start"
    summary = {"platform": plat, "entry": entry["id"], "exp": entry["exp"], "cmd": entry["cmd"],
               "bootargs": entry["boot"], "env": penv, "seconds": round(time.time() - start, 1),
               "load_before": load0, "load_after": loadavg(), "status": status, "records": len(records),
               "ok": not why, "why": why, "log": os.path.relpath(logpath, out)}
    if rnd is not None:
        summary.update({"group": "compare", "round": rnd, "side": entry.get("side", "exodisk")})
    return not why, records, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "results"))
    ap.add_argument("--platforms", default="model,virtio")
    ap.add_argument("--only", default="")
    ap.add_argument("--quiet", action="store_true", help="one line per boot")
    ap.add_argument("--linux", choices=("yes", "no", "only"), default="yes",
                    help="the Linux comparison too, not at all, or alone")
    args = ap.parse_args()

    plats = [p for p in args.platforms.split(",") if p]
    for p in plats:
        if p not in suite.PLATFORMS:
            sys.exit("run.py: unknown platform %s (%s)" % (p, ", ".join(suite.PLATFORMS)))
    entries = suite.entries(args.quick)
    if args.only:
        want = set(args.only.split(","))
        entries = [e for e in entries if e["id"] in want or e["exp"] in want]
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    jobs = [] if args.linux == "only" else [(p, e, None) for p in plats for e in entries]
    rounds = 0
    if args.linux != "no":
        rounds = suite.QUICK_COMPARE_ROUNDS if args.quick else suite.COMPARE_ROUNDS
        jobs += [("virtio", e, r) for r in range(rounds) for e in suite.compare_entries(args.quick)]
    info = {"quick": args.quick, "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "host": host_info(),
            "boots": [], "compare_rounds": rounds}
    print("bench: %d boots (%s; %s%s), results in %s" % (
        len(jobs), ", ".join(plats) if args.linux != "only" else "virtio", "QUICK" if args.quick else "full",
        "; Linux comparison: %d round%s" % (rounds, "s" if rounds != 1 else "") if rounds else "", args.out),
        flush=True)
    all_records, failed, t0 = [], [], time.time()
    for k, (plat, entry, rnd) in enumerate(jobs):
        what = "%s %s" % (plat, entry["id"]) if rnd is None else "compare round %d/%d %s" % (rnd + 1, rounds,
                                                                                           entry["id"])
        print("bench: [%d/%d] %s: %s%s" % (k + 1, len(jobs), what, entry["cmd"],
                                           " (boot: %s)" % entry["boot"] if entry["boot"] else ""), flush=True)
        ok, records, summary = boot(entry, plat, args.out, args.quiet, rnd)
        info["boots"].append(summary)
        all_records.extend(records)
        print("bench: [%d/%d] %s: %s in %.0fs, %d records (%.0fs so far)" % (
            k + 1, len(jobs), what, "ok" if ok else "FAILED: " + summary["why"],
            summary["seconds"], len(records), time.time() - t0), flush=True)
        if not ok:
            failed.append(what)
    info["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    info["seconds"] = round(time.time() - t0, 1)
    with open(os.path.join(args.out, "results.jsonl"), "w") as f:
        for r in all_records:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    with open(os.path.join(args.out, "run.json"), "w") as f:
        json.dump(info, f, indent=1, sort_keys=True)
    print("bench: %d boots, %d failed, %.0fs%s" % (len(jobs), len(failed), time.time() - t0,
                                                    (": " + ", ".join(failed)) if failed else ""), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
