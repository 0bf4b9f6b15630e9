"""cases_kvm.py - the x86-64 kernel under KVM (tools/run-qemu.sh ACCEL=kvm):
the host's CPU runs the guest, so what QEMU's translator forgives and a
hypervisor may not (docs/kernel.md, "Under KVM") is checked here.  Skipped,
not failed, on a host without a usable /dev/kvm (most CI machines)."""
from qemutest import Case, kvm_unusable

CASES = [
    # A boot, a shell, system calls (every command), the cipher's test
    # vectors, floating point in user mode from the initial FPU image
    # (cryptotest -b computes and prints its rates in doubles, which x86-64
    # does with SSE2 under MXCSR), and a fault that kills a program but not
    # the system.
    Case("kvm-boot-and-run",
         "echo hello-from-kvm; cryptotest; echo crypto=$?; cryptotest -b 1; "
         "faulttest null; echo fault=$?; echo after",
         env={"ACCEL": "kvm"}, arches=("x86_64",), skip=kvm_unusable, timeout=300,
         expect=[r"^hello-from-kvm$", r"^crypto=0$", r"^  ChaCha12 +\d+\.\d\d +AEAD seal +\d+\.\d\d$",
                 r"kernel: pid \d+ \(faulttest\) killed: load page fault", r"^fault=1\d\d$", r"^after$"],
         reject=[r"FAIL"]),
]
