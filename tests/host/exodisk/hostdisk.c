/*
 * hostdisk.c - the host test disk (see hostdisk.h).  Data moves when a
 * request completes, as on a real device: a read returns the newest data
 * (cache over medium), a write goes to the cache unless it is FUA or the
 * cache is off, and a FLUSH empties the cache onto the medium.
 *
 * Sectors live in chunks of HD_CHUNK, found through a two-level table and
 * made when first touched (read from the image file, if there is one), so
 * a disk costs memory for what is used of it.  Chunks that hold cached
 * sectors are on a list, which flushes and crashes walk.
 */
#define _POSIX_C_SOURCE 200809L
#include "tests/host/exodisk/hostdisk.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECT       BLK_SECTOR_SIZE
#define PER_TABLE  4096ull            /* chunk pointers per second-level table */

struct hd_chunk {
	uint8_t *data;            /* the medium's HD_CHUNK sectors */
	uint8_t *cdata;           /* the cache's copies, or NULL */
	uint8_t *cflag;           /* per sector: the cache holds a newer copy */
	uint32_t ncached;
	bool     flat;            /* the pointers are into the flat arrays */
	bool     dirty;           /* the medium changed since loaded or saved */
	bool     listed;          /* on cache_list */
	struct hd_chunk *cnext;
	uint64_t index;
};

static uint64_t rnd(struct hostdisk *hd)
{
	/* xorshift64*: plenty for choosing crash outcomes and orders. */
	hd->rng ^= hd->rng >> 12;
	hd->rng ^= hd->rng << 25;
	hd->rng ^= hd->rng >> 27;
	return hd->rng * 2685821657736338717ull;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (p == NULL) {
		fprintf(stderr, "hostdisk: out of memory\n");
		exit(1);
	}
	return p;
}

static uint64_t chunk_sectors(const struct hostdisk *hd, uint64_t ci)
{
	uint64_t first = ci * HD_CHUNK;
	return hd->nsectors - first < HD_CHUNK ? hd->nsectors - first : HD_CHUNK;
}

/* Chunk ci, made (and read from the image file) if it is not there yet. */
static struct hd_chunk *chunk(struct hostdisk *hd, uint64_t ci)
{
	struct hd_chunk ***top = &hd->chunks[ci / PER_TABLE];
	if (*top == NULL)
		*top = xcalloc(PER_TABLE, sizeof(**top));
	struct hd_chunk **slot = &(*top)[ci % PER_TABLE];
	if (*slot != NULL)
		return *slot;
	struct hd_chunk *c = xcalloc(1, sizeof(*c));
	c->index = ci;
	if (hd->medium != NULL) {
		c->flat = true;
		c->data = hd->medium + ci * HD_CHUNK * SECT;
	} else {
		c->data = xcalloc(HD_CHUNK, SECT);
	}
	if (hd->fd >= 0) {
		size_t len = chunk_sectors(hd, ci) * SECT;
		ssize_t n = pread(hd->fd, c->data, len, (off_t)(ci * HD_CHUNK * SECT));
		if (n < 0 || (size_t)n != len) {
			fprintf(stderr, "hostdisk: cannot read the image at sector %llu\n",
			        (unsigned long long)(ci * HD_CHUNK));
			exit(1);
		}
	}
	*slot = c;
	return c;
}

static void chunk_cache(struct hostdisk *hd, struct hd_chunk *c)
{
	if (c->cdata != NULL)
		return;
	if (c->flat) {
		c->cdata = hd->cache + c->index * HD_CHUNK * SECT;
		c->cflag = hd->cached + c->index * HD_CHUNK;
	} else {
		c->cdata = xcalloc(HD_CHUNK, SECT);
		c->cflag = xcalloc(HD_CHUNK, 1);
	}
}

uint8_t *hostdisk_sector(struct hostdisk *hd, uint64_t s)
{
	struct hd_chunk *c = chunk(hd, s / HD_CHUNK);
	uint64_t off = s % HD_CHUNK;
	if (c->cflag != NULL && c->cflag[off])
		return c->cdata + off * SECT;
	return c->data + off * SECT;
}

uint8_t *hostdisk_medium_sector(struct hostdisk *hd, uint64_t s)
{
	return chunk(hd, s / HD_CHUNK)->data + (s % HD_CHUNK) * SECT;
}

bool hostdisk_is_cached(struct hostdisk *hd, uint64_t s)
{
	struct hd_chunk *c = chunk(hd, s / HD_CHUNK);
	return c->cflag != NULL && c->cflag[s % HD_CHUNK];
}

static void put_sector(struct hostdisk *hd, uint64_t s, const uint8_t *src, bool durable)
{
	struct hd_chunk *c = chunk(hd, s / HD_CHUNK);
	uint64_t off = s % HD_CHUNK;
	if (durable || !hd->write_cache) {
		memcpy(c->data + off * SECT, src, SECT);
		c->dirty = true;
		if (c->cflag != NULL && c->cflag[off]) {
			c->cflag[off] = 0;
			c->ncached--;
		}
		return;
	}
	chunk_cache(hd, c);
	memcpy(c->cdata + off * SECT, src, SECT);
	if (!c->cflag[off]) {
		c->cflag[off] = 1;
		c->ncached++;
	}
	if (!c->listed) {
		c->listed = true;
		c->cnext = hd->cache_list;
		hd->cache_list = c;
	}
}

/* Every cached sector lands (land = NULL) or each lands with probability
 * 1/2 (a crash); the cache is then empty. */
static void drain_cache(struct hostdisk *hd, bool crash)
{
	for (struct hd_chunk *c = hd->cache_list; c != NULL; c = c->cnext) {
		for (uint64_t off = 0; off < HD_CHUNK && c->ncached > 0; off++) {
			if (!c->cflag[off])
				continue;
			/* A crash keeps each sector by chance, or none of them. */
			if (!crash || (hd->crash_keep == HD_KEEP_RANDOM && (rnd(hd) & 1))) {
				memcpy(c->data + off * SECT, c->cdata + off * SECT, SECT);
				c->dirty = true;
			}
			c->cflag[off] = 0;
			c->ncached--;
		}
		c->listed = false;
	}
	hd->cache_list = NULL;
}

/* Move one request's data between its segments and the disk. */
static void transfer(struct hostdisk *hd, struct blkreq *r)
{
	uint64_t s = r->sector;
	uint32_t off = 0;       /* within the current sector */
	uint8_t buf[SECT];
	for (uint32_t i = 0; i < r->nseg; i++) {
		uint8_t *p = blk_seg_ptr(r->seg[i].addr);
		uint32_t left = r->seg[i].len;
		while (left > 0) {
			uint32_t k = SECT - off < left ? SECT - off : left;
			if (r->op == BLK_READ) {
				memcpy(p, hostdisk_sector(hd, s) + off, k);
			} else {
				if (off == 0 && k < SECT)
					memcpy(buf, hostdisk_sector(hd, s), SECT);
				memcpy(buf + off, p, k);
				if (off + k == SECT)
					put_sector(hd, s, buf, r->flags & BLK_F_FUA);
			}
			p += k;
			left -= k;
			off += k;
			if (off == SECT) {
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
	if (hd->fail_fua && r->op == BLK_WRITE && (r->flags & BLK_F_FUA)) {
		hd->fail_fua = false;
		status = BLK_E_IO;
	}
	if (r->op == BLK_READ && hd->bad_n > 0 && hd->bad_left != 0 &&
	    r->sector < hd->bad_lo + hd->bad_n && hd->bad_lo < r->sector + r->nsectors) {
		status = BLK_E_IO;
		if (hd->bad_left > 0)
			hd->bad_left--;
	}
	if (status == 0) {
		if (r->op == BLK_FLUSH)
			drain_cache(hd, false);
		else
			transfer(hd, r);
	} else if (hd->fail_lands && r->op == BLK_WRITE) {
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
	hd->fd = -1;
	hd->nsectors = nsectors;
	hd->mode = mode;
	hd->write_cache = write_cache;
	hd->rng = seed ? seed : 88172645463325252ull;
	hd->fail_countdown = -1;
	hd->die_countdown = -1;
	hd->nchunks = (nsectors + HD_CHUNK - 1) / HD_CHUNK;
	hd->chunks = calloc(hd->nchunks / PER_TABLE + 1, sizeof(*hd->chunks));
	if (hd->chunks == NULL)
		return -1;
	if (nsectors <= HD_FLAT_MAX) {
		uint64_t n = hd->nchunks * HD_CHUNK;
		hd->medium = calloc(n, SECT);
		hd->cache = calloc(n, SECT);
		hd->cached = calloc(n, 1);
		if (!hd->medium || !hd->cache || !hd->cached)
			return -1;
	}
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
	drain_cache(hd, true);
	hd->nq = 0;
	hd->crashed = true;
}

void hostdisk_free(struct hostdisk *hd)
{
	for (uint64_t t = 0; hd->chunks != NULL && t <= hd->nchunks / PER_TABLE; t++) {
		if (hd->chunks[t] == NULL)
			continue;
		for (uint64_t i = 0; i < PER_TABLE; i++) {
			struct hd_chunk *c = hd->chunks[t][i];
			if (c == NULL)
				continue;
			if (!c->flat) {
				free(c->data);
				free(c->cdata);
				free(c->cflag);
			}
			free(c);
		}
		free(hd->chunks[t]);
	}
	free(hd->chunks);
	free(hd->medium);
	free(hd->cache);
	free(hd->cached);
	if (hd->fd >= 0)
		close(hd->fd);
	memset(hd, 0, sizeof(*hd));
	hd->fd = -1;
}

uint64_t hostdisk_footprint(const struct hostdisk *hd)
{
	uint64_t bytes = 0;
	for (uint64_t t = 0; hd->chunks != NULL && t <= hd->nchunks / PER_TABLE; t++) {
		if (hd->chunks[t] == NULL)
			continue;
		bytes += PER_TABLE * sizeof(void *);
		for (uint64_t i = 0; i < PER_TABLE; i++) {
			const struct hd_chunk *c = hd->chunks[t][i];
			if (c != NULL)
				bytes += sizeof(*c) + HD_CHUNK * SECT * (1 + (c->cdata != NULL));
		}
	}
	return bytes;
}

void hostdisk_reset_counts(struct hostdisk *hd)
{
	hd->nreq = hd->nread = hd->nwrite = hd->nflush = hd->sect_read = hd->sect_written = 0;
	hd->nfua = 0;
}

int hostdisk_load(struct hostdisk *hd, const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_size < hd->nsectors * SECT) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (hd->fd >= 0)
		close(hd->fd);
	hd->fd = fd;
	return 0;
}

static bool same_file(int fd, const char *path)
{
	struct stat a, b;
	return fd >= 0 && fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int hostdisk_save(struct hostdisk *hd, const char *path)
{
	drain_cache(hd, false);
	bool same = same_file(hd->fd, path);
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return -1;
	int err = 0;
	if (!same && ftruncate(fd, 0) != 0)
		err = -1;
	for (uint64_t ci = 0; err == 0 && ci < hd->nchunks; ci++) {
		struct hd_chunk **tab = hd->chunks[ci / PER_TABLE];
		struct hd_chunk *c = tab != NULL ? tab[ci % PER_TABLE] : NULL;
		/* Another file: every chunk there is (the image's, read now). */
		if (c == NULL && !same && hd->fd >= 0)
			c = chunk(hd, ci);
		if (c == NULL || (same && !c->dirty))
			continue;
		size_t len = chunk_sectors(hd, ci) * SECT;
		if (pwrite(fd, c->data, len, (off_t)(ci * HD_CHUNK * SECT)) != (ssize_t)len)
			err = -1;
		c->dirty = false;
	}
	if (err == 0 && ftruncate(fd, (off_t)(hd->nsectors * SECT)) != 0)
		err = -1;
	if (close(fd) != 0)
		err = -1;
	return err;
}
