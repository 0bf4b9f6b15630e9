"""cases_stack.py - stackable layers in the guest (docs/stacking.md): the
shell's mount over a directory of the root unixfs, the generic suite
through each layer (and through crypt and compress over fatfs and lfs), a stack of three, crypt's clear errors (no key, the
wrong key, a file changed below it), and what a program started from the
shell sees (the layer travels in EXOMOUNTS and is mounted again there).
"""
from qemutest import Case

KEY = "key=correct-horse-battery-staple"

CASES = [
    Case("stack-suite-" + t,
         "mkfs; mkdir /data; mount /l %s over=/data %s; fssuite /l" % (t, KEY if t == "crypt" else ""),
         expect=[r"fssuite: /l on %s at /l" % t, r": 11 passed, 0 failed"], reject=[r"^FAIL"],
         timeout=180)
    for t in ("null", "trace", "crypt", "compress")
] + [
    Case("stack-over-" + t,
         "mkfs -t %s key=x; mount /f %s key=x; mount /s crypt over=/f %s; fssuite /s; "
         "mount /z compress over=/f; fssuite /z" % (t, t, KEY),
         expect=[r"(?s)fssuite on /s: 11 passed, 0 failed.*fssuite on /z: 11 passed, 0 failed"],
         reject=[r"^FAIL"], timeout=240)
    for t in ("fatfs", "lfs")
] + [
    # The crypt layer's cryptography in the guest: the published vectors and
    # the fast ChaCha against the portable one (tests/host/userfs/test_crypto.c);
    # on RISC-V with and without Zbb (the kernel's probe picks the code).
    Case("stack-crypto-vectors", "cryptotest",
         expect=[r"test_crypto: ok .*ChaCha by zbb and portable"], reject=[r"^FAIL"],
         arches=("riscv",)),
    Case("stack-crypto-vectors-nozbb", "cryptotest", env={"CPU": "rv64,zbb=false"},
         expect=[r"test_crypto: ok .*ChaCha by portable and portable"], reject=[r"^FAIL"],
         arches=("riscv",)),
    Case("stack-crypto-vectors-x86", "cryptotest",
         expect=[r"test_crypto: ok .*ChaCha by portable and portable"], reject=[r"^FAIL"],
         arches=("x86_64",)),
    Case("stack-crypt-in-the-shell",
         "mkfs; mkdir /data; mount /s crypt over=/data " + KEY + "; echo secret words > /s/note; "
         "mkdir /s/dir; cat /s/note; ls /s; ls /data > /list; grep note /list; echo g1=$?; grep dir /list; echo g2=$?; "
         "umount /s; mount /s crypt over=/data key=wrong; mount /s crypt over=/data; "
         "mount /s compress over=/data; cat /s/note; umount /s; "
         "mount /s crypt over=/data " + KEY + "; cat /s/note",
         expect=[r"^secret words$", r"^dir\nnote$", r"^g1=1$", r"^g2=1$",
                 r"sh: mount /s: Permission denied", r"sh: mount /s: Invalid argument",
                 r"cat: /s/note: No such file or directory",
                 r"(?s)Invalid argument.*secret words\n"]),
    Case("stack-three-deep-and-children",
         "mkfs; mkdir /data; mount /a compress over=/data; mount /b crypt over=/a " + KEY + "; "
         "mount /c null over=/b; yes hello | head -n 3000 > /c/f; wc -l /c/f; mount; "
         "ls -l /data; umount /a; echo st=$?",
         expect=[r"^ *3000 ", r"/c +null +over=/b", r"sh: umount /a: Device or resource busy"]),
]
