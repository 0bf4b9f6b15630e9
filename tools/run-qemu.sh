#!/usr/bin/env bash
# run-qemu.sh - boot the exodisk kernel in QEMU.
#
# Environment (all optional; `make qemu` passes them through):
#   CMD       a shell command line to run instead of the interactive shell;
#             the machine powers off afterwards and QEMU exits with the status
#             of the last command.
#   DISK      virtio (default) | model | ram: what disk unit 0 is
#   DISKS     number of virtio disks (default 1)
#   MEM       guest RAM (default 1G)
#   BOOTARGS  extra kernel options (e.g. "rawio=1 polled=1")
#   GDB=1     wait for gdb on localhost:1234 (see README "Debugging")
#   BUILD     build directory (default build)
#   KERNEL, INITRD  another kernel and initrd on the same machine (the Linux
#             comparison, tools/linux/run.sh; default: ours in BUILD)
set -euo pipefail

BUILD=${BUILD:-build}
MEM=${MEM:-1G}
DISK=${DISK:-virtio}
DISKS=${DISKS:-1}

args=(-machine virt -bios default -smp 1 -m "$MEM" -nographic
      -kernel "${KERNEL:-$BUILD/kernel.elf}" -initrd "${INITRD:-$BUILD/initrd.img}")

# Disks: virtio-blk units on the virtio-mmio bus slots, in order.
if [ -f tools/qemu-disks.sh ]; then
  # shellcheck source=/dev/null
  . tools/qemu-disks.sh
fi

bootargs="${BOOTARGS:-}"
[ "$DISK" != virtio ] && bootargs="$bootargs disk=$DISK"
if [ -n "${CMD:-}" ]; then
  bootargs="$bootargs cmd=$CMD"
fi
args+=(-append "${bootargs# }")

if [ "${GDB:-0}" = 1 ]; then
  echo "run-qemu: waiting for gdb on localhost:1234 (in another terminal: gdb-multiarch)" >&2
  args+=(-S -gdb tcp::1234)
fi

set +e
qemu-system-riscv64 "${args[@]}"
status=$?
set -e
if [ -n "${CMD:-}" ] && [ $status -ne 0 ]; then
  echo "run-qemu: QEMU exited with status $status" >&2
fi
exit $status
