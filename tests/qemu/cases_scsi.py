"""cases_scsi.py - SCSI disks behind virtio-scsi (issue 16): the drivers'
checks (disktest) on SCSI LUNs and beside virtio-blk disks, the exodisk and
the library file systems on SCSI unchanged, durability across a power
failure, and the sense conditions a real disk answers with, injected by
QEMU's blkdebug driver under the image (QEMU's scsi-hd turns EIO into
ABORTED COMMAND, ENODATA into MEDIUM ERROR, ENOMEDIUM into NOT READY).
The SCSI layer's policy itself is tested condition by condition on the
host (tests/host/drivers/test_scsi.c).
"""
import os

from qemutest import Case, boot, slot

SCSI = {"DISK": "scsi"}
DISKTEST_OK = [r"^disktest: ok: \d+ checks"]
NO_FAIL = [r"FAIL", r"kernel panic"]


def with_blkdebug(name, cmd, rules, expect, status=0, reject=NO_FAIL):
    """A case whose unit 0 (a SCSI disk) fails as the rules say: the setup
    writes the blkdebug file into the case's scratch directory, where
    BLKDEBUG's relative name finds it."""
    case = Case(name, cmd, status=status, env=dict(SCSI, BOOTARGS="rawio=1", BLKDEBUG="0:blkdebug.cfg"),
                timeout=90, expect=expect, reject=reject)

    def setup(scratch):
        path = os.path.join(scratch, "blkdebug.cfg")
        with open(path, "w") as f:
            for event, errno, sector, once in rules:
                f.write('[inject-error]\nevent = "%s"\nerrno = "%d"\nsector = "%d"\nonce = "%s"\n\n'
                        % (event, errno, sector, "on" if once else "off"))
    case.setup = setup
    return case


# rawbench's sequential reads start a quarter into the disk: 512 MiB -> sector 262144.
SECTOR = 262144 + 80
ENODATA, ENOMEDIUM, EIO = 61, 123, 5

CASES = [
    Case("scsi-disktest", "disktest", env=dict(SCSI, DISKS="2", BOOTARGS="rawio=1"), timeout=120,
         expect=DISKTEST_OK + [r"^disk 0: virtio-scsi, 1048576 sectors .*target 0 lun 0, QEMU QEMU HARDDISK",
                               r"^disk 1: virtio-scsi, .*target 0 lun 1, .*write cache, FUA",
                               r"unit 1: write, flush, write completed in order",
                               r"the device held up to (6[4-9]|[7-9]\d|1\d\d) at once"],
         reject=NO_FAIL),
    Case("scsi-disktest-polled", "disktest", env=dict(SCSI, BOOTARGS="rawio=1 polled=1"), timeout=120,
         expect=DISKTEST_OK + [r"completion by polling", r"unit 0: virtio-scsi, \d+ sectors, polled"],
         reject=NO_FAIL),
    # SCSI LUNs beside virtio-blk disks: units in bus slot order, LUNs in order.
    Case("scsi-mixed-units", "disktest", env={"DISKS": "virtio,scsi,scsi,virtio", "BOOTARGS": "rawio=1"},
         timeout=150,
         expect=DISKTEST_OK + [r"^disk 0: virtio-blk, .*" + slot(0),
                               r"^disk 1: virtio-scsi, .*target 0 lun 0, .*" + slot(1),
                               r"^disk 2: virtio-scsi, .*target 0 lun 1, .*" + slot(1),
                               r"^disk 3: virtio-blk, .*" + slot(2),
                               r"pass 1: \d+ regions .* of 4 units"],
         reject=NO_FAIL),
    # The exodisk and the libFSes, unchanged, on SCSI.
    Case("scsi-edtest", "edtest", env=SCSI, timeout=150, expect=[r"^edtest: ok$"], reject=NO_FAIL),
    Case("scsi-fs-suites", "mkfs; mkdir /t; fssuite /t; mkfs -t kvfs key=k; mount /kv kvfs key=k; "
         "fssuite /kv; fsck", env=SCSI, timeout=150,
         expect=[r"fssuite on /t: \d+ passed, 0 failed", r"fssuite on /kv: \d+ passed, 0 failed",
                 r": 0 problems$"], reject=NO_FAIL),
    Case("scsi-power-failure", "edtest persist-check", env=SCSI, timeout=90,
         setup=lambda scratch: _first_boot(scratch, "edtest persist-write crash", r"EDTEST-CRASH-NOW"),
         expect=[r"^exodisk: unit 0 mounted.*replayed [1-9]\d* log records",
                 r"^persist-check: \d+ checks, 0 failed"], reject=NO_FAIL),
    # Sense conditions from a "real" disk.
    with_blkdebug("scsi-aborted-once-retried", "rawbench seq read 4096 1 200",
                  [("read_aio", EIO, SECTOR, True)],
                  [r"READ\(16\) at block %d: ABORTED COMMAND, I/O process terminated \(00/06\): "
                   r"retrying \(attempt 1 failed\)" % SECTOR, r"^RESULT dev=virtio-scsi test=seq-read"]),
    with_blkdebug("scsi-aborted-gives-up", "rawbench seq read 4096 1 200; echo st=$?",
                  [("read_aio", EIO, SECTOR, False)],
                  [r"ABORTED COMMAND, .*: failed after 5 attempts \(error -69\)",
                   r"rawbench: request failed: disk I/O error", r"^st=1$"]),
    with_blkdebug("scsi-medium-error", "rawbench seq read 4096 1 200; echo st=$?",
                  [("read_aio", ENODATA, SECTOR, False)],
                  [r"READ\(16\) at block %d: MEDIUM ERROR, unrecovered read error \(11/00\): "
                   r"failed after 1 attempt \(error -77\)" % SECTOR,
                   r"rawbench: request failed: medium error", r"^st=1$"],
                  reject=[r"kernel panic", r"retrying"]),
    with_blkdebug("scsi-no-medium", "rawbench seq read 4096 1 200; echo st=$?",
                  [("read_aio", ENOMEDIUM, SECTOR, False)],
                  [r"NOT READY, medium not present \(3a/00\): failed", r"rawbench: request failed: disk not ready",
                   r"^st=1$"]),
]


def _first_boot(scratch, cmd, kill_on):
    status, out = boot(cmd, scratch, env=SCSI, kill_on=kill_on)
    if status != "killed":
        raise RuntimeError("first boot ended with %s instead of being killed:\n%s" % (status, out[-3000:]))
