#!/usr/bin/env bash
# run-qemu.sh - boot the exodisk kernel in QEMU.
#
# Environment (all optional; `make qemu` passes them through):
#   CMD       a shell command line to run instead of the interactive shell;
#             the machine powers off afterwards and QEMU exits with the status
#             of the last command.
#   ARCH      riscv (default: QEMU virt over OpenSBI) | x86_64 (QEMU q35)
#   DISK      virtio (default) | scsi | model | ram: what disk unit 0 is
#   DISKS     number of disk units (default 1), or a list of kinds (tools/qemu-disks.sh)
#   MEM       guest RAM (default 1G)
#   CPU       QEMU's -cpu (default: QEMU's own for the machine, e.g.
#             CPU=rv64,zbb=false to boot a RISC-V hart without Zbb)
#   BOOTARGS  extra kernel options (e.g. "rawio=1 polled=1")
#   GDB=1     wait for gdb on localhost:1234 (see README "Debugging")
#   BUILD     build directory (default build; ARCH=x86_64's kernel and
#             initrd are in BUILD/x86_64, the disk images in BUILD)
#   KERNEL, INITRD  another kernel and initrd on the same machine (the Linux
#             comparison, tools/linux/run.sh; default: ours in BUILD)
#   PLUGIN    a TCG plugin and its arguments, as QEMU's -plugin takes them
#             (e.g. PLUGIN=build/tools/memtouch.so,every=5000,out=FILE:
#             tools/memtouch/memtouch.c)
#   POWERCUT  N[:random[:SEED]]: unit 0 is a disk that loses its unflushed
#             writes when the power fails at its N-th write or flush (0: never):
#             all of them, or each sector by chance (tools/powercut/pcdisk,
#             docs/powercut.md).  A cut stops QEMU; the status is then 250.
#             POWERCUT_STATS=FILE keeps pcdisk's counts.
#   ACCEL     tcg (default: QEMU translates every guest instruction) | kvm
#             (the host CPU runs the guest: x86_64 on an x86-64 host with a
#             usable /dev/kvm; not with ICOUNT=1 or DISK=model, whose clock
#             is QEMU's instruction count).  The CPU model stays QEMU's
#             default (qemu64); docs/kernel.md says what the kernel needs
#             from a KVM.
set -euo pipefail

BUILD=${BUILD:-build}
MEM=${MEM:-1G}
DISK=${DISK:-virtio}
DISKS=${DISKS:-1}
ARCH=${ARCH:-riscv}
ACCEL=${ACCEL:-tcg}

# kvm_usable: can this host run the guest under KVM - /dev/kvm opens, speaks
# the stable API and creates a VM (tools/kvmcheck.py, the test runner's
# answer too)?  Prints why not.
kvm_usable() {
  python3 "$(dirname "$0")/kvmcheck.py"
}

case "$ACCEL" in
  tcg) ;;
  kvm)
    why=""
    if [ "$ARCH" != x86_64 ]; then
      why="ACCEL=kvm runs only ARCH=x86_64 (the host CPU runs the guest's instructions)"
    elif [ "$(uname -m)" != x86_64 ]; then
      why="ACCEL=kvm needs an x86-64 host, this is $(uname -m)"
    elif [ -n "${ICOUNT:-}" ]; then
      why="ACCEL=kvm with ICOUNT=1: counting instructions needs TCG"
    elif [[ ",${DISK},${DISKS}," == *,model,* ]]; then
      why="ACCEL=kvm with the disk model: its clock counts instructions, which needs TCG"
    elif ! why=$(kvm_usable); then
      why="ACCEL=kvm: $why"
    fi
    if [ -n "$why" ]; then
      echo "run-qemu: $why" >&2
      exit 2
    fi
    ;;
  *) echo "run-qemu: ACCEL=$ACCEL: give tcg or kvm" >&2; exit 2 ;;
esac

case "$ARCH" in
  riscv)
    qemu=qemu-system-riscv64
    args=(-machine virt -bios default -smp 1 -m "$MEM" -nographic
          -kernel "${KERNEL:-$BUILD/kernel.elf}" -initrd "${INITRD:-$BUILD/initrd.img}")
    ;;
  x86_64)
    # q35 with the serial port on the terminal (and QEMU's monitor behind
    # Ctrl-A c, as -nographic has it) but no graphics, no network card and
    # no reboot on a triple fault.  The kernel leaves through isa-debug-exit
    # after writing its exit status to the debug console (port 0xe9), which
    # goes to a file read below (kernel/arch/x86_64/power.c).
    qemu=qemu-system-x86_64
    QEMU_ARCH=x86_64
    exitlog=$(mktemp "${TMPDIR:-/tmp}/exodisk-exit.XXXXXX")
    trap 'rm -f "$exitlog"' EXIT
    args=(-machine q35 -smp 1 -m "$MEM" -display none -serial mon:stdio -nic none -no-reboot
          -kernel "${KERNEL:-$BUILD/x86_64/kernel.mb}" -initrd "${INITRD:-$BUILD/x86_64/initrd.img}"
          -device isa-debug-exit,iobase=0xf4,iosize=0x04
          -chardev "file,id=exitlog,path=$exitlog" -device isa-debugcon,iobase=0xe9,chardev=exitlog)
    ;;
  *) echo "run-qemu: ARCH=$ARCH: give riscv or x86_64" >&2; exit 2 ;;
esac

if [ -n "${POWERCUT:-}" ]; then
  if [ "$DISK" != virtio ] && [ "$DISK" != scsi ]; then
    echo "run-qemu: POWERCUT needs DISK=virtio or scsi (unit 0 is the disk that loses power)" >&2
    exit 2
  fi
  IFS=: read -r pc_cut pc_mode pc_seed <<<"$POWERCUT"
  pc_tmp=$(mktemp -d /tmp/pcdisk.XXXXXX)
  trap 'rm -rf "$pc_tmp" ${exitlog:+"$exitlog"}' EXIT
  export POWERCUT_SOCK=$pc_tmp/sock
fi

# Disks: virtio-blk units on the virtio-mmio bus slots, in order.
if [ -f tools/qemu-disks.sh ]; then
  # shellcheck source=/dev/null
  . tools/qemu-disks.sh
fi

# TCG is QEMU's default: its command line stays as it was.
[ "$ACCEL" = kvm ] && args+=(-accel kvm)
if [ -n "${CPU:-}" ]; then
  args+=(-cpu "$CPU")
fi

bootargs="${BOOTARGS:-}"
[ "$DISK" != virtio ] && bootargs="$bootargs disk=$DISK"
if [ -n "${CMD:-}" ]; then
  bootargs="$bootargs cmd=$CMD"
fi
args+=(-append "${bootargs# }")

if [ -n "${PLUGIN:-}" ]; then
  args+=(-plugin "$PLUGIN")
fi

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
"$qemu" "${args[@]}"
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
if [ "$ARCH" = x86_64 ]; then
  # isa-debug-exit made QEMU exit with (status << 1) | 1, which loses the
  # top bit; the status in full is in the kernel's "exodisk-exit N" line.
  # Without that line the kernel did not power off (QEMU failed, Ctrl-A x,
  # a signal): QEMU's own status stands.
  line=$(grep -a '^exodisk-exit [0-9]*$' "$exitlog" | tail -n 1 || true)
  if [ -n "$line" ]; then
    status=${line#exodisk-exit }
  fi
fi
if [ -n "${CMD:-}" ] && [ $status -ne 0 ]; then
  echo "run-qemu: QEMU exited with status $status" >&2
fi
exit $status
