#!/usr/bin/env python3
"""test_pcdisk.py - host test of tools/powercut/pcdisk, the disk that loses
its unflushed writes at a power cut: an NBD client of our own speaks to it
over its socket, as QEMU does, and the image file is looked at afterwards.

  - the handshake (NBD_OPT_GO, the export's size, flush and FUA offered);
  - reads see the volatile cache over the medium;
  - a flush makes what came before durable, a FUA write its own sectors;
  - mode none: at the cut every unflushed write is lost, the request that
    met the cut too, and the connection drops (exit status 3);
  - mode random: each unflushed sector is kept or lost on its own (some of
    each among 400), and a kept one holds exactly what was written;
  - the same seed and cut give the same disk; the stats file's counts;
  - a client that hangs up without a cut keeps only what it flushed
    (QEMU flushes before it exits).

Usage: test_pcdisk.py PATH-TO-PCDISK.  Exit 0 when all pass.
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

SECTOR = 512
failures = 0


def check(ok, what):
    global failures
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        failures += 1


class Client:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        for _ in range(500):
            try:
                self.s.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                time.sleep(0.01)
        self.handle = 0
        magic, opt, flags = struct.unpack(">QQH", self.get(18))
        assert magic == 0x4e42444d41474943 and opt == 0x49484156454f5054, "bad greeting"
        self.s.sendall(struct.pack(">I", 3))              # fixed newstyle, no zeroes
        name = b""
        data = struct.pack(">I", len(name)) + name + struct.pack(">H", 0)
        self.s.sendall(struct.pack(">QII", 0x49484156454f5054, 7, len(data)) + data)
        self.size = self.tflags = None
        while True:
            magic, opt, rtype, ln = struct.unpack(">QIII", self.get(20))
            body = self.get(ln)
            if rtype == 3 and struct.unpack(">H", body[:2])[0] == 0:
                self.size, self.tflags = struct.unpack(">QH", body[2:12])
            if rtype == 1:
                break
            assert rtype < 0x80000000, "option refused: %#x" % rtype

    def get(self, n):
        b = b""
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                raise EOFError
            b += c
        return b

    def request(self, typ, off=0, data=b"", length=None, flags=0):
        self.handle += 1
        ln = len(data) if length is None else length
        self.s.sendall(struct.pack(">IHHQQI", 0x25609513, flags, typ, self.handle, off, ln) + data)
        magic, err, h = struct.unpack(">IIQ", self.get(16))
        assert magic == 0x67446698 and h == self.handle
        return err, self.get(ln) if typ == 0 and err == 0 else b""

    def read(self, sector, n=1):
        return self.request(0, sector * SECTOR, length=n * SECTOR)[1]

    def write(self, sector, data, fua=False):
        return self.request(1, sector * SECTOR, data, flags=1 if fua else 0)[0]

    def flush(self):
        return self.request(3)[0]

    def disc(self):
        self.s.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 2, 0, 0, 0))
        self.s.close()


def sec(v):
    return bytes([v & 255]) * SECTOR


def start(pcdisk, tmp, *opts, sectors=1024):
    img = os.path.join(tmp, "img")
    with open(img, "wb") as f:
        f.write(b"\0" * sectors * SECTOR)
    sock = os.path.join(tmp, "sock")
    stats = os.path.join(tmp, "stats")
    p = subprocess.Popen([pcdisk, "--stats", stats] + list(opts) + [img, sock],
                         stderr=subprocess.PIPE)
    return p, img, Client(sock), stats


def image(img, sector, n=1):
    with open(img, "rb") as f:
        f.seek(sector * SECTOR)
        return f.read(n * SECTOR)


def main():
    pcdisk = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="pcdisk-test-")

    # Mode none: requests 1 write, 2 flush, 3 write, 4 FUA write, 5 write (the cut).
    p, img, c, stats = start(pcdisk, tmp, "--cut", "5")
    check(c.size == 1024 * SECTOR and c.tflags & 0x0c == 0x0c, "handshake: size, flush and FUA offered")
    check(c.write(10, sec(1)) == 0 and c.read(10) == sec(1) and image(img, 10) == sec(0),
          "a write is in the cache, read back from it, not yet on the medium")
    check(c.flush() == 0 and image(img, 10) == sec(1), "a flush puts it on the medium")
    c.write(11, sec(2))
    c.write(12, sec(3), fua=True)
    check(image(img, 12) == sec(3) and image(img, 11) == sec(0), "a FUA write is durable at once, alone")
    try:
        c.write(13, sec(4))
        cut_ok = False
    except EOFError:
        cut_ok = True
    rc = p.wait(timeout=10)
    check(cut_ok and rc == 3, "the cut drops the connection, exit status 3 (%s)" % rc)
    check(image(img, 10) == sec(1) and image(img, 12) == sec(3), "flushed and FUA sectors survive")
    check(image(img, 11) == sec(0) and image(img, 13) == sec(0), "the unflushed write and the cut one are lost")
    with open(stats) as f:
        w = f.read().split()
    st = {w[i]: int(w[i + 1]) for i in range(0, len(w), 2)}
    check(st == {"requests": 5, "writes": 3, "flushes": 1, "cut": 5, "kept": 0, "lost": 1},
          "stats: %r" % st)

    # Mode random: 400 unflushed sectors, some kept and some lost.
    def random_run(seed):
        p, img, c, _ = start(pcdisk, tmp, "--cut", "3", "--mode", "random", "--seed", str(seed))
        c.write(0, b"".join(sec(1 + i % 250) for i in range(200)))
        c.write(200, b"".join(sec(1 + i % 250) for i in range(200, 400)))
        try:
            c.flush()
        except EOFError:
            pass
        p.wait(timeout=10)
        got = image(img, 0, 400)
        return [got[i * SECTOR:(i + 1) * SECTOR] for i in range(400)]
    a = random_run(7)
    kept = sum(1 for i, s in enumerate(a) if s == sec(1 + i % 250))
    zero = sum(1 for s in a if s == sec(0))
    check(kept + zero == 400, "each sector wholly kept or wholly lost")
    check(50 < kept < 350, "random: some sectors kept, some lost (%d of 400 kept)" % kept)
    check(random_run(7) == a, "the same seed, the same disk")
    check(random_run(8) != a, "another seed, another disk")

    # No cut: what was not flushed when the client hung up is lost.
    p, img, c, stats = start(pcdisk, tmp)
    c.write(5, sec(9))
    c.flush()
    c.write(6, sec(9))
    c.disc()
    rc = p.wait(timeout=10)
    check(rc == 0 and image(img, 5) == sec(9) and image(img, 6) == sec(0),
          "hung up without a cut: flushed kept, unflushed lost (exit %s)" % rc)
    print("test_pcdisk: %d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
