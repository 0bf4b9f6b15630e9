/*
 * csum.c - the checksum of unixfs directory blocks: CRC-32C
 * (libos/crc32c.h) over the block with its own checksum field as zeros.
 */
#include "libos/crc32c.h"
#include "userfs/unixfs/ufs.h"

uint32_t ufs_dblk_csum(const uint8_t *blk)
{
	/* The header's csum field (bytes 4..7) counts as zero. */
	static const uint8_t zero[4];
	uint32_t c = crc32c(0, blk, 4);
	c = crc32c(c, zero, 4);
	return crc32c(c, blk + 8, UFS_BSIZE - 8);
}
