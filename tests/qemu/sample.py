"""sample.py - the bounded sample of QEMU cases that `make test` runs on
x86-64 (run.py --sample); the whole suite runs there with
`make qemu-test ARCH=x86_64` (107 cases, about three times as long).

RISC-V runs every case in `make test`.  On the PC the portable code is the
same source, so what the sample must show is that each piece of the port
works end to end: the boot and the shell, traps and faults, preemption,
pipes and the console's interrupt key, the real-time clock,
system-call arguments, virtio-blk over PCI (interrupts and polled), the
exodisk and a power failure on it, unixfs and the other libFSes on both
disk kinds, the disk image made on the host, the SCSI layer's error paths,
and make's exit status through isa-debug-exit.  The long cases (the disk
model under -icount, FAT side by side with the host's tools) stay out.
run.py refuses a name here that no case has, so a renamed case is noticed.
"""

SAMPLE = [
    # boot, shell, exit status (kernel/arch/x86_64/power.c, tools/run-qemu.sh)
    "echo-hello", "exit-status", "quoting", "make-qemu-cmd-verbatim",
    # traps, faults with RISC-V's codes, preemption by the HPET
    "fault-kwrite", "fault-illegal", "fault-stack", "error-badptr",
    "two-cpu-bound-both-progress", "prof-not-on-x86",
    # pipes, jobs and the interrupt key through the PC's serial interrupt;
    # the date from the CMOS clock; options after Multiboot's file name
    "pipe-more-than-a-buffer", "shell-ctrl-c", "ps-and-kill", "clock-date-stat",
    "boot-option-unknown",
    # virtio-blk over virtio-pci, MSI-X and polled
    "disk-virtio", "disk-virtio-polled", "disk-exit-in-flight-virtio",
    # the exodisk, libFSes, the same image bytes as RISC-V's
    "exodisk-edtest-virtio", "exodisk-persist-power-failure", "fs-suite-unixfs",
    "fs-survives-reboot", "fs-host-made-image",
    # virtio-scsi: the SCSI layer, every libFS on it, a power cut, sense data
    "scsi-disktest", "scsi-mixed-units", "scsi-edtest", "scsi-fs-suites",
    "scsi-power-failure", "scsi-medium-error",
]
