#!/usr/bin/env python3
"""kvmcheck.py - can this host run an x86-64 guest under KVM?

One answer for both who ask: tools/run-qemu.sh (ACCEL=kvm refuses to start
QEMU when the answer is no, and says why) and the QEMU test runner
(tests/qemu/qemutest.py: the KVM cases are skipped, not failed).  As a
program it prints why not and exits 1, or exits 0 silently.

The host can if it is x86-64 and its /dev/kvm opens for reading and writing,
speaks the stable API (version 12) and creates a VM: what QEMU asks the
kernel first.  A container without KVM, or one whose /dev/kvm exists but
cannot make a VM, fails here rather than in the middle of a boot.
"""
import fcntl
import os
import platform
import sys

KVM_GET_API_VERSION = 0xAE00   # _IO(KVMIO, 0)
KVM_CREATE_VM = 0xAE01         # _IO(KVMIO, 1)


def kvm_unusable():
    """Why KVM cannot be used here, or None if it can."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return "the host is %s, not x86-64" % platform.machine()
    try:
        fd = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        return "/dev/kvm: %s" % e.strerror
    try:
        version = fcntl.ioctl(fd, KVM_GET_API_VERSION)
        if version != 12:
            return "/dev/kvm speaks API version %d, not 12" % version
        try:
            vm = fcntl.ioctl(fd, KVM_CREATE_VM, 0)
        except OSError as e:
            return "/dev/kvm cannot create a VM: %s" % e.strerror
        os.close(vm)
        return None
    except OSError as e:
        return "/dev/kvm: %s" % e.strerror
    finally:
        os.close(fd)


if __name__ == "__main__":
    why = kvm_unusable()
    if why:
        print(why)
        sys.exit(1)
