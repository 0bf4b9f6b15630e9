"""cases_fs.py - files in the guest (issue 5): unixfs and kvfs through the
POSIX layer, stdio and the shell's utilities and redirections; the generic
libFS suite; bad input; a full disk; two owners on one disk; persistence
across a reboot; a root disk image made on the host by exotool.

Each case boots with a blank disk of its own (the kernel formats a blank
unit as an exodisk at boot), so most start with `mkfs`.  Cases that need
two boots do the first one in their setup.
"""
import os
import re
import subprocess

from qemutest import Case, ROOT, guest_env

EXOTOOL = os.path.join(ROOT, "tools", "exotool")


def boot(scratch, cmd, **env):
    """One boot with its own command line, in the case's scratch directory."""
    e = guest_env(CMD=cmd, EXODISK_NO_DEPS="1", EXODISK_SCRATCH=scratch, **env)
    p = subprocess.run([os.path.join(ROOT, "tools", "run-qemu.sh")], cwd=ROOT, env=e,
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0:
        raise RuntimeError("first boot failed (%d):\n%s" % (p.returncode, out[-2000:]))
    return out


def first_boot(cmd):
    return lambda scratch: boot(scratch, cmd)


def host_image(scratch):
    """A disk made on the host: exodisk, then unixfs filled from a directory."""
    tree = os.path.join(scratch, "tree")
    os.makedirs(os.path.join(tree, "docs"))
    with open(os.path.join(tree, "docs", "from-host.txt"), "w") as f:
        f.write("made on the host\n")
    with open(os.path.join(tree, "big"), "wb") as f:
        f.write(bytes(range(256)) * 4000)
    img = os.path.join(scratch, "disk0.img")
    for args in (["format", img, "-s", "64M"], ["ufs-mkfs", img, "-d", tree]):
        subprocess.run([EXOTOOL] + args, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def no_fail(out):
    return "a line says FAIL" if "FAIL" in out else None


CASES = [
    Case("fs-utilities-and-redirection",
         "mkfs; echo hello > /a; cat /a; echo more >> /a; cat < /a; mkdir /d; cp /a /d/b; "
         "mv /d/b /d/c; ls /d; stat /d/c; rm /a; ls /; cat /a; echo st=$?; rmdir /d; echo st=$?; "
         "rm -r /d; ls /; df; fsck",
         expect=[r"^hello\nhello\nmore$", r"^c$", r"size: 11 bytes",
                 r"cat: /a: No such file or directory", r"^st=1$",
                 r"rmdir: /d: Directory not empty", r"^/ +unixfs ", r": 0 problems$"]),
    Case("fs-stderr-redirection",
         "mkfs; cat /nope 2> /err; echo st=$?; cat /err; hexdump /err",
         expect=[r"^st=1$", r"^cat: /nope: No such file or directory$", r"\|cat: /nope: No s\|"]),
    Case("fs-posix-layer", "mkfs; fstest posix /; mkdir /deep; fstest posix /deep",
         expect=[r"^fstest: 0 failures$"], check=no_fail),
    Case("fs-stdio", "mkfs; fstest stdio /; fstest noclose /nc; cat /nc",
         expect=[r"^fstest: 0 failures$", r"^written without fclose$"], check=no_fail),
    Case("fs-suite-unixfs", "mkfs; mkdir /t; fssuite /t",
         expect=[r"fssuite on /t: 11 passed, 0 failed"], check=no_fail, timeout=120),
    Case("fs-two-mounts",
         "mkfs; mkfs -t kvfs key=k; mount /kv kvfs key=k; mount; echo x > /f; "
         "fstest exdev /f /kv/f; mv /f /kv/f; cat /kv/f; ls /; ls /kv",
         expect=[r"^/kv +kvfs +key=k$", r"ok: rename across mounts: EXDEV", r"^x\nbin\ndev\nkv\nf$"],
         check=no_fail),
    Case("fs-bad-input",
         "mkfs; mkdir /x; mkdir /x; rmdir /; cat /x; rm /x; ls /nosuch; echo a > /nosuch/b; "
         "cat < /nosuch; mkfs; echo done",
         expect=[r"mkdir: /x: File exists", r"rmdir: /: Device or resource busy",
                 r"cat: /x: Is a directory", r"rm: /x: is a directory",
                 r"ls: /nosuch: No such file or directory",
                 r"sh: /nosuch/b: No such file or directory", r"sh: /nosuch: No such file",
                 r"mkfs: File exists", r"^done$"]),
    Case("fs-full-disk", "mkfs; fstest fill /; fsck",
         env={"DISK_SIZE": "16M"},
         expect=[r"ok: a full disk is ENOSPC", r"^fstest: 0 failures$", r": 0 problems$"],
         check=no_fail),
    # Holes (issue 17.5): a 1 GiB sparse file on a 64 MiB disk takes a
    # block, reads as zeros, and fsck counts its hole; cutting it back.
    Case("fs-sparse-file",
         "mkfs > /dev/null; truncate -s 1G /sparse; echo end >> /sparse; ls -l /sparse; "
         "stat /sparse; du /sparse; df /; head -c 4096 /sparse > /z; cksum /z; rm /z; fsck; "
         "truncate -s 100M /sparse; truncate -s +4K /sparse; ls -l /sparse; du /sparse; fsck",
         env={"DISK_SIZE": "64M"},
         expect=[r" 1073741828 .* sparse\n", r"sectors: \d{1,2} \(on disk", r"^\d\t/sparse$",
                 r"^/ +unixfs +65536 +\d{1,4} ", r"^3018728591 4096 /z$",
                 r"1 sparse \(1073741824 bytes of holes\): 0 problems$",
                 r" 104861696 .* sparse\n1\t/sparse$", r"1 sparse \(104861696 bytes of holes\): 0 problems$"]),
    # cp keeps holes (issue 17): a 48 MiB file holding three short lines
    # copies onto a 32 MiB disk (a copy of its zeros would not fit), the
    # copy as sparse as the original and identical to it, one ending in a
    # hole (cp ftruncates it to its size) and one ending in data.
    Case("fs-cp-sparse",
         "mkfs > /dev/null; echo head > /s; truncate -s 24M /s; echo middle >> /s; truncate -s 48M /s; "
         "echo tail >> /s; cp /s /c; truncate -s 40M /e; cp /e /f; mv /f /g; ls -l /s /c /g; du /s /c /g; "
         "cksum /s /c; fsck",
         env={"DISK_SIZE": "32M"},
         expect=[r" 50331653 .* c\n", r" 41943040 .* g\n", r"^\d{1,2}\t/s\n\d{1,2}\t/c\n\d\t/g$",
                 r": 0 problems$"],
         reject=[r"No space", r"cp:", r"mv:"],
         check=lambda out: None if len(set(re.findall(r"^(\d+ 50331653) /[sc]$", out, re.M))) == 1
         and len(re.findall(r"^\d+ 50331653 /[sc]$", out, re.M)) == 2 else "the copy's cksum differs"),
    Case("fs-survives-reboot", "cat /p; cat /dir/q; ls -l /dir; fsck",
         setup=first_boot("mkfs; echo persistent > /p; mkdir /dir; cp /p /dir/q"),
         expect=[r"^persistent\npersistent$", r"q$", r": 0 problems$"]),
    Case("fs-df-file-count", "df /; rm /a/b; df /; fsck",
         setup=first_boot("mkfs; mkdir /a; echo x > /a/b; edscale -n 2000 -d 100 -c 1000"),
         expect=[r"^/ +unixfs +\d+ +\d+ +\d+ +\d+% +2023$", r"^/ +unixfs +\d+ +\d+ +\d+ +\d+% +2022$",
                 r"2000 files, 22 directories.*: 0 problems$"]),
    Case("fs-two-owners",
         "capdemo make alice; capdemo make bob; capdemo write alice 5 & capdemo write bob 5; "
         "wait; capdemo attack alice; capdemo attack bob; capdemo check alice 5; "
         "capdemo check bob 5",
         expect=[r"capdemo: alice: 5 files checked, 0 bad", r"capdemo: bob: 5 files checked, 0 bad",
                 r"capdemo: \d+ foreign exonodes, \d+ attempts: \d+ refused, 0 allowed"],
         reject=[r"[1-9]\d* allowed", r"[1-9]\d* bad"]),
    Case("fs-two-owners-after-reboot", "capdemo check alice 3; capdemo check bob 3; capdemo attack bob",
         setup=first_boot("capdemo make alice; capdemo make bob; capdemo write bob 3 & "
                          "capdemo write alice 3; wait"),
         expect=[r"alice: 3 files checked, 0 bad", r"bob: 3 files checked, 0 bad", r" 0 allowed"],
         reject=[r"[1-9]\d* allowed"]),
    Case("fs-host-made-image", "cat /docs/from-host.txt; ls -l /; fsck; echo guest >> /docs/from-host.txt; "
         "cat /docs/from-host.txt",
         setup=host_image,
         expect=[r"^made on the host$", r"1024000 \S+ \S+ back +\d+ big", r": 0 problems$",
                 r"^made on the host\nguest$"]),
    Case("fs-one-process-at-a-time", "mkfs; echo x > /f; cat /f & cat /f & cat /f; wait; echo done",
         expect=[r"^done$"], reject=[r"busy"],
         check=lambda out: None if out.splitlines().count("x") == 3 else "not three x lines"),
    # lfs beside unixfs on one disk; its cleaner on demand, then the files
    # it moved still read back, and both file systems check clean.
    Case("lfs-clean-beside-unixfs",
         "mkfs; mkfs -t lfs key=k,seg=64; mount /t lfs key=k; echo 0123456789abcdefghijklmnopqrstu > /x; "
         "cat /x /x /x /x /x /x /x /x > /y; cat /y /y /y /y /y /y /y /y > /x; "
         "cat /x /x /x /x /x /x /x /x > /y; cat /y /y /y /y > /z; "
         "cp /y /t/a; cp /z /t/b; cp /y /t/c; cp /z /t/d; rm /t/b; echo more >> /t/a; "
         "lfsclean key=k; cksum /t/c /y /t/d /z /t/a; fsck -t lfs key=k; fsck",
         expect=[r"^lfsclean: after: ", r"segments of 64 KiB.*: 0 problems$", r"map nodes: 0 problems$"],
         check=lambda out: None if len({l.split()[0] for l in out.splitlines()
                                        if l.endswith(("/t/c", "/y"))}) == 1 and
                                   len({l.split()[0] for l in out.splitlines()
                                        if l.endswith(("/t/d", "/z"))}) == 1 else "cksums differ"),
    # One lfs file lent through proxy exonodes: a reader without the key or
    # a mount reads it, then reads it again after the owner appended to it;
    # when the owner has exited, the share is gone.
    Case("lfs-share-proxies",
         "mkfs; mkfs -t lfs key=k; mount /t lfs key=k; echo shared through proxies > /t/f; "
         "lfs-share -o /tok -t 3000 -a followed key=k f & lfs-share -r /tok; lfs-share -r /tok -g 2; "
         "wait; lfs-share -r /tok; true",
         expect=[r"lfs-share: 23 bytes, generation 1\nshared through proxies$",
                 r"lfs-share: 31 bytes, generation 2\nshared through proxies\nfollowed",
                 r"^lfs-share: the share is gone"]),
]


def libfs_types():
    """The libFS types named in LIBFS_TYPES in userfs/userfs.mk: the one place a
    new library file system is named, so it gets these cases too."""
    with open(os.path.join(ROOT, "userfs", "userfs.mk")) as f:
        for line in f:
            m = re.match(r"\s*LIBFS_TYPES\s*:?=\s*(.*)$", line)
            if m:
                return m.group(1).split()
    raise RuntimeError("userfs/userfs.mk names no LIBFS_TYPES")


# Every libFS: the generic suite (adapted to what it states it supports; a
# SKIP names the reason), and a file written in one boot read back and
# checked in the next.
for _t in libfs_types():
    CASES.append(Case("libfs-suite-" + _t,
                      "mkfs -t %s key=k; mount /t %s key=k; fssuite /t" % (_t, _t),
                      expect=[r"^fssuite on /t: \d+ passed, 0 failed$"], check=no_fail,
                      timeout=120))
    CASES.append(Case("libfs-reboot-" + _t,
                      "mount /t %s key=k; cat /t/p; ls /t; fsck -t %s key=k" % (_t, _t),
                      setup=first_boot("mkfs -t %s key=k; mount /t %s key=k; "
                                       "echo persistent > /t/p; echo gone > /t/q; rm /t/q" % (_t, _t)),
                      expect=[r"^persistent\np$", r": 0 problems$"]))

