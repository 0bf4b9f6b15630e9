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
#   POWERCUT  N[:random[:SEED]]: unit 0 is a disk that loses its unflushed
#             writes when the power fails at its N-th write or flush (0: never):
#             all of them, or each sector by chance (tools/powercut/pcdisk,
#             docs/powercut.md).  A cut stops QEMU; the status is then 250.
#             POWERCUT_STATS=FILE keeps pcdisk's counts.
set -euo pipefail

BUILD=${BUILD:-build}
MEM=${MEM:-1G}
DISK=${DISK:-virtio}
DISKS=${DISKS:-1}

args=(-machine virt -bios default -smp 1 -m "$MEM" -nographic
      -kernel "${KERNEL:-$BUILD/kernel.elf}" -initrd "${INITRD:-$BUILD/initrd.img}")

if [ -n "${POWERCUT:-}" ]; then
  if [ "$DISK" != virtio ]; then
    echo "run-qemu: POWERCUT needs DISK=virtio (unit 0 is the disk that loses power)" >&2
    exit 2
  fi
  IFS=: read -r pc_cut pc_mode pc_seed <<<"$POWERCUT"
  pc_tmp=$(mktemp -d /tmp/pcdisk.XXXXXX)
  trap 'rm -rf "$pc_tmp"' EXIT
  export POWERCUT_SOCK=$pc_tmp/sock
fi

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

if [ -n "${POWERCUT:-}" ]; then
  "$BUILD/tools/pcdisk" --cut "$pc_cut" --mode "${pc_mode:-none}" --seed "${pc_seed:-1}" \
    --stats "${POWERCUT_STATS:-$pc_tmp/stats}" --kill "$pc_tmp/qemu.pid" \
    "$(disk_image 0)" "$POWERCUT_SOCK" &
  pc_pid=$!
  until [ -S "$POWERCUT_SOCK" ]; do
    kill -0 "$pc_pid" 2>/dev/null || { echo "run-qemu: pcdisk did not start" >&2; exit 1; }
    sleep 0.01
  done
  args+=(-pidfile "$pc_tmp/qemu.pid")
fi

set +e
qemu-system-riscv64 "${args[@]}"
status=$?
if [ -n "${POWERCUT:-}" ]; then
  # QEMU flushed and hung up, or pcdisk cut the power and killed it.
  for _ in $(seq 200); do kill -0 "$pc_pid" 2>/dev/null || break; sleep 0.01; done
  kill "$pc_pid" 2>/dev/null
  wait "$pc_pid"
  if [ $? = 3 ]; then
    echo "run-qemu: the power failed (POWERCUT=$POWERCUT)" >&2
    exit 250
  fi
fi
set -e
if [ -n "${CMD:-}" ] && [ $status -ne 0 ]; then
  echo "run-qemu: QEMU exited with status $status" >&2
fi
exit $status
