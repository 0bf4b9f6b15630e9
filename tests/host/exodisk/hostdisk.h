/*
 * hostdisk.h - a block device for exodisk host tests and tools: sectors in
 * host memory (optionally loaded from and saved to an image file), with the
 * behaviour of a real disk that matters for crash safety:
 *
 *  - a volatile write cache: a completed write without FUA is only in the
 *    cache until a FLUSH; at a simulated crash each cached sector
 *    independently did or did not reach the medium;
 *  - requests in flight at a crash may have been partly written, sector by
 *    sector, in any combination;
 *  - in polled mode, requests complete when the block layer polls, several
 *    at a time and in random order.
 *
 * It also counts requests and sectors (for the recovery benchmark) and can
 * fail a chosen request with BLK_E_IO.
 *
 * Storage is kept in chunks of HD_CHUNK sectors, made when first written,
 * so a 16 TiB disk costs what is written to it.  A disk of at most
 * HD_FLAT_MAX sectors keeps its medium, cache and cached flags as flat
 * arrays too (medium[], cache[], cached[]) for tests that poke at them; a
 * larger one has them NULL (use hostdisk_medium_sector()).  An image file
 * (tools/exotool) is read chunk by chunk as the disk is used, and saving
 * writes back only the chunks that changed.
 */
#ifndef TESTS_EXODISK_HOSTDISK_H
#define TESTS_EXODISK_HOSTDISK_H

#include <stdint.h>
#include <stdbool.h>
#include "drivers/blk.h"

#define HD_SYNC    0    /* complete inside start() */
#define HD_POLLED  1    /* complete from poll(), randomly ordered */
#define HD_MAXQ    64
#define HD_CHUNK   256ull                 /* sectors per chunk (128 KiB) */
#define HD_FLAT_MAX (8ull << 20)          /* flat arrays up to 4 GiB disks */

struct hd_chunk;

struct hostdisk {
	uint8_t *medium;          /* what survives a crash (flat disks) */
	uint8_t *cache;           /* newer data of cached sectors (flat disks) */
	uint8_t *cached;          /* per sector: the cache holds a newer copy (flat disks) */
	struct hd_chunk ***chunks;   /* per chunk: medium and cache, made when first used */
	uint64_t nchunks;
	struct hd_chunk *cache_list; /* chunks holding cached sectors */
	int      fd;              /* image file read on demand (hostdisk_load), or -1 */
	uint64_t nsectors;
	int mode;
	bool write_cache;
	bool crashed;             /* after a crash nothing more happens */
	int unit;
	uint64_t rng;
	struct blkreq *q[HD_MAXQ];
	int nq;
	int64_t fail_countdown;   /* fail the request that brings this to 0; <0 never */
	bool fail_fua;            /* fail the next FUA write (a log record), once */
	bool fail_lands;          /* a write failed on purpose is made all the same
	                           * (a device may report an error for a write it did) */
	/* A media error: reads that touch sectors bad_lo .. bad_lo+bad_n-1 fail
	 * with BLK_E_IO, bad_left more times (<0: always).  It stays across
	 * reattach (a reboot); bad_n = 0 turns it off. */
	uint64_t bad_lo, bad_n;
	int64_t bad_left;
	int64_t die_countdown;    /* crash when this many more requests have started; <0 never */
	bool dead;                /* crashed by die_countdown: every request fails */
	int crash_keep;           /* what a crash keeps of the volatile cache: */
#define HD_KEEP_RANDOM 0      /*   each sector or not, by chance (default)  */
#define HD_KEEP_NONE   1      /*   nothing: every unflushed write is lost   */
	struct blkdev_info info;
	/* counters */
	uint64_t nreq, nread, nwrite, nflush, sect_read, sect_written, nfua;
	/* called for every request as it completes (the recovery benchmark
	 * times them with the disk model) */
	void (*on_request)(void *arg, const struct blkreq *r);
	void *on_arg;
};

/* Make an empty (zeroed) disk and register it; returns the unit or <0. */
int  hostdisk_init(struct hostdisk *hd, uint64_t nsectors, int mode, bool write_cache,
                   uint64_t seed);
/* Re-register a disk (after blk_reset), keeping its medium: a reboot. */
int  hostdisk_reattach(struct hostdisk *hd);
/* A power failure: in-flight and cached writes land or not, sector by
 * sector; pending requests never complete.  Reattach to use it again. */
void hostdisk_crash(struct hostdisk *hd);
void hostdisk_free(struct hostdisk *hd);
/* Direct access to what a read would return now / what the medium holds
 * (both make the chunk if it is not there yet). */
uint8_t *hostdisk_sector(struct hostdisk *hd, uint64_t s);
uint8_t *hostdisk_medium_sector(struct hostdisk *hd, uint64_t s);
bool hostdisk_is_cached(struct hostdisk *hd, uint64_t s);
/* Bytes of host memory the disk's chunks take (for big-disk tests). */
uint64_t hostdisk_footprint(const struct hostdisk *hd);
void hostdisk_reset_counts(struct hostdisk *hd);
/* Image files (tools/exotool): load makes the file the medium (read as
 * needed); save writes what changed back to it, or to a new file (sparse:
 * only what was written). */
int  hostdisk_load(struct hostdisk *hd, const char *path);
int  hostdisk_save(struct hostdisk *hd, const char *path);

#endif
