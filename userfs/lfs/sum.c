/*
 * sum.c - lfs's checksums.  Two kinds, for two jobs:
 *
 *   lfs_sum64/32  fast, unkeyed: does a block read back as it was written?
 *                 A torn or damaged sector changes it.  Four independent
 *                 lanes of multiply and rotate over 64-bit words, so a
 *                 whole commit's sectors cost little CPU.
 *   lfs_mac       keyed SipHash (the owner's key and the file system's
 *                 id): is this PS header, or checkpoint, one that this file
 *                 system wrote?  Old sectors of another file system, or
 *                 of a program that had the sectors before us (the exodisk
 *                 does not scrub freed sectors), or crafted ones, fail it;
 *                 and every header MACs the previous one's MAC, so no
 *                 other chain can join ours.
 */
#include <string.h>
#include "userfs/lfs/lfs_int.h"
#include "kernel/exodisk/siphash.h"

typedef uint64_t __attribute__((may_alias)) u64a;

#define K1 0x9e3779b97f4a7c15ull
#define K2 0xc2b2ae3d27d4eb4full
#define K3 0x165667b19e3779f9ull
#define K4 0x27d4eb2f165667c5ull

static inline uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= K2;
	h ^= h >> 29;
	h *= K3;
	return h ^ (h >> 32);
}

uint64_t lfs_sum64(const void *p, size_t n, uint64_t seed)
{
	const u64a *w = p;
	size_t m = n / 8, i = 0;
	uint64_t a = seed ^ K1, b = seed ^ K2, c = seed ^ K3, d = seed ^ K4;
	for (; i + 4 <= m; i += 4) {
		a = rotl(a ^ w[i], 31) * K1;
		b = rotl(b ^ w[i + 1], 27) * K1;
		c = rotl(c ^ w[i + 2], 33) * K1;
		d = rotl(d ^ w[i + 3], 29) * K1;
	}
	for (; i < m; i++)
		a = rotl(a ^ w[i], 31) * K1;
	return mix(a ^ rotl(b, 17) ^ rotl(c, 37) ^ rotl(d, 51) ^ n);
}

uint32_t lfs_sum32(const void *p, size_t n)
{
	uint64_t h = lfs_sum64(p, n, 0x6c66735f73756d31ull);
	return (uint32_t)(h ^ (h >> 32));
}

void lfs_derive_keys(struct lfs *fs)
{
	struct siphash s;
	sip_init(&s, fs->k.key.k, true);
	sip_update(&s, "lfs-mac-key", 11);
	sip_update64(&s, fs->sb.fsid);
	sip_final128(&s, fs->mackey);
}

uint64_t lfs_mac(const struct lfs *fs, const void *p, size_t n)
{
	return siphash64(fs->mackey, p, n);
}

void lfs_seal_block(void *blk, uint32_t magic, uint32_t index)
{
	struct lfs_blkhdr *h = blk;
	h->magic = magic;
	h->index = index;
	h->pad = 0;
	h->csum = 0;
	h->csum = lfs_sum32(blk, LFS_BSIZE);
}

int lfs_check_block(const void *blk, uint32_t magic, uint32_t index)
{
	struct lfs_blkhdr h;
	memcpy(&h, blk, sizeof h);
	if (h.magic != magic || h.index != index)
		return 0;
	/* The sum over the block as it was sealed: csum zero. */
	static uint8_t tmp[LFS_BSIZE];
	memcpy(tmp, blk, LFS_BSIZE);
	((struct lfs_blkhdr *)tmp)->csum = 0;
	return lfs_sum32(tmp, LFS_BSIZE) == h.csum;
}

void lfs_inode_seal(struct lfs_dinode *d)
{
	d->csum = 0;
	d->csum = lfs_sum32(d, sizeof *d);
}

int lfs_inode_ok(const struct lfs_dinode *d, uint32_t ino)
{
	struct lfs_dinode t = *d;
	t.csum = 0;
	return d->ino == ino && lfs_sum32(&t, sizeof t) == d->csum;
}

uint64_t lfs_seal(const void *blk, uint32_t magic, uint32_t ino, uint64_t num)
{
	uint64_t h = lfs_sum64(blk, LFS_BSIZE - 8, ((uint64_t)ino << 32) ^ num ^ magic);
	return LFS_SEAL(magic, h ^ (h >> 32));
}

int lfs_sealed(const void *blk, uint32_t magic, uint32_t ino, uint64_t num)
{
	uint64_t s;
	memcpy(&s, (const uint8_t *)blk + LFS_BSIZE - 8, 8);
	return s == lfs_seal(blk, magic, ino, num);
}
