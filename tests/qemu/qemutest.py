"""qemutest.py - one QEMU integration test: the Case description and the
code that boots the guest with CMD and judges the result.

A Case names a shell command line to run in the guest, the exit status QEMU
must end with, regular expressions the output must (or must not) contain, and
optionally a check(output) function for anything more involved (ordering,
numbers).  Each case gets its own scratch directory, exported to the runner as
EXODISK_SCRATCH, so cases that write disk images can run in parallel.  A
case's setup(scratch) may boot the guest on those images first (boot()), to
test what a later boot finds on the disk.  A case whose skip() gives a reason
(the host lacks what it needs: kvm_unusable) is not run and is reported as
skipped, neither passed nor failed.
"""

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
sys.path.insert(0, os.path.join(ROOT, "tools"))
import kvmcheck  # noqa: E402  (tools/kvmcheck.py: also run-qemu.sh's)

BANNER_END = re.compile(r"^exodisk kernel: .*$", re.M)


# run.py may run both architectures' cases in one pool of threads: each
# thread says which one its case boots.
_running = threading.local()


def arch():
    """The architecture the running case boots: the case's own (run.py sets
    it when it loads the cases for an architecture), else $ARCH."""
    return getattr(_running, "arch", None) or os.environ.get("ARCH", "riscv")


def guest_env(**extra):
    """The environment for tools/run-qemu.sh (or anything that boots a guest):
    ours, with ARCH naming the running case's architecture."""
    e = dict(os.environ)
    e["ARCH"] = arch()
    e.update(extra)
    return e


def slot(n):
    """How the boot log names virtio bus slot n (tools/qemu-disks.sh puts
    unit order into slot order): a virtio-mmio address on RISC-V virt, a PCI
    address on x86-64 q35."""
    if arch() == "x86_64":
        return r"pci 00:%02x\.0" % (8 + n)
    return "slot 0x1000%d000" % (n + 1)


def kvm_unusable():
    """Why this host cannot run an x86-64 guest under KVM (tools/run-qemu.sh
    ACCEL=kvm), or None if it can: tools/kvmcheck.py's answer, the one
    run-qemu.sh gets too."""
    return kvmcheck.kvm_unusable()


class Case:
    def __init__(self, name, cmd, status=0, expect=(), reject=(), check=None,
                 timeout=60, env=None, setup=None, argv=None, interact=None,
                 arches=("riscv", "x86_64"), skip=None):
        self.name = name
        self.cmd = cmd
        self.status = status          # expected QEMU exit status
        self.expect = list(expect)    # regexes that must match the output
        self.reject = list(reject)    # regexes that must not match
        self.check = check            # check(output) -> None or an error string
        self.timeout = timeout
        self.env = dict(env or {})    # DISK, DISKS, BOOTARGS, MEM, ...
        self.setup = setup            # setup(scratch_dir) before boot (make disk images, ...)
        self.argv = argv              # what boots the guest, from the top directory
                                      # (default tools/run-qemu.sh; e.g. make qemu ...)
        self.interact = interact      # interact(env) -> (status, raw output, why or ""): a
                                      # session at the console instead of CMD (console.py)
        self.arches = tuple(arches)   # where it runs (run.py --arch picks)
        self.skip = skip              # skip() -> why this host cannot run it, or None
        self.arch = None              # the one this copy boots (run.py sets it)


class Result:
    def __init__(self, case):
        self.case = case
        self.ok = False
        self.skipped = False          # not run: why says what the host lacks
        self.why = ""
        self.output = ""
        self.status = None
        self.seconds = 0.0

    def report(self):
        lines = []
        if self.why:
            lines.append("why: " + self.why)
        lines.append("cmd: " + self.case.cmd)
        lines.append("exit status: %s (expected %d)" % (self.status, self.case.status))
        tail = self.output.splitlines()[-40:]
        lines.append("guest output (last %d lines):" % len(tail))
        lines.extend("  " + l for l in tail)
        return "\n".join(lines)


def guest_output(raw):
    """The console after OpenSBI's banner, with CRs removed."""
    text = raw.replace("\r", "")
    m = BANNER_END.search(text)
    return text[m.start():] if m else text


def boot(cmd, scratch, env=None, timeout=60, kill_on=None):
    """Boot once more on the disk images in scratch (for cases whose setup
    prepares a disk in earlier boots).  Returns (exit status, guest output).
    With kill_on, QEMU is killed as soon as a line of output matches that
    regex - a power failure at that moment - and the status is "killed".
    A boot that does neither within timeout raises, failing the case."""
    e = guest_env()
    e.update(env or {})
    e.update({"CMD": cmd, "EXODISK_NO_DEPS": "1", "EXODISK_SCRATCH": scratch})
    proc = subprocess.Popen([os.path.join(ROOT, "tools", "run-qemu.sh")], cwd=ROOT, env=e,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    timer = threading.Timer(timeout, os.killpg, (proc.pid, signal.SIGKILL))
    timer.start()
    lines, status = [], None
    try:
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace")
            lines.append(line)
            if kill_on and re.search(kill_on, line):
                os.killpg(proc.pid, signal.SIGKILL)
                status = "killed"
                break
        proc.wait()
    finally:
        timer.cancel()
    out = guest_output("".join(lines))
    if status is None:
        if proc.returncode == -signal.SIGKILL:
            raise RuntimeError("boot of %r: no power-off within %ds; output ends:\n%s"
                               % (cmd, timeout, out[-2000:]))
        status = proc.returncode
    return status, out


def run_case(case):
    res = Result(case)
    _running.arch = case.arch
    scratch = tempfile.mkdtemp(prefix="exodisk-test-")
    start = time.time()
    try:
        if case.skip:
            why = case.skip()
            if why:
                res.skipped, res.why = True, why
                return res
        env = guest_env()
        env.update({"CMD": case.cmd, "EXODISK_NO_DEPS": "1", "EXODISK_SCRATCH": scratch})
        env.update(case.env)
        if case.setup:
            case.setup(scratch)
        if case.interact:
            res.status, out, res.why = case.interact(env)
            if res.status == "timeout" and not res.why:
                res.why = "the session did not end within its time limit"
            res.output = guest_output(out)
            if not res.why:
                res.why = judge(case, res)
            res.ok = not res.why
            return res
        argv = case.argv or [os.path.join(ROOT, "tools", "run-qemu.sh")]
        proc = subprocess.Popen(argv, cwd=ROOT, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=case.timeout)
            res.status = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            res.status = "timeout"
            res.why = "no power-off within %ds" % case.timeout
        res.output = guest_output(out.decode("utf-8", "replace"))
        if not res.why:
            res.why = judge(case, res)
        res.ok = not res.why
    except Exception as e:  # a broken test must fail loudly, not pass
        res.why = "test harness error: %r" % (e,)
    finally:
        res.seconds = time.time() - start
        shutil.rmtree(scratch, ignore_errors=True)
        _running.arch = None
    return res


def judge(case, res):
    if res.status != case.status:
        return "exit status %s, expected %d" % (res.status, case.status)
    if "kernel panic" in res.output:
        return "kernel panic"
    for pat in case.expect:
        if not re.search(pat, res.output, re.M):
            return "output lacks /%s/" % pat
    for pat in case.reject:
        if re.search(pat, res.output, re.M):
            return "output has /%s/" % pat
    if case.check:
        err = case.check(res.output)
        if err:
            return err
    return ""
