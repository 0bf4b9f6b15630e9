/*
 * crc32c.h - CRC-32C (Castagnoli): reflected polynomial 0x82F63B78,
 * initial value and final XOR 0xFFFFFFFF - the checksum of iSCSI, SCTP,
 * ext4 and btrfs.  The one implementation every part of the system uses:
 * unixfs's directory blocks, fatfs's metadata checksums, and the host
 * tools that check their images (they link the same file).
 *
 * Portable C11: guest programs, host tests and tools.
 */
#ifndef LIBOS_CRC32C_H
#define LIBOS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The CRC of n bytes at p, continuing from crc (0 to start): so
 * crc32c(crc32c(0, a, n), b, m) is the CRC of a followed by b. */
uint32_t crc32c(uint32_t crc, const void *p, size_t n);

#endif
