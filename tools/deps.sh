#!/usr/bin/env bash
# deps.sh - install what building, booting and testing exodisk needs.
#
#   tools/deps.sh          what `make qemu`, `make test` and `make bench` need
#   tools/deps.sh x86_64   also what ARCH=x86_64 needs: QEMU's PC and Debian's
#                          newlib source, which tools/newlib.sh builds once into
#                          the C library of the x86-64 programs
#   tools/deps.sh linux    also what the Linux baseline needs (docs/linux-baseline.md):
#                          the riscv64 Linux cross compiler and the mkfs tools on
#                          the host, and Debian's riscv64 kernel and busybox,
#                          pinned below by version and SHA-256, downloaded once
#                          into $LINUX_CACHE (default ~/.cache/exodisk/linux)
#
# Called by make before anything else.  It is quick when everything is
# present (it only checks), and on a fresh Debian 12 machine it installs the
# missing packages with apt-get, through sudo when not root.  Set
# EXODISK_NO_DEPS=1 to skip it entirely.  Exit status 0 when everything is
# there; otherwise a message on stderr saying what is missing and why.
set -euo pipefail

[ "${EXODISK_NO_DEPS:-0}" = 1 ] && exit 0

mode=${1:-base}
case "$mode" in
  base|linux|x86_64) ;;
  -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "deps.sh: unknown mode '$mode' (give nothing, x86_64 or linux)" >&2; exit 2 ;;
esac

# package : a file or command that proves it is installed
need=(
  "qemu-system-misc:/usr/bin/qemu-system-riscv64"
  "gcc-riscv64-unknown-elf:/usr/bin/riscv64-unknown-elf-gcc"
  "binutils-riscv64-unknown-elf:/usr/bin/riscv64-unknown-elf-objdump"
  "picolibc-riscv64-unknown-elf:/usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs"
  "opensbi:/usr/lib/riscv64-linux-gnu/opensbi/generic/fw_dynamic.bin"
  "gdb-multiarch:/usr/bin/gdb-multiarch"
  "gcc:/usr/bin/gcc"
  "make:/usr/bin/make"
  "python3:/usr/bin/python3"
  "python3-matplotlib:/usr/lib/python3/dist-packages/matplotlib/__init__.py"
  "dosfstools:/usr/sbin/mkfs.fat"
  "mtools:/usr/bin/mcopy"
)
if [ "$mode" = x86_64 ]; then
  need+=(
    "qemu-system-x86:/usr/bin/qemu-system-x86_64"
    "newlib-source:/usr/src/newlib/newlib-3.3.0.tar.xz"
    "xz-utils:/usr/bin/xz"
  )
fi
if [ "$mode" = linux ]; then
  need+=(
    "gcc-riscv64-linux-gnu:/usr/bin/riscv64-linux-gnu-gcc"
    "libc6-dev-riscv64-cross:/usr/riscv64-linux-gnu/lib/libc.a"
    "e2fsprogs:/sbin/mkfs.ext4"
    "dosfstools:/sbin/mkfs.vfat"
    "f2fs-tools:/sbin/mkfs.f2fs"
    "nilfs-tools:/sbin/mkfs.nilfs2"
    "dpkg:/usr/bin/dpkg-deb"
    "curl:/usr/bin/curl"
    "ca-certificates:/etc/ssl/certs/ca-certificates.crt"
  )
fi

missing=()
for entry in "${need[@]}"; do
  pkg=${entry%%:*}
  probe=${entry#*:}
  [ -e "$probe" ] || missing+=("$pkg")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps.sh: installing ${missing[*]}" >&2
  if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "deps.sh: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ "$mode" = x86_64 ]; then
  exec "$(dirname "$0")/newlib.sh"
fi
[ "$mode" = linux ] || exit 0

# mkfs.nilfs2 refuses to run without /etc/mtab (it looks there to see whether
# the device is mounted).  A booted Debian has it as a link to the kernel's
# list of mounts; a bare chroot or container may not: make that same link.
if [ ! -e /etc/mtab ]; then
  echo "deps.sh: /etc/mtab is missing (mkfs.nilfs2 needs it): linking it to /proc/self/mounts" >&2
  if [ "$(id -u)" -eq 0 ]; then
    ln -sf ../proc/self/mounts /etc/mtab
  elif command -v sudo >/dev/null 2>&1; then
    sudo ln -sf ../proc/self/mounts /etc/mtab
  else
    echo "deps.sh: need root or sudo to make /etc/mtab" >&2
    exit 1
  fi
fi

# ---- the Linux guest: Debian trixie's riscv64 kernel and busybox ------------
# Pinned: the .deb's file in Debian's pool, its SHA-256 (checked; a mismatch
# is an error) and its SHA-1 (snapshot.debian.org serves every file Debian
# ever published by SHA-1, for when the mirror no longer has this version).
# The kernel package's "vmlinux" is the flat RISC-V Image, which QEMU loads
# as it is; its modules (virtio, the file systems) are loaded by the guest's
# /init, in the order tools/linux/initramfs.py works out.
LINUX_KVER=6.12.107+deb13-riscv64
debs=(
  "pool/main/l/linux/linux-image-6.12.107+deb13-riscv64_6.12.107-1_riscv64.deb abe9f65d74b434692149482b031db7a2aaf832921e09f69f775293c0e0c5799c 4c9f0c70d859cec6576086addbf6ad5411e03592 kernel"
  "pool/main/b/busybox/busybox-static_1.37.0-6+b9_riscv64.deb 4add476d2b185c5b487c285b38d790f0881a7e4a8e2ddde835f917e770eb8633 99c4ef8c51649d85f9b15190033af3aa189a6ddf busybox"
)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${LINUX_CACHE:-$HOME/.cache/exodisk/linux}
mkdir -p "$cache/debs"

sha256_ok() { echo "$2  $1" | sha256sum -c --status 2>/dev/null; }

# fetch POOLPATH SHA256 SHA1: the verified .deb in the cache.
fetch() {
  local f="$cache/debs/${1##*/}" url
  sha256_ok "$f" "$2" && return 0
  rm -f "$f"
  for url in "$mirror/$1" "https://snapshot.debian.org/file/$3"; do
    echo "deps.sh: downloading $url" >&2
    if curl -fsSL --connect-timeout 20 --max-time 1200 --retry 2 -o "$f.part" "$url"; then
      if sha256_ok "$f.part" "$2"; then
        mv -f "$f.part" "$f"
        return 0
      fi
      echo "deps.sh: $url: SHA-256 is not the pinned $2; not using it" >&2
    fi
    rm -f "$f.part"
  done
  echo "deps.sh: could not fetch ${1##*/} (pinned SHA-256 $2); set DEBIAN_MIRROR, or put the file in $cache/debs" >&2
  return 1
}

# Unpack each package once into $cache/NAME (re-done when its .deb changes);
# manifest.txt says where the pieces are, for tools/linux/.
for d in "${debs[@]}"; do
  read -r pool sha256 sha1 name <<<"$d"
  fetch "$pool" "$sha256" "$sha1"
  deb="$cache/debs/${pool##*/}"
  dir="$cache/$name"
  if [ "$(cat "$dir/.from" 2>/dev/null)" != "$sha256" ]; then
    echo "deps.sh: unpacking ${pool##*/}" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    dpkg-deb -x "$deb" "$dir"
    echo "$sha256" > "$dir/.from"
  fi
done

image="$cache/kernel/boot/vmlinux-$LINUX_KVER"
modules="$cache/kernel/usr/lib/modules/$LINUX_KVER"
busybox="$cache/busybox/usr/bin/busybox"
[ -x "$busybox" ] || busybox="$cache/busybox/bin/busybox"
for f in "$image" "$modules/modules.builtin" "$busybox"; do
  if [ ! -e "$f" ]; then
    echo "deps.sh: $f is missing after unpacking; remove $cache and run again" >&2
    exit 1
  fi
done
{
  echo "kernel_version $LINUX_KVER"
  echo "image $image"
  echo "modules $modules"
  echo "busybox $busybox"
  for d in "${debs[@]}"; do
    read -r pool sha256 _ _ <<<"$d"
    echo "deb ${pool##*/} $sha256"
  done
} > "$cache/manifest.txt.new"
mv -f "$cache/manifest.txt.new" "$cache/manifest.txt"
