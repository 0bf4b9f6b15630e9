# qemu-disks.sh - the disk part of the QEMU command line.  Sourced by
# tools/run-qemu.sh, which has set BUILD, DISK and DISKS and appends what this
# adds to its `args` array.
#
#   DISK=virtio   (default) DISKS virtio-blk disks: units 0 .. DISKS-1
#   DISK=model    unit 0 is the mechanical disk model (RZ25, data in guest
#                 RAM); DISKS-1 virtio-blk disks follow as units 1, 2, ...
#                 QEMU counts time in executed instructions (-icount), so the
#                 model's results do not depend on the host: docs/diskmodel.md
#   DISK=ram      unit 0 is a RAM disk; DISKS-1 virtio-blk disks follow
#   DISKS         number of units (default 1, at most 8)
#   POWERCUT_SOCK the first virtio-blk unit is served over NBD from this Unix
#                 socket by tools/powercut/pcdisk (a disk that loses its
#                 unflushed writes at a power cut; run-qemu.sh's POWERCUT=)
#   DISK_SIZE     size of disk images created here (default 512M: two areas
#                 250 MB apart fit, as the thesis's layouts need)
#   ICOUNT=1      count time in executed instructions with any disk, as
#                 DISK=model does: with DISK=ram, CPU timings and profiles
#                 that do not depend on the host's load; an idle guest's
#                 clock jumps to its next timer, so virtio waits become
#                 meaningless (docs/profiling.md)
#
# Disk images are raw files named after their unit, diskN.img, kept in
# $EXODISK_SCRATCH when it is set (the test runner gives each case its own)
# and in $BUILD otherwise, so `make qemu` keeps its data between boots.
# A missing image is created empty and sparse by disk_image below: that
# function is the one place an image comes into being.

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

case "$DISKS" in
  [1-8]) ;;
  *) echo "qemu-disks: DISKS=$DISKS: give a number of disk units from 1 to 8" >&2; exit 2 ;;
esac
case "$DISK" in
  virtio)    first_virtio_unit=0 ;;
  model|ram) first_virtio_unit=1 ;;
  *) echo "qemu-disks: DISK=$DISK: give virtio, model or ram" >&2; exit 2 ;;
esac

# The modern (version 2) virtio-mmio register interface; QEMU 7.2 defaults to
# the legacy one.  docs/blocklayer.md says why the kernel drives only this.
args+=(-global virtio-mmio.force-legacy=false)

# The disk model's clock is the guest's time counter.  With -icount, QEMU
# advances it by 1 ns per executed instruction (shift=0) and skips idle time
# (sleep=off) instead of waiting for the host's clock.
if [ "$DISK" = model ] || [ -n "${ICOUNT:-}" ]; then
  args+=(-icount shift=0,sleep=off)
fi

# virtio-blk disks, each pinned to a virtio-mmio slot in unit order.
for ((unit = first_virtio_unit; unit < DISKS; unit++)); do
  slot=$((unit - first_virtio_unit))
  img=$(disk_image "$unit")
  drive="file=$img,if=none,format=raw,id=disk$unit"
  if [ -n "${POWERCUT_SOCK:-}" ] && [ "$unit" = "$first_virtio_unit" ]; then
    drive="driver=nbd,server.type=unix,server.path=$POWERCUT_SOCK,if=none,id=disk$unit"
  fi
  args+=(-drive "$drive"
         -device "virtio-blk-device,drive=disk$unit,bus=virtio-mmio-bus.$slot")
done
