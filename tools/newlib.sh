#!/usr/bin/env bash
# newlib.sh - build the C library of the x86-64 guest programs from Debian's
# newlib-source package, once, into a cache outside the build tree.
#
#   tools/newlib.sh          build if needed (tools/deps.sh x86_64 calls this)
#   tools/newlib.sh --print  print the install directory
#
# Debian ships a packaged bare-metal libc only for riscv64 (picolibc); for
# x86-64 it ships newlib's source (/usr/src/newlib/newlib-3.3.0.tar.xz).
# This script configures newlib for a bare x86_64-elf target and compiles it
# with the host's gcc, freestanding: no glibc header or library is seen (the
# compiler is run with -nostdinc and gets only newlib's headers and its own
# freestanding ones), position-independent code so programs may be linked at
# 4 GiB (kernel/uapi/layout.h), no stack protector, no system-call stubs (the
# library OS supplies _read, _write, _sbrk, ... : libos/libc_newlib.c), one
# thread.  The result goes to $NEWLIB_CACHE (default
# ~/.cache/exodisk/newlib-VERSION-x86_64): include/, lib/libc.a, lib/libm.a,
# and gcc-include, a link to the compiler's freestanding headers (the
# Makefile compiles programs with -nostdinc and these two directories).
#
# Reproducible: the same source tarball, flags and compiler give the same
# library; a stamp records all three, and the library is rebuilt when any
# of them changes.  The build takes a few minutes (make -j2); afterwards the
# script only checks the stamp.
set -euo pipefail

version=3.3.0
tarball=/usr/src/newlib/newlib-$version.tar.xz
cache=${NEWLIB_CACHE:-$HOME/.cache/exodisk/newlib-$version-x86_64}

if [ "${1:-}" = --print ]; then
  echo "$cache"
  exit 0
fi

gccinc=$(gcc -print-file-name=include)
target_cflags="-O2 -g -fPIE -fno-stack-protector -fno-asynchronous-unwind-tables \
-ffunction-sections -fdata-sections -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=0"
configure_flags=(
  --target=x86_64-elf
  --prefix="$cache/prefix"
  --disable-multilib
  --disable-nls
  --disable-newlib-supplied-syscalls
  --disable-newlib-multithread
  --enable-newlib-io-long-long
  --enable-newlib-io-c99-formats
  --enable-newlib-register-fini
)

# What the library depends on: the source, the flags, the compiler.
stamp_text() {
  sha256sum "$tarball" | cut -d' ' -f1
  echo "$target_cflags ${configure_flags[*]}"
  gcc --version | head -n 1
}

if [ ! -r "$tarball" ]; then
  echo "newlib.sh: $tarball is missing (Debian package newlib-source; tools/deps.sh installs it)" >&2
  exit 1
fi
want=$(stamp_text)
if [ -f "$cache/stamp" ] && [ "$(cat "$cache/stamp")" = "$want" ] &&
   [ -f "$cache/lib/libc.a" ] && [ -d "$cache/gcc-include" ]; then
  exit 0
fi

echo "newlib.sh: building newlib $version for x86-64 guest programs into $cache (a few minutes, once)" >&2
rm -rf "$cache"
mkdir -p "$cache/src" "$cache/obj"
tar -xJf "$tarball" -C "$cache/src"
# Debian's tarball unpacks into a directory of its own naming.
srcdir=$(find "$cache/src" -mindepth 2 -maxdepth 2 -name configure -printf '%h\n' | head -n 1)
log="$cache/build.log"

# The target tools are the host's: gcc with no system headers, binutils.
cc="gcc -nostdinc -isystem $gccinc"
(
  cd "$cache/obj"
  "$srcdir/configure" "${configure_flags[@]}" \
    CC_FOR_TARGET="$cc" CXX_FOR_TARGET=false GCC_FOR_TARGET="$cc" \
    AR_FOR_TARGET=ar AS_FOR_TARGET=as LD_FOR_TARGET=ld NM_FOR_TARGET=nm \
    RANLIB_FOR_TARGET=ranlib OBJDUMP_FOR_TARGET=objdump READELF_FOR_TARGET=readelf \
    STRIP_FOR_TARGET=strip CFLAGS_FOR_TARGET="$target_cflags"
  make -j2 all-target-newlib
  make install-target-newlib
) > "$log" 2>&1 || {
  echo "newlib.sh: the build failed; the end of $log:" >&2
  tail -n 30 "$log" >&2
  exit 1
}

# Flatten the install: include/ and lib/ at the top.
mv "$cache/prefix/x86_64-elf/include" "$cache/include"
mkdir -p "$cache/lib"
mv "$cache/prefix/x86_64-elf/lib/libc.a" "$cache/prefix/x86_64-elf/lib/libm.a" "$cache/lib/"
rm -rf "$cache/prefix" "$cache/obj" "$cache/src"

# The compiler's own freestanding headers (stddef.h, stdarg.h, ...), which
# programs get beside newlib's and nothing else: the Makefile names the
# directory through this link (never asking gcc while it parses).
ln -sfn "$gccinc" "$cache/gcc-include"
echo "$want" > "$cache/stamp"
echo "newlib.sh: done: $cache/lib/libc.a" >&2
