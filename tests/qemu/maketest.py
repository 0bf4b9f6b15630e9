"""maketest.py - what `make test` leaves out of the QEMU suite, per
architecture, to stay inside the test budget (the whole of `make test` well
under 20 minutes on CI's two cores).  `make test` runs every case on RISC-V
and on x86-64 in one pool of QEMUs (run.py --arch both --make-test), longest
first, except these; `make qemu-test [ARCH=x86_64]` runs all of them.

What is left out on x86-64 is the longest cases of portable code whose
port-specific part other cases already show there:
  - the power cuts of the libFSes and of the layers stacked on them
    (tools/powercut/crashtest.py; every powercut-* case but
    powercut-exodisk, so one added later is left out too): what is the PC's
    own in a power cut is virtio-pci's write cache, flushes and FUA, which
    powercut-exodisk exercises, beside exodisk-persist-power-failure and
    scsi-power-failure; the libFSes above it are the same code as on RISC-V;
  - exodisk-disk-full: the exodisk's out-of-space path, filling a disk
    (the exodisk tests on virtio-pci and virtio-scsi run on x86-64);
  - fat-side-by-side: the host's dosfstools and fatfs checking one image
    (fat-roundtrip and the FAT suites run on x86-64).
Together they were a third of x86-64's QEMU time when this list was made.

run.py refuses a name in NAMED that no case of that architecture has, so a
renamed case is noticed.
"""

# Per architecture, what is left out: the cases named, and every case whose
# name starts with `prefix` except those `kept`.  Each name here must be a
# case of that architecture (run.py checks NAMED).
LEFT_OUT = {
    "x86_64": {"names": ("exodisk-disk-full", "fat-side-by-side"),
               "prefix": "powercut-", "kept": ("powercut-exodisk",)},
}

NAMED = {arch: [] for arch in ("riscv", "x86_64")}
for _arch, _t in LEFT_OUT.items():
    NAMED[_arch] = list(_t["names"]) + list(_t["kept"])


def left_out(arch, name):
    """Does `make test` leave case `name` out on `arch`?"""
    t = LEFT_OUT.get(arch)
    if t is None:
        return False
    if name.startswith(t["prefix"]):
        return name not in t["kept"]
    return name in t["names"]
