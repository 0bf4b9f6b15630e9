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
"""

RUNS = 5
QUICK_RUNS = 2

PLATFORMS = {
    # name: environment for tools/run-qemu.sh
    "model": {"DISK": "model"},
    "virtio": {"DISK": "virtio", "DISK_SIZE": "512M"},
}


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
