#!/usr/bin/env bash
# deps.sh - install what building, booting and testing exodisk needs.
#
# Called by `make qemu`, `make test` and `make bench` before they do anything
# else.  It is quick when everything is present (it only checks), and on a
# fresh Debian 12 machine it installs the missing packages with apt-get,
# through sudo when not root.  Set EXODISK_NO_DEPS=1 to skip it entirely.
set -euo pipefail

[ "${EXODISK_NO_DEPS:-0}" = 1 ] && exit 0

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
)

missing=()
for entry in "${need[@]}"; do
  pkg=${entry%%:*}
  probe=${entry#*:}
  [ -e "$probe" ] || missing+=("$pkg")
done

[ ${#missing[@]} -eq 0 ] && exit 0

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
