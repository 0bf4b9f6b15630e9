"""suite.py - what `make bench` runs: every experiment of thesis chapter 5
and Appendix A, as guest commands (apps/exobench), each in a boot of its
own on a fresh disk, on each platform.

An entry names the experiment (the exobench subcommand), the command
line for a full run and for a QUICK=1 run, and the kernel boot options it
needs:

  rawio=1       the benchmark-only raw path (the Raw rows' baseline; in
                every boot, so that exobench can also count the disk
                requests each phase makes)
  edbind=N      10,000 one-kilobyte extents need more bindings than the
                default table holds (docs/exodisk.md, section 11); so do
                10,000 unixfs files in 100 directories (ENOSPC at file
                8,194 of a 512 MiB disk with the default 8,286)
  edcache=467   both interleaving applications' exonode blocks fit in the
                exodisk cache, as the thesis's did (apps/exobench/interleave.c)

Quick runs are scaled down to finish in a few minutes; they exercise every
experiment and every table cell, with fewer files, smaller files and two
runs.  `timeout` is seconds of host time for one boot.

The Linux comparison (docs/linux-baseline.md) is a group of its own: in
each round, one boot per library file system of ours (LIBFS), one for the
exodisk's exonode and raw paths on small files and one on the large file,
then one boot of Debian's Linux per file system in LINUX_FS; the rounds
repeat, so that the host's noise falls on both sides alike, and the report
takes medians over the rounds.  Both sides boot through tools/run-qemu.sh
with COMPARE_ENV: the same machine, memory, disk image size and disk
options.  Every phase starts cold on both sides (exodisk: remount and
ED_OP_DROP_CACHE; Linux: sync and drop_caches).
"""

RUNS = 5
QUICK_RUNS = 2

PLATFORMS = {
    # name: environment for tools/run-qemu.sh
    "model": {"ARCH": "riscv", "DISK": "model"},
    "virtio": {"ARCH": "riscv", "DISK": "virtio", "DISK_SIZE": "512M"},
    # The same on QEMU's PC (`make bench ARCH=x86_64`): same disks, same
    # programs, the x86-64 kernel and C library.
    "x86_64-model": {"ARCH": "x86_64", "DISK": "model"},
    "x86_64-virtio": {"ARCH": "x86_64", "DISK": "virtio", "DISK_SIZE": "512M"},
}
# What `make bench` runs on each ARCH= (tools/bench/bench.mk).
ARCH_PLATFORMS = {"riscv": "model,virtio", "x86_64": "x86_64-model,x86_64-virtio"}


def entries(quick):
    r = QUICK_RUNS if quick else RUNS
    if quick:
        return [
            dict(id="smallfile-10k", exp="smallfile", boot="rawio=1 edbind=10240",
                 cmd="exobench smallfile -r %d -n 60 -s 10240" % r, timeout=300),
            dict(id="smallfile-1k", exp="smallfile", boot="rawio=1 edbind=10240",
                 cmd="exobench smallfile -r %d -n 120 -s 1024" % r, timeout=300),
            dict(id="largefile", exp="largefile", boot="rawio=1",
                 cmd="exobench largefile -r %d -m 4 -k 200" % r, timeout=300),
            dict(id="unixfs-10k", exp="unixfs", boot="rawio=1 edbind=20480",
                 cmd="exobench unixfs -r %d -x small -n 60 -s 10240 -d 10" % r, timeout=300),
            dict(id="unixfs-1k", exp="unixfs", boot="rawio=1 edbind=20480",
                 cmd="exobench unixfs -r %d -x small -n 120 -s 1024 -d 10" % r, timeout=300),
            dict(id="unixfs-large", exp="unixfs", boot="rawio=1 edbind=20480",
                 cmd="exobench unixfs -r %d -x large -m 4 -k 200" % r, timeout=300),
            dict(id="interleave", exp="interleave", boot="rawio=1 edcache=467",
                 cmd="exobench interleave -r %d -n 60" % r, timeout=300),
            dict(id="insert", exp="insert", boot="rawio=1",
                 cmd="exobench insert -r %d -s 10240:5,102400:3,1024000:1" % r, timeout=300),
            dict(id="ddio", exp="ddio", boot="rawio=1",
                 cmd="exobench ddio -r %d -t 256 -m 16" % r, timeout=300),
            dict(id="persist", exp="persist", boot="rawio=1",
                 cmd="exobench persist -r %d -n 60" % r, timeout=300),
        ]
    return [
        dict(id="smallfile", exp="smallfile", boot="rawio=1 edbind=10240",
             cmd="exobench smallfile -r %d" % r, timeout=4 * 3600),
        dict(id="largefile", exp="largefile", boot="rawio=1",
             cmd="exobench largefile -r %d" % r, timeout=4 * 3600),
        dict(id="unixfs", exp="unixfs", boot="rawio=1 edbind=20480",
             cmd="exobench unixfs -r %d" % r, timeout=6 * 3600),
        dict(id="interleave", exp="interleave", boot="rawio=1 edcache=467",
             cmd="exobench interleave -r %d" % r, timeout=4 * 3600),
        dict(id="insert", exp="insert", boot="rawio=1",
             cmd="exobench insert -r %d" % r, timeout=4 * 3600),
        dict(id="ddio", exp="ddio", boot="rawio=1",
             cmd="exobench ddio -r %d" % r, timeout=4 * 3600),
        dict(id="persist", exp="persist", boot="rawio=1",
             cmd="exobench persist -r %d" % r, timeout=4 * 3600),
    ]


# ---- the Linux comparison ---------------------------------------------------

# Our library file systems, by the name `exobench fs -t` takes (any type
# userfs/userfs.mk builds in whose operations include directories); the
# report shows every one beside every Linux file system.
LIBFS = ["unixfs", "fatfs", "lfs"]
# Linux's side: the file systems, and the raw device ("raw").
LINUX_FS = ["ext4", "ext2", "vfat", "f2fs", "nilfs2", "raw"]
COMPARE_ROUNDS = 3
QUICK_COMPARE_ROUNDS = 1
# Both sides: tools/run-qemu.sh's MEM (its default, as every boot of the
# suite above), tools/qemu-disks.sh's virtio disk and image size.
COMPARE_ENV = {"ARCH": "riscv", "DISK": "virtio", "DISK_SIZE": "512M", "MEM": "1G"}


def compare_sizes(quick):
    """The options of the workload (apps/exobench/fswork.h) both sides run."""
    if quick:
        return "-r 1 -n 60,120 -s 10240,1024 -d 10 -m 4 -k 200"
    return "-r 1"


def compare_entries(quick):
    """One round's boots, ours first."""
    w = compare_sizes(quick)
    small = "-n 60,120 -s 10240,1024" if quick else ""
    large = "-m 4 -k 200" if quick else ""
    t = 300 if quick else 3600
    out = [dict(id="ours-" + fs, exp="fs", side="exodisk", boot="rawio=1 edbind=20480",
                cmd="exobench fs -t %s %s" % (fs, w), timeout=t) for fs in LIBFS]
    out.append(dict(id="ours-smallfile", exp="smallfile", side="exodisk", boot="rawio=1 edbind=20480",
                    cmd=" ".join(("exobench smallfile -r 1 -c -o raw,exonode " + small).split()), timeout=t))
    out.append(dict(id="ours-largefile", exp="largefile", side="exodisk", boot="rawio=1",
                    cmd=" ".join(("exobench largefile -r 1 -c -o raw,exonode " + large).split()), timeout=t))
    out += [dict(id="linux-" + fs, exp="linux", side="linux", fs=fs, boot="", cmd="lxbench -t %s %s" % (fs, w),
                 timeout=t) for fs in LINUX_FS]
    return out
