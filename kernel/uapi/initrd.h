/*
 * initrd.h - the format of the initial RAM disk that carries the programs
 * (built by tools/mkinitrd, loaded by QEMU -initrd, read by kernel/initrd.c).
 *
 *   struct initrd_header, then `count` struct initrd_entry, then file data.
 *   Offsets are from the start of the image; all fields little-endian.
 */
#ifndef UAPI_INITRD_H
#define UAPI_INITRD_H

#include <stdint.h>

#define INITRD_MAGIC    "EXOINIT1"
#define INITRD_NAME_MAX 48

struct initrd_header {
	char     magic[8];
	uint32_t count;
	uint32_t reserved;
};

struct initrd_entry {
	char     name[INITRD_NAME_MAX];   /* e.g. "bin/sh", NUL-padded */
	uint64_t offset;
	uint64_t size;
};

#endif
