"""cases_fat.py - fatfs in the guest (issue 12): the generic suite, the
shell's programs on a FAT volume, a FAT image made on the host by mkfs.fat
and mcopy going through the guest and back out to fsck.fat and mtools, and
fatfs beside unixfs on one disk with a tree copied from one to the other
and back.

The round trip and side-by-side cases do their guest boots and host checks
in setup (qemutest.boot), where they can look at the disk image between
boots; the case's own boot then checks the volume once more.
"""
import os
import subprocess

from qemutest import Case, ROOT, boot

EXOTOOL = os.path.join(ROOT, "tools", "exotool")
MTOOLS_ENV = dict(os.environ, MTOOLS_SKIP_CHECK="1", LC_ALL="C")


def run(args, **kw):
    p = subprocess.run(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=kw.get("env", MTOOLS_ENV))
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0 and kw.get("check", True):
        raise AssertionError("%s failed (%d):\n%s" % (" ".join(args), p.returncode, out))
    return out


def host_cksums(root):
    """{relative path: (crc, size)} by the host's cksum."""
    sums = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            crc, size, _ = run(["cksum", p]).split(" ", 2)
            sums[os.path.relpath(p, root)] = (crc, size)
    return sums


def guest_cksums(out, prefix):
    """The guest's `cksum -r PREFIX` lines, keyed like host_cksums."""
    sums = {}
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[2].startswith(prefix + "/") and parts[0].isdigit():
            sums[parts[2][len(prefix) + 1:]] = (parts[0], parts[1])
    return sums


def make_tree(root):
    """Files with long names, spaces, several dots, mixed case, empty files,
    a multi-cluster binary and a directory two deep."""
    os.makedirs(os.path.join(root, "docs", "Deeper Directory"))
    with open(os.path.join(root, "docs", "Read Me First.txt"), "w") as f:
        f.write("made on the host by mcopy\n")
    for i in range(1, 25):
        with open(os.path.join(root, "docs", "note number %d.txt" % i), "w") as f:
            f.write("note %d\n" % i * i)
    with open(os.path.join(root, "docs", "Deeper Directory", "archive.tar.gz.part1"), "wb") as f:
        f.write(bytes((i * 7) & 255 for i in range(5000)))
    with open(os.path.join(root, "random.bin"), "wb") as f:
        f.write(os.urandom(300000))
    open(os.path.join(root, "EMPTY.TXT"), "w").close()
    with open(os.path.join(root, "MixedCase.Txt"), "w") as f:
        f.write("case\n")


def mdir_paths(img, path="::/"):
    """Every path mdir -/ -b lists (recursively), without the leading ::/."""
    out = run(["mdir", "-i", img, "-/", "-b", path])
    return {l[3:].rstrip("/") for l in out.splitlines() if l.startswith("::/")}


def roundtrip(scratch):
    tree = os.path.join(scratch, "tree")
    make_tree(tree)
    src = host_cksums(tree)
    fatimg = os.path.join(scratch, "in.img")
    disk = os.path.join(scratch, "disk0.img")
    with open(fatimg, "wb") as f:
        f.truncate(64 << 20)
    run(["mkfs.fat", "-n", "HOSTVOL", fatimg])
    run(["mcopy", "-s", "-i", fatimg] + [os.path.join(tree, n) for n in sorted(os.listdir(tree))]
        + ["::/"])
    before = mdir_paths(fatimg)
    run([EXOTOOL, "format", disk, "-s", "128M"])
    run([EXOTOOL, "fat-import", disk, fatimg, "-o", "key=dos"])
    # The guest reads every file and lists every name, then changes things.
    status, out = boot(
        "mount /dos fatfs key=dos; cksum -r /dos; ls /dos /dos/docs '/dos/docs/Deeper Directory'; "
        "echo written by the guest > '/dos/docs/A New File Written By The Guest.txt'; "
        "mv '/dos/docs/note number 3.txt' '/dos/Moved and Renamed Note.txt'; "
        "rm '/dos/docs/note number 4.txt'; rm /dos/EMPTY.TXT; "
        "mkdir '/dos/New Guest Directory'; "
        "cp /dos/random.bin '/dos/New Guest Directory/copy of random.bin'; "
        "mv /dos/MixedCase.Txt /dos/lower.txt; "
        "fsck -t fatfs key=dos", scratch, timeout=120)
    if status != 0:
        raise AssertionError("guest boot failed (%s):\n%s" % (status, out[-3000:]))
    got = guest_cksums(out, "/dos")
    if got != src:
        raise AssertionError("the guest read other contents:\n host %r\n guest %r" % (src, got))
    for name in ("Read Me First.txt", "note number 24.txt", "Deeper Directory",
                 "archive.tar.gz.part1", "MixedCase.Txt", "EMPTY.TXT"):
        if ("\n%s\n" % name) not in "\n" + out:
            raise AssertionError("the guest did not list %r:\n%s" % (name, out[-3000:]))
    if ": 0 problems" not in out:
        raise AssertionError("fsck -t fatfs in the guest:\n%s" % out[-2000:])
    # Out again: fsck.fat finds nothing, mtools sees what the guest left.
    outimg = os.path.join(scratch, "out.img")
    run([EXOTOOL, "fat-export", disk, outimg, "-o", "key=dos"])
    fsck = run(["fsck.fat", "-n", outimg], check=False)
    if "\n" + outimg + ":" not in "\n" + fsck or fsck.count("\n") > 2:
        raise AssertionError("fsck.fat -n on the exported image:\n%s" % fsck)
    after = mdir_paths(outimg)
    want = (before - {"docs/note number 3.txt", "docs/note number 4.txt", "EMPTY.TXT",
                      "MixedCase.Txt"}) | {
        "docs/A New File Written By The Guest.txt", "Moved and Renamed Note.txt",
        "New Guest Directory", "New Guest Directory/copy of random.bin", "lower.txt"}
    if after != want:
        raise AssertionError("mdir after the guest: missing %r, unexpected %r"
                             % (sorted(want - after), sorted(after - want)))
    text = run(["mtype", "-i", outimg, "::/docs/A New File Written By The Guest.txt"])
    if text != "written by the guest\n":
        raise AssertionError("mtype gives %r" % text)
    copy = os.path.join(scratch, "copy.bin")
    run(["mcopy", "-i", outimg, "::/New Guest Directory/copy of random.bin", copy])
    if open(copy, "rb").read() != open(os.path.join(tree, "random.bin"), "rb").read():
        raise AssertionError("mcopy of the guest's copy differs from the original")
    print("round trip: fsck.fat -n: %s; mdir: %d paths as expected" %
          (fsck.strip().splitlines()[-1], len(after)))


def side_by_side(scratch):
    tree = os.path.join(scratch, "tree")
    make_tree(tree)
    for i in range(40):
        with open(os.path.join(tree, "docs", "Deeper Directory", "part%02d" % i), "wb") as f:
            f.write(bytes((i + j) & 255 for j in range(3000 + 997 * i)))
    disk = os.path.join(scratch, "disk0.img")
    run([EXOTOOL, "format", disk, "-s", "256M"])
    run([EXOTOOL, "ufs-mkfs", disk, "-d", tree])
    status, out = boot(
        "mkfs -t fatfs key=dos,size=2G; mount /dos fatfs key=dos; "
        "cptree /docs '/dos/docs from unixfs'; cptree '/dos/docs from unixfs' /back; "
        "cksum -r /docs; cksum -r '/dos/docs from unixfs'; cksum -r /back; "
        "fsck; fsck -t fatfs key=dos", scratch, timeout=180)
    if status != 0:
        raise AssertionError("guest boot failed (%s):\n%s" % (status, out[-3000:]))
    a, b, c = (guest_cksums(out, p) for p in ("/docs", "/dos/docs from unixfs", "/back"))
    if not a or a != b or a != c:
        raise AssertionError("the copies differ:\n %r\n %r\n %r" % (a, b, c))
    if out.count(": 0 problems") != 2:
        raise AssertionError("a check found problems:\n%s" % out[-2000:])
    # On the host: the exodisk's invariants, then each file system.
    run([EXOTOOL, "check", disk])
    run([EXOTOOL, "ufs-check", disk])
    run([EXOTOOL, "fat-check", disk, "-o", "key=dos"])
    print("side by side: %d files copied there and back, identical" % len(a))


def no_fail(out):
    return "a line says FAIL" if "FAIL" in out else None


CASES = [
    Case("fat-suite", "mkfs -t fatfs; mount /dos fatfs; mkdir /dos/t; fssuite /dos/t; fsck -t fatfs",
         expect=[r"fssuite on /dos/t: 11 passed, 0 failed", r": 0 problems$"], check=no_fail,
         timeout=120),
    Case("fat-shell",
         "mkfs -t fatfs size=64M,fat=16; mount /dos fatfs; echo hello > '/dos/A Long Name.txt'; "
         "cat '/dos/a long name.TXT'; mkdir /dos/Dir; mv '/dos/A Long Name.txt' /dos/Dir/moved; "
         "ls /dos/Dir; cat /dos/Dir/moved; rm /dos/Dir/moved; rmdir /dos/Dir; ls /dos; "
         "mount; df; fsck -t fatfs",
         expect=[r"^hello\nmoved\nhello$", r"^/dos +fatfs", r"/dos +fatfs +\d+", r": 0 problems$"]),
    Case("fat-bad-input",
         "mkfs -t fatfs size=1k; mkfs -t fatfs fat=12,size=1G; mkfs -t fatfs cluster=3000; "
         "mkfs -t fatfs; mkfs -t fatfs; mount /dos fatfs; echo x > '/dos/a:b'; echo st=$?; "
         "mount /dos2 fatfs key=nosuch; ls /dos2; echo done",
         expect=[r"mkfs: Invalid argument", r"mkfs: File exists", r"^st=1$",
                 r"sh: mount /dos2: No such device", r"^done$"]),
    Case("fat-roundtrip", "mount /dos fatfs key=dos; cat '/dos/docs/A New File Written By The Guest.txt'; "
         "fsck -t fatfs key=dos",
         setup=roundtrip, expect=[r"^written by the guest$", r": 0 problems$"], timeout=240),
    Case("fat-side-by-side", "mount /dos fatfs key=dos; fsck; fsck -t fatfs key=dos",
         setup=side_by_side, expect=[r": 0 problems$"],
         check=lambda out: None if out.count(": 0 problems") == 2 else "not both clean",
         timeout=300),
]
