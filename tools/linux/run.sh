#!/usr/bin/env bash
# run.sh - one boot of the Linux side of the comparison (docs/linux-baseline.md):
# make a fresh disk image with file system FS on the host, boot Debian's
# riscv64 kernel with tools/linux/init and lxbench on it, through
# tools/run-qemu.sh - the script that boots our kernel, so the machine, its
# memory and the disk's QEMU options are ours exactly - and exit with
# lxbench's status.
#
#   tools/linux/run.sh FS [LXBENCH OPTIONS...]
#       FS: ext4 ext2 vfat f2fs nilfs2, or raw (no file system: lxbench
#       drives /dev/vda itself)
#
# Environment: MEM and DISK_SIZE as for tools/run-qemu.sh and
# tools/qemu-disks.sh (the caller gives the same values to both sides);
# EXODISK_SCRATCH, where the image goes (a new temporary directory if
# unset, removed afterwards); BUILD (the initramfs is
# $BUILD/linux/initramfs.cpio, made by `make linux-guest`); LINUX_CACHE
# (tools/deps.sh linux).  The console goes to stdout.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
cd "$(dirname "$0")/../.."

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
fs=$1
shift
BUILD=${BUILD:-build}
cache=${LINUX_CACHE:-$HOME/.cache/exodisk/linux}
initrd=$BUILD/linux/initramfs.cpio
for f in "$cache/manifest.txt" "$initrd"; do
  [ -f "$f" ] || { echo "linux/run.sh: $f is missing: run make linux-guest" >&2; exit 1; }
done
kernel=$(sed -n 's/^image //p' "$cache/manifest.txt")

scratch=${EXODISK_SCRATCH:-}
if [ -z "$scratch" ]; then
  scratch=$(mktemp -d /tmp/lxbench.XXXXXX)
  trap 'rm -rf "$scratch"' EXIT
fi
export EXODISK_SCRATCH=$scratch DISK=virtio DISKS=1
img=$scratch/disk0.img
rm -f "$img"
# The same kind of image our side gets from tools/qemu-disks.sh: sparse,
# DISK_SIZE bytes; then the file system, with fixed options (no discard,
# no lazy initialisation left for the guest to do while it is measured).
truncate -s "${DISK_SIZE:-512M}" "$img"
case "$fs" in
  ext4|ext2) MKE2FS_CONFIG=tools/linux/mke2fs.conf "mkfs.$fs" -F -q \
               -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$img" ;;
  vfat)      mkfs.vfat -F 32 "$img" >/dev/null ;;
  f2fs)      mkfs.f2fs -q -f -t 0 "$img" ;;
  nilfs2)    [ -e /etc/mtab ] || { echo "linux/run.sh: mkfs.nilfs2 needs /etc/mtab: run tools/deps.sh linux" >&2; exit 1; }
             mkfs.nilfs2 -q -f -K "$img" ;;
  raw)       ;;
  *) echo "linux/run.sh: $fs: give ext4, ext2, vfat, f2fs, nilfs2 or raw" >&2; exit 2 ;;
esac

# Linux hands command-line words it does not know to /init as environment
# variables (a quoted value may hold spaces): lxfs and lxargs.
case "$*" in *'"'*) echo "linux/run.sh: no double quotes in lxbench's options" >&2; exit 2 ;; esac
export KERNEL=$kernel INITRD=$initrd BOOTARGS="console=ttyS0 quiet panic=-1 lxfs=$fs lxargs=\"$*\""
unset CMD
log=$scratch/console.log
set +e
tools/run-qemu.sh < /dev/null 2>&1 | tr -d '\r' | tee "$log"
qemu=${PIPESTATUS[0]}
set -e
status=$(sed -n 's/^lxinit: exit status \([0-9]*\)$/\1/p' "$log" | tail -n 1)
if [ -z "$status" ]; then
  echo "linux/run.sh: the guest did not finish (QEMU status $qemu)" >&2
  exit 1
fi
[ "$qemu" = 0 ] || { echo "linux/run.sh: QEMU exited with status $qemu" >&2; exit 1; }
exit "$status"
