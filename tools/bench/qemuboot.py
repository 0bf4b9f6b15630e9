"""qemuboot.py - one guest boot for the experiments that run their own
(lfsclean.py, scale.py, manyfiles.py): tools/run-qemu.sh with a command,
on a scratch disk, the console to a log, a time limit; and the EXOBENCH
records read back from the log.

    from qemuboot import ROOT, scratch, boot, records
    with scratch() as d:                      # a new directory, removed after
        status = boot("mkfs; edscale -n 100", log, d, env={"DISK_SIZE": "1T"},
                      bootargs="rawio=1", timeout=900)
    recs = records(log)                       # every EXOBENCH {...} line
    boot(None, log, d, linux=["ext4", "-F", "1000"])   # Linux's side (tools/linux/run.sh)

Every boot gets EXODISK_NO_DEPS=1 (the experiment runs after `make`, which
checked the dependencies; tools/deps.sh would otherwise run once a boot),
no terminal on stdin, and its own process group, so that a boot past its
time limit is stopped with its QEMU, not only the shell script in front of
it.  A boot that times out raises subprocess.TimeoutExpired.
"""
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINE = re.compile(r"EXOBENCH (\{.*\})")


@contextlib.contextmanager
def scratch(prefix="exodisk-", where=None):
    """A new scratch directory for the disk images (EXODISK_SCRATCH) of one
    or more boots (`where`: put it there, e.g. /dev/shm); removed after."""
    d = tempfile.mkdtemp(prefix=prefix, dir=where)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def boot(cmd, log, scratch_dir, env=None, bootargs="", timeout=3600, linux=None):
    """Boot once running `cmd`, console to the file `log`; the exit status
    of tools/run-qemu.sh (the status of the guest's last command).  With
    linux=[FS, OPTION...] the boot is Linux's instead (tools/linux/run.sh
    FS OPTION..., the same machine and disk; cmd and bootargs unused), and
    the status is lxbench's."""
    e = dict(os.environ)
    e.update(env or {})
    e.update({"EXODISK_SCRATCH": scratch_dir, "EXODISK_NO_DEPS": "1"})
    if linux is None:
        e.update({"CMD": cmd, "BOOTARGS": bootargs})
        argv = [os.path.join(ROOT, "tools", "run-qemu.sh")]
    else:
        argv = [os.path.join(ROOT, "tools", "linux", "run.sh")] + [str(x) for x in linux]
    with open(log, "w") as f:
        p = subprocess.Popen(argv, cwd=ROOT, env=e,
                             stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            return p.wait(timeout=timeout)
        except BaseException:
            # Past the limit (or interrupted): the script and its QEMU go.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise


def records(log):
    """The EXOBENCH records of a console log, in order (lines that do not
    parse are skipped: a record cut off by the end of a run)."""
    out = []
    with open(log, errors="replace") as f:
        for line in f:
            m = LINE.search(line.replace("\r", ""))
            if not m:
                continue
            try:
                out.append(json.loads(m.group(1)))
            except ValueError:
                continue
    return out
