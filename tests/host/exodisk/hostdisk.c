/*
 * hostdisk.c - the host test disk (see hostdisk.h).  Data moves when a
 * request completes, as on a real device: a read returns the newest data
 * (cache over medium), a write goes to the cache unless it is FUA or the
 * cache is off, and a FLUSH empties the cache onto the medium.
 */
#define _POSIX_C_SOURCE 200809L
#include "tests/host/exodisk/hostdisk.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rnd(struct hostdisk *hd)
{
	/* xorshift64*: plenty for choosing crash outcomes and orders. */
	hd->rng ^= hd->rng >> 12;
	hd->rng ^= hd->rng << 25;
	hd->rng ^= hd->rng >> 27;
	return hd->rng * 2685821657736338717ull;
}

uint8_t *hostdisk_sector(struct hostdisk *hd, uint64_t s)
{
	return hd->cached[s] ? hd->cache + s * BLK_SECTOR_SIZE : hd->medium + s * BLK_SECTOR_SIZE;
}

static void put_sector(struct hostdisk *hd, uint64_t s, const uint8_t *src, bool durable)
{
	if (durable || !hd->write_cache) {
		memcpy(hd->medium + s * BLK_SECTOR_SIZE, src, BLK_SECTOR_SIZE);
		hd->cached[s] = 0;
	} else {
		memcpy(hd->cache + s * BLK_SECTOR_SIZE, src, BLK_SECTOR_SIZE);
		hd->cached[s] = 1;
	}
}

static void flush_cache(struct hostdisk *hd)
{
	for (uint64_t s = 0; s < hd->nsectors; s++)
		if (hd->cached[s]) {
			memcpy(hd->medium + s * BLK_SECTOR_SIZE, hd->cache + s * BLK_SECTOR_SIZE,
			       BLK_SECTOR_SIZE);
			hd->cached[s] = 0;
		}
}

/* Move one request's data between its segments and the disk. */
static void transfer(struct hostdisk *hd, struct blkreq *r)
{
	uint64_t s = r->sector;
	uint32_t off = 0;       /* within the current sector */
	uint8_t buf[BLK_SECTOR_SIZE];
	for (uint32_t i = 0; i < r->nseg; i++) {
		uint8_t *p = blk_seg_ptr(r->seg[i].addr);
		uint32_t left = r->seg[i].len;
		while (left > 0) {
			uint32_t k = BLK_SECTOR_SIZE - off < left ? BLK_SECTOR_SIZE - off : left;
			if (r->op == BLK_READ) {
				memcpy(p, hostdisk_sector(hd, s) + off, k);
			} else {
				if (off == 0)
					memcpy(buf, hostdisk_sector(hd, s), BLK_SECTOR_SIZE);
				memcpy(buf + off, p, k);
				if (off + k == BLK_SECTOR_SIZE)
					put_sector(hd, s, buf, r->flags & BLK_F_FUA);
			}
			p += k;
			left -= k;
			off += k;
			if (off == BLK_SECTOR_SIZE) {
				off = 0;
				s++;
			}
		}
	}
}

static void finish(struct hostdisk *hd, struct blkreq *r)
{
	int status = 0;
	if (hd->fail_countdown >= 0 && hd->fail_countdown-- == 0)
		status = BLK_E_IO;
	if (status == 0) {
		if (r->op == BLK_FLUSH)
			flush_cache(hd);
		else
			transfer(hd, r);
	}
	if (r->op == BLK_READ) {
		hd->nread++;
		hd->sect_read += r->nsectors;
	} else if (r->op == BLK_WRITE) {
		hd->nwrite++;
		hd->nfua += (r->flags & BLK_F_FUA) != 0;
		hd->sect_written += r->nsectors;
	} else {
		hd->nflush++;
	}
	hd->nreq++;
	if (hd->on_request != NULL)
		hd->on_request(hd->on_arg, r);
	blk_complete(r, status);
}

static int hd_start(void *dev, struct blkreq *r)
{
	struct hostdisk *hd = dev;
	if (hd->die_countdown >= 0 && hd->die_countdown-- == 0) {
		/* Power fails now (say, during recovery); the code that is still
		 * running sees every request fail from here on, including those
		 * the device was holding. */
		struct blkreq *held[HD_MAXQ];
		int n = hd->nq;
		memcpy(held, hd->q, sizeof(held));
		hostdisk_crash(hd);
		hd->crashed = false;
		hd->dead = true;
		for (int i = 0; i < n; i++)
			blk_complete(held[i], BLK_E_IO);
	}
	if (hd->dead) {
		blk_complete(r, BLK_E_IO);
		return 0;
	}
	if (hd->crashed) {
		/* Powered off: the request is simply never done. */
		if (hd->nq < HD_MAXQ)
			hd->q[hd->nq++] = r;
		return 0;
	}
	if (hd->mode == HD_SYNC) {
		finish(hd, r);
		return 0;
	}
	if (hd->nq == HD_MAXQ)
		return BLK_E_QFULL;
	hd->q[hd->nq++] = r;
	return 0;
}

static void hd_poll(void *dev)
{
	struct hostdisk *hd = dev;
	if (hd->crashed || hd->nq == 0)
		return;
	/* Complete a random number of the requests held, in random order. */
	int n = 1 + (int)(rnd(hd) % (uint64_t)hd->nq);
	for (int i = 0; i < n && hd->nq > 0; i++) {
		int k = (int)(rnd(hd) % (uint64_t)hd->nq);
		struct blkreq *r = hd->q[k];
		hd->q[k] = hd->q[--hd->nq];
		finish(hd, r);
	}
}

static const struct blkdev_ops hd_ops = { hd_start, hd_poll };

int hostdisk_reattach(struct hostdisk *hd)
{
	hd->crashed = false;
	hd->dead = false;
	hd->die_countdown = -1;
	hd->nq = 0;
	hd->info.nsectors = hd->nsectors;
	hd->info.max_inflight = HD_MAXQ;
	hd->info.name = "hostdisk";
	hd->unit = blk_register(&hd_ops, hd, &hd->info);
	if (hd->unit >= 0)
		blk_set_depth(hd->unit, hd->mode == HD_POLLED ? 8 : 1);
	return hd->unit;
}

int hostdisk_init(struct hostdisk *hd, uint64_t nsectors, int mode, bool write_cache,
                  uint64_t seed)
{
	memset(hd, 0, sizeof(*hd));
	hd->nsectors = nsectors;
	hd->mode = mode;
	hd->write_cache = write_cache;
	hd->rng = seed ? seed : 88172645463325252ull;
	hd->fail_countdown = -1;
	hd->die_countdown = -1;
	hd->medium = calloc(nsectors, BLK_SECTOR_SIZE);
	hd->cache = calloc(nsectors, BLK_SECTOR_SIZE);
	hd->cached = calloc(nsectors, 1);
	if (!hd->medium || !hd->cache || !hd->cached)
		return -1;
	return hostdisk_reattach(hd);
}

void hostdisk_crash(struct hostdisk *hd)
{
	/* A write in flight may have landed in part: put it through the cache
	 * (FUA or not), whose sectors then each land or not. */
	bool saved = hd->write_cache;
	hd->write_cache = true;
	for (int i = 0; i < hd->nq; i++) {
		struct blkreq *r = hd->q[i];
		if (r->op == BLK_WRITE) {
			r->flags &= ~BLK_F_FUA;
			transfer(hd, r);
		}
	}
	hd->write_cache = saved;
	for (uint64_t s = 0; s < hd->nsectors; s++)
		if (hd->cached[s]) {
			if (hd->crash_keep == HD_KEEP_RANDOM && (rnd(hd) & 1))
				memcpy(hd->medium + s * BLK_SECTOR_SIZE, hd->cache + s * BLK_SECTOR_SIZE,
				       BLK_SECTOR_SIZE);
			hd->cached[s] = 0;
		}
	hd->nq = 0;
	hd->crashed = true;
}

void hostdisk_free(struct hostdisk *hd)
{
	free(hd->medium);
	free(hd->cache);
	free(hd->cached);
	memset(hd, 0, sizeof(*hd));
}

void hostdisk_reset_counts(struct hostdisk *hd)
{
	hd->nreq = hd->nread = hd->nwrite = hd->nflush = hd->sect_read = hd->sect_written = 0;
	hd->nfua = 0;
}

int hostdisk_load(struct hostdisk *hd, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return -1;
	size_t n = fread(hd->medium, BLK_SECTOR_SIZE, hd->nsectors, f);
	fclose(f);
	return n == hd->nsectors ? 0 : -1;
}

int hostdisk_save(struct hostdisk *hd, const char *path)
{
	flush_cache(hd);
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	size_t n = fwrite(hd->medium, BLK_SECTOR_SIZE, hd->nsectors, f);
	int e = fclose(f);
	return n == hd->nsectors && e == 0 ? 0 : -1;
}
