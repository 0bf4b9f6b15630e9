# qemu-disks.sh - the disk part of the QEMU command line.  Sourced by
# tools/run-qemu.sh, which has set BUILD, DISK and DISKS and appends what this
# adds to its `args` array.
#
#   DISK=virtio   (default) DISKS virtio-blk disks: units 0 .. DISKS-1
#   DISK=scsi     DISKS SCSI disks (scsi-hd) on one virtio-scsi adapter:
#                 target 0, LUNs 0 .. DISKS-1, which are units 0 .. DISKS-1
#   DISK=model    unit 0 is the mechanical disk model (RZ25, data in guest
#                 RAM); DISKS-1 virtio-blk disks follow as units 1, 2, ...
#                 QEMU counts time in executed instructions (-icount), so the
#                 model's results do not depend on the host: docs/diskmodel.md
#   DISK=ram      unit 0 is a RAM disk; DISKS-1 virtio-blk disks follow
#   DISKS         number of units (default 1, at most 8), or a list of kinds,
#                 one per unit in unit order, e.g. DISKS=virtio,scsi,scsi or
#                 DISKS=model,scsi (model and ram only first); consecutive
#                 scsi units share one adapter as its LUNs 0, 1, ...
#   POWERCUT_SOCK unit 0 (a virtio-blk or SCSI disk) is served over NBD from
#                 this Unix socket by tools/powercut/pcdisk (a disk that loses
#                 its unflushed writes at a power cut; run-qemu.sh's POWERCUT=)
#   DISK_SIZE     size of disk images created here (default 512M: two areas
#                 250 MB apart fit, as the thesis's layouts need)
#   ICOUNT=1      count time in executed instructions with any disk, as
#                 DISK=model does: with DISK=ram, CPU timings and profiles
#                 that do not depend on the host's load; an idle guest's
#                 clock jumps to its next timer, so virtio waits become
#                 meaningless (docs/profiling.md)
#   BLKDEBUG      UNIT:FILE - put QEMU's blkdebug driver, configured by FILE
#                 (inject-error rules), under that unit's image: tests use it
#                 to make a disk fail reads or writes at chosen sectors.  A
#                 relative FILE is in the images' directory.
#
# Disk images are raw files named after their unit, diskN.img, kept in
# $EXODISK_SCRATCH when it is set (the test runner gives each case its own)
# and in $BUILD otherwise, so `make qemu` keeps its data between boots.
# A missing image is created empty and sparse by disk_image below: that
# function is the one place an image comes into being.
#
# Devices sit on the machine's virtio bus in unit order, one bus slot per
# virtio-blk disk or virtio-scsi adapter, so unit numbers are stable: on
# RISC-V virt the virtio-mmio slots (bus=virtio-mmio-bus.N); on x86-64 q35
# PCI slots from 00:08.0 on (QEMU_ARCH=x86_64, set by run-qemu.sh).

disk_dir=${EXODISK_SCRATCH:-$BUILD}
disk_size=${DISK_SIZE:-512M}

# disk_image UNIT: print the image path for UNIT, creating the image if missing.
disk_image() {
  local img="$disk_dir/disk$1.img"
  if [ ! -e "$img" ]; then
    mkdir -p "$disk_dir"
    truncate -s "$disk_size" "$img"
  fi
  printf '%s\n' "$img"
}

# The kinds of units 0, 1, ... from DISK and DISKS.
kinds=()
case "$DISKS" in
  [1-8])
    case "$DISK" in
      virtio|scsi) rest=$DISK ;;
      model|ram)   rest=virtio ;;
      *) echo "qemu-disks: DISK=$DISK: give virtio, scsi, model or ram" >&2; exit 2 ;;
    esac
    kinds=("$DISK")
    for ((u = 1; u < DISKS; u++)); do kinds+=("$rest"); done
    ;;
  *[a-z]*)
    IFS=', ' read -r -a kinds <<< "$DISKS"
    if [ ${#kinds[@]} -lt 1 ] || [ ${#kinds[@]} -gt 8 ]; then
      echo "qemu-disks: DISKS=$DISKS: give 1 to 8 kinds" >&2; exit 2
    fi
    for ((u = 0; u < ${#kinds[@]}; u++)); do
      case "${kinds[$u]}" in
        virtio|scsi) ;;
        model|ram) [ $u -eq 0 ] || { echo "qemu-disks: DISKS=$DISKS: ${kinds[$u]} can only be the first unit" >&2; exit 2; } ;;
        *) echo "qemu-disks: DISKS=$DISKS: unknown kind ${kinds[$u]} (virtio, scsi, model, ram)" >&2; exit 2 ;;
      esac
    done
    DISK=${kinds[0]}   # run-qemu.sh tells the kernel about unit 0's kind
    ;;
  *) echo "qemu-disks: DISKS=$DISKS: give a number of disk units from 1 to 8, or a list of kinds" >&2; exit 2 ;;
esac

# The modern (version 2) virtio-mmio register interface; QEMU 7.2 defaults to
# the legacy one.  docs/blocklayer.md says why the kernel drives only this.
if [ "${QEMU_ARCH:-riscv}" != x86_64 ]; then
  args+=(-global virtio-mmio.force-legacy=false)
fi

# The disk model's clock is the guest's time counter.  With -icount, QEMU
# advances it by 1 ns per executed instruction (shift=0) and skips idle time
# (sleep=off) instead of waiting for the host's clock.
if [ "${kinds[0]}" = model ] || [ -n "${ICOUNT:-}" ]; then
  args+=(-icount shift=0,sleep=off)
fi

# bus_slot N: the -device options that put a device in virtio bus slot N.
bus_slot() {
  if [ "${QEMU_ARCH:-riscv}" = x86_64 ]; then
    printf 'bus=pcie.0,addr=0x%x' $((8 + $1))
  else
    printf 'bus=virtio-mmio-bus.%d' "$1"
  fi
}
if [ "${QEMU_ARCH:-riscv}" = x86_64 ]; then
  blk_dev=virtio-blk-pci scsi_dev=virtio-scsi-pci
else
  blk_dev=virtio-blk-device scsi_dev=virtio-scsi-device
fi

slot=0
lun=-1
for ((unit = 0; unit < ${#kinds[@]}; unit++)); do
  kind=${kinds[$unit]}
  [ "$kind" = model ] || [ "$kind" = ram ] && continue
  img=$(disk_image "$unit")
  if [ -n "${BLKDEBUG:-}" ] && [ "${BLKDEBUG%%:*}" = "$unit" ]; then
    cfg=${BLKDEBUG#*:}
    [ "${cfg#/}" = "$cfg" ] && cfg="$disk_dir/$cfg"
    img="blkdebug:$cfg:$img"
  fi
  drive="file=$img,if=none,format=raw,id=disk$unit"
  if [ -n "${POWERCUT_SOCK:-}" ] && [ "$unit" = 0 ]; then
    drive="driver=nbd,server.type=unix,server.path=$POWERCUT_SOCK,if=none,id=disk$unit"
  fi
  args+=(-drive "$drive")
  if [ "$kind" = virtio ]; then
    args+=(-device "$blk_dev,drive=disk$unit,$(bus_slot $slot)")
    slot=$((slot + 1))
    lun=-1
  else
    # A run of scsi units shares one adapter; each is a LUN of target 0.
    if [ $lun -lt 0 ]; then
      adapter=scsi$slot
      args+=(-device "$scsi_dev,id=$adapter,$(bus_slot $slot)")
      slot=$((slot + 1))
    fi
    lun=$((lun + 1))
    args+=(-device "scsi-hd,drive=disk$unit,bus=$adapter.0,channel=0,scsi-id=0,lun=$lun,dpofua=on")
  fi
done
