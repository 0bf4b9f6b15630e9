"""cases_share.py - many processes using one library file system at once
(docs/sharing.md): unixfs (the root), lfs, kvfs, flatfs and fatfs shared by concurrent
programs, checked against a model, with processes killed at random
moments; no EBUSY; a polling reader sees each append within a scheduler
tick.

make test runs a few seeds; `make share-test SEEDS=N` runs N seeds of each
(the case share-many, made only when SHARE_SEEDS is set).
"""
import os

from qemutest import Case

MKFS = "mkfs -t kvfs key=k; mkfs -t flatfs key=k; mount /kv kvfs key=k; mount /fl flatfs key=k; "
MKLFS = "mkfs -t lfs key=l; mount /lf lfs key=l; "
FAT = "mkfs -t fatfs key=f; mount /fa fatfs key=f; "


def model(fs, seeds, workers=4, ops=40, kills=2):
    return "; ".join("fsshare model /%s %d %d %d %d" % (fs, workers, ops, s, kills)
                     for s in seeds)


def all_ok(n):
    def check(out):
        ok = out.count("model ok")
        if ok != n or "WRONG" in out:
            return "%d of %d model checks passed" % (ok, n)
        return None
    return check


CASES = [
    # Workers with their own files and one shared log, two killed per run.
    Case("share-model-kvfs", MKFS + model("kv", [1, 2]), check=all_ok(2), timeout=240),
    Case("share-model-flatfs", MKFS + model("fl", [3, 4]), check=all_ok(2), timeout=240),
    # The shell and a background job on one file system: no EBUSY, no wait.
    Case("share-shell",
         MKFS + "echo one > /kv/one; fsshare model /kv 2 60 9 0 & "
         "cat /kv/one; ls /kv > /fl/listing; echo two >> /fl/listing; wait; "
         "fsck -t kvfs key=k; fsck -t flatfs key=k",
         expect=[r"^one$", r"model ok", r"fsck: .* 0 problems"],
         reject=[r"busy", r"WRONG"], timeout=180),
    # The root unixfs: workers in one directory, two killed per run, and
    # the shell with a background job writing: ls, cat, fsck > /file.
    Case("share-model-unixfs", "mkfs; mkdir /sh; " + model("sh", [1, 2]), check=all_ok(2), timeout=240),
    Case("share-shell-unixfs",
         "mkfs; echo one > /one; mkdir /w; fsshare model /w 2 60 9 0 & "
         "cat /one; ls / > /listing; echo two >> /listing; fsck > /report; wait; "
         "cat /listing; cat /report; fsck",
         expect=[r"^one$", r"model ok", r"^listing$", r"^two$", r"fsck: .* 0 problems"],
         reject=[r"busy", r"WRONG"], timeout=180),
    # fatfs (userfs/fatfs/share.c): the same, on a FAT volume beside the root.
    Case("share-model-fatfs", FAT + model("fa", [1, 2]) + "; fsck -t fatfs key=f",
         check=all_ok(2), timeout=240),
    Case("share-shell-fatfs",
         FAT + "echo one > /fa/one; mkdir /fa/w; fsshare model /fa/w 2 60 9 0 & "
         "cat /fa/one; ls /fa > /fa/listing; echo two >> /fa/listing; "
         "fsck -t fatfs key=f > /fa/report; wait; cat /fa/listing; cat /fa/report; fsck -t fatfs key=f",
         expect=[r"^one$", r"model ok", r"^listing$", r"^two$", r"fsck: .* 0 problems"],
         reject=[r"busy", r"WRONG"], timeout=180),
    Case("share-poll-fatfs", FAT + "fsshare poll /fa 30",
         expect=[r"fsshare poll: 30 appends seen"], timeout=180,
         env={"ICOUNT": "1", "DISK": "ram"}),
    Case("share-poll-unixfs", "mkfs; mkdir /p; fsshare poll /p 30",
         expect=[r"fsshare poll: 30 appends seen"], timeout=180,
         env={"ICOUNT": "1", "DISK": "ram"}),
    # The appender fails (its file is a directory): the poller ends with
    # a clear error.  (It used to poll forever: the directory's 4 KiB
    # never reach 300 appends' 4,800 bytes.)
    Case("share-poll-appender-fails",
         "mkfs; mkdir /p; mkdir /p/polled; echo x > /p/polled/x; fsshare poll /p 300; echo status=$?",
         expect=[r"fsshare append: open /p/polled: ",
                 r"fsshare poll: the appender exited with status 1 after 0 of 300 appends",
                 r"^status=1$"], timeout=90, env={"ICOUNT": "1", "DISK": "ram"}),
    # lfs: the log handed over between processes (userfs/lfs/multi.c).
    Case("share-model-lfs", MKLFS + model("lf", [5, 6]), check=all_ok(2), timeout=240),
    Case("share-shell-lfs",
         MKLFS + "echo one > /lf/one; fsshare model /lf 2 60 9 0 & "
         "cat /lf/one; ls /lf > /lf/listing; echo two >> /lf/listing; "
         "fsck -t lfs key=l > /lf/report; wait; cat /lf/listing; cat /lf/report; fsck -t lfs key=l",
         expect=[r"^one$", r"model ok", r"^listing$", r"^two$", r"fsck: .* 0 problems"],
         reject=[r"busy", r"WRONG"], timeout=180),
    Case("share-poll-lfs", MKLFS + "fsshare poll /lf 30",
         expect=[r"fsshare poll: 30 appends seen"], timeout=180,
         env={"ICOUNT": "1", "DISK": "ram"}),
    # A holder dies with 16 (then 48) writes queued: the kernel hands its
    # lock on (DEAD) only after they have landed, so the next holder reads
    # them all and none lands over what it writes after (kernel/shseg.c,
    # apps/deadhold.c).  On the RZ25 model the writes are still queued when
    # it dies (a virtio disk under QEMU often finishes them first).
    Case("share-dead-holder", "deadhold 16; deadhold",
         expect=[r"deadhold: 16 writes .*: ok$", r"deadhold: 48 writes .*: ok$"],
         reject=[r"WRONG"], timeout=120, env={"DISK": "model"}),
    # A reader polling a flatfs file sees each append within a tick.
    # Counted in instructions, so the host's load cannot stretch it.
    Case("share-poll", MKFS + "fsshare poll /fl 30",
         expect=[r"fsshare poll: 30 appends seen"], timeout=180,
         env={"ICOUNT": "1", "DISK": "ram"}),
]

if os.environ.get("SHARE_SEEDS"):
    n = int(os.environ["SHARE_SEEDS"])
    CASES.append(Case("share-many", "mkfs; " + MKFS + MKLFS + FAT + "mkdir /sh; fsshare model /kv 4 40 100 2 %d; "
                      "fsshare model /fl 4 40 100 2 %d; fsshare model /sh 4 40 100 2 %d; "
                      "fsshare model /lf 4 40 100 2 %d; fsshare model /fa 4 40 100 2 %d"
                      % (n, n, n, n, n), check=all_ok(5 * n), timeout=120 + 150 * n))
