#!/usr/bin/env python3
"""initramfs.py - the Linux guest's initramfs for the comparison
(docs/linux-baseline.md): busybox, lxbench, tools/linux/init as /init, and
the kernel modules each file system needs, with the order to load them.

    initramfs.py --manifest LINUX_CACHE/manifest.txt --lxbench PROG --init SCRIPT --out FILE

The manifest (written by `tools/deps.sh linux`) says where Debian's kernel
modules and busybox were unpacked.  Debian's kernel package ships no
modules.dep (depmod makes it at install time), so the dependencies come
from each module's own .modinfo section: "depends=" (modules it needs
loaded first) and "softdep=pre:" (modules it asks for by name at run time,
such as the crc32c checksum ext4 and jbd2 use).  Modules built into the
kernel (modules.builtin) are skipped.  For each file system the order is
written to /etc/modules/FS, one path per line, dependencies first; /init
loads them with insmod.  Modules are stored decompressed.

The archive is a "newc" cpio written here (no cpio or xz needed on the
host), with fixed owners and times, so the same inputs give the same bytes.
Standard library only.
"""
import argparse
import lzma
import os
import struct
import sys

# What each file system needs besides what its module depends on: virtio
# for the disk; vfat's code page and character sets (the kernel's defaults:
# CONFIG_FAT_DEFAULT_CODEPAGE=437, IOCHARSET=ascii, UTF8=y).
COMMON = ["virtio_mmio", "virtio_blk"]
FS_MODULES = {
    "ext4": ["ext4"],
    "ext2": ["ext4"],        # CONFIG_EXT4_USE_FOR_EXT2=y: ext4 serves ext2
    "vfat": ["nls_cp437", "nls_ascii", "nls_utf8", "vfat"],
    "f2fs": ["f2fs"],
    "nilfs2": ["nilfs2"],
    "raw": [],
}


def norm(name):
    return name.replace("-", "_")


def module_name(path):
    base = os.path.basename(path)
    return norm(base[:base.index(".ko")])


def read_module(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".xz"):
        data = lzma.decompress(data)
    elif not path.endswith(".ko"):
        sys.exit("initramfs.py: %s: compression not handled" % path)
    return data


def modinfo(data):
    """The key=value strings of an ELF64 module's .modinfo section."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    def section(i):
        name, _, _, _, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        return name, off, size
    _, stroff, _ = section(shstrndx)
    for i in range(shnum):
        name, off, size = section(i)
        end = data.index(b"\0", stroff + name)
        if data[stroff + name:end] == b".modinfo":
            out = {}
            for item in data[off:off + size].split(b"\0"):
                if b"=" in item:
                    k, v = item.decode("utf-8", "replace").split("=", 1)
                    out.setdefault(k, []).append(v)
            return out
    return {}


class Modules:
    def __init__(self, root):
        self.root = root
        self.paths = {}
        for d, _, files in os.walk(os.path.join(root, "kernel")):
            for f in files:
                if ".ko" in f:
                    p = os.path.join(d, f)
                    self.paths[module_name(p)] = os.path.relpath(p, root)
        self.builtin = set()
        with open(os.path.join(root, "modules.builtin")) as f:
            for line in f:
                if line.strip():
                    self.builtin.add(module_name(line.strip()))
        self.info, self.data = {}, {}

    def find(self, name, soft=False):
        """The module called name.  A soft dependency usually names a
        crypto algorithm ("crypto-crc32c", "crc32"), which the module
        NAME_generic implements; a library of the same name built into the
        kernel (lib/crc32) does not register the algorithm."""
        name = norm(name)
        cands = [name]
        if soft:
            if name.startswith("crypto_"):
                name = name[len("crypto_"):]
            cands = [name + "_generic", name]
        for cand in cands:
            if cand in self.paths or cand in self.builtin:
                return cand
        return None

    def load(self, name):
        if name not in self.data:
            self.data[name] = read_module(os.path.join(self.root, self.paths[name]))
            self.info[name] = modinfo(self.data[name])
        return self.info[name]

    def order(self, wanted):
        """Every module wanted needs, dependencies first."""
        out, seen = [], set()

        def visit(name, why, soft=False):
            m = self.find(name, soft)
            if m is None:
                sys.exit("initramfs.py: module %s (needed by %s) is not in this kernel" % (name, why))
            if m in seen or m in self.builtin:
                return
            seen.add(m)
            info = self.load(m)
            for dep in ",".join(info.get("depends", [])).split(","):
                if dep:
                    visit(dep, m)
            for sd in info.get("softdep", []):
                words = sd.split()
                pre = words[words.index("pre:") + 1:] if "pre:" in words else []
                for w in pre:
                    if w.endswith(":"):
                        break
                    if self.find(w, True) is not None:
                        visit(w, m, True)
            out.append(m)

        for name in wanted:
            visit(name, "the file system")
        return out


class Cpio:
    """A newc cpio archive, built in memory."""

    def __init__(self):
        self.out = bytearray()
        self.ino = 1

    def _entry(self, name, mode, data=b"", rdev=(0, 0)):
        name_b = name.encode() + b"\0"
        hdr = "070701" + "".join("%08x" % v for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name_b), 0))
        self.ino += 1
        self.out += hdr.encode() + name_b
        self.out += b"\0" * (-len(self.out) % 4)
        self.out += data
        self.out += b"\0" * (-len(self.out) % 4)

    def dir(self, name):
        self._entry(name, 0o040755)

    def file(self, name, data, mode=0o644):
        self._entry(name, 0o100000 | mode, data)

    def chardev(self, name, major, minor):
        self._entry(name, 0o020600, rdev=(major, minor))

    def finish(self):
        self._entry("TRAILER!!!", 0)
        return bytes(self.out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--lxbench", required=True)
    ap.add_argument("--init", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    man = {}
    with open(args.manifest) as f:
        for line in f:
            k, _, v = line.strip().partition(" ")
            man.setdefault(k, v)
    mods = Modules(man["modules"])

    cpio = Cpio()
    for d in ("bin", "dev", "etc", "etc/modules", "lib", "lib/modules", "mnt", "proc", "sys", "tmp"):
        cpio.dir(d)
    cpio.chardev("dev/console", 5, 1)
    with open(man["busybox"], "rb") as f:
        cpio.file("bin/busybox", f.read(), 0o755)
    with open(args.init, "rb") as f:
        cpio.file("init", f.read(), 0o755)
    with open(args.lxbench, "rb") as f:
        cpio.file("lxbench", f.read(), 0o755)

    stored, dirs = set(), set()
    for fs in sorted(FS_MODULES):
        order = mods.order(COMMON + FS_MODULES[fs])
        lines = []
        for m in order:
            rel = mods.paths[m]
            rel = rel[:rel.index(".ko") + 3]
            lines.append(rel)
            if rel not in stored:
                parts = rel.split("/")
                for i in range(1, len(parts)):
                    d = "lib/modules/" + "/".join(parts[:i])
                    if d not in dirs:
                        dirs.add(d)
                        cpio.dir(d)
                cpio.file("lib/modules/" + rel, mods.data[m])
                stored.add(rel)
        cpio.file("etc/modules/" + fs, ("\n".join(lines) + "\n").encode() if lines else b"")
        print("initramfs: %s: %s" % (fs, " ".join(module_name(l) for l in lines)))
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(cpio.finish())
    os.replace(tmp, args.out)
    print("initramfs: %s, %d KiB, kernel %s" % (args.out, os.path.getsize(args.out) // 1024, man["kernel_version"]))


if __name__ == "__main__":
    main()
