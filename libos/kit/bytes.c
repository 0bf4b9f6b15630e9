/*
 * bytes.c - the byte store: a file's bytes at any offset, on the extents of
 * one exonode.
 *
 * The bytes are the extent entries first, first+1, ... of the exonode, in
 * that order; the exonode's map (kit_xn_map) says where they are, so the
 * store needs nothing stored but the size, which the file system keeps in
 * its own metadata.  Writes go straight to the disk (no cache): whole
 * sectors from the caller's buffer, a partial sector read, changed and
 * written back.  Growing allocates 4 KiB-aligned runs right after the last
 * extent and merges them into it when they are adjacent (an appended file
 * stays one extent), else adds an entry.
 *
 * Holes read as zeros, and this is where a file system most easily leaks
 * another's data: the exodisk does not scrub freed sectors, so a newly
 * allocated run holds whatever was there before - someone else's deleted
 * file, or our own bytes from before a truncate.  Only bytes below the
 * size are ever read, and whenever the size grows past bytes that were
 * never written (a write beyond the end, a truncate upwards) the gap is
 * written with zeros first.  A sector entirely past the size is never read
 * for a partial write: its other bytes are made zero instead.
 *
 * Ordering is the caller's (commit.c): the store's writes are data; the
 * size the file system records is the pointer, committed after a barrier.
 * Extents may be added early (past the durable size they mean nothing);
 * when a file shrinks, record the smaller size in the exonode first and
 * then call kit_bytes_trim, so no write-back can pair the old size with
 * fewer extents.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/kit/kit.h"

#define ZBYTES 16384
static const uint8_t zeros[ZBYTES];

void kit_bytes_init(struct kit_bytes *b, uint64_t sector, uint16_t slot, int first)
{
	memset(b, 0, sizeof *b);
	b->sector = sector;
	b->slot = slot;
	b->first = first;
}

int kit_bytes_open(struct kit *k, struct kit_bytes *b, uint64_t sector, uint16_t slot, int first,
                   uint64_t size)
{
	kit_bytes_init(b, sector, slot, first);
	uint8_t *page = malloc(4096);
	if (page == NULL)
		return -ENOMEM;
	int64_t r = kit_xn_map(k, sector, slot, page);
	const struct ed_xnmap_hdr *h = (const void *)page;
	const struct ed_xnmap_ent *e = (const void *)(h + 1);
	if (r == 0 && sizeof *h + h->nent * sizeof *e > 4096)
		r = ED_E_CORRUPT;
	/* Entries come in increasing number: ours are a run from first. */
	for (uint32_t i = 0; r == 0 && i < h->nent && b->n < KIT_BYTES_EXT; i++) {
		if (e[i].idx < first)
			continue;
		if (e[i].idx != first + b->n || e[i].type != ED_ENT_EXTENT)
			break;
		b->ext[b->n].start = e[i].a;
		b->ext[b->n++].nsect = e[i].b;
		b->nsect += e[i].b;
	}
	free(page);
	if (r < 0)
		return kit_err(r);
	b->size = size;
	return size <= b->nsect * ED_SECTOR ? 0 : -EIO;
}

/* The disk sector holding the store's sector s, and how many follow it in
 * the same extent (*run). */
static uint64_t where(const struct kit_bytes *b, uint64_t s, uint64_t *run)
{
	for (int i = 0; i < b->n; i++) {
		if (s < b->ext[i].nsect) {
			*run = b->ext[i].nsect - s;
			return b->ext[i].start + s;
		}
		s -= b->ext[i].nsect;
	}
	*run = 0;
	return UINT64_MAX;
}

/* Move n bytes at off between buf and the disk; a write with buf NULL
 * writes zeros.  Everything in [off, off + n) is held. */
static int span(struct kit *k, struct kit_bytes *b, int write, uint8_t *buf, uint64_t off,
                uint64_t n)
{
	uint8_t sec[ED_SECTOR];
	while (n > 0) {
		uint64_t in = off % ED_SECTOR, run, m;
		uint64_t d = where(b, off / ED_SECTOR, &run);
		int64_t r = 0;
		if (d == UINT64_MAX)
			return -EIO;
		if (in != 0 || n < ED_SECTOR) {
			/* Part of a sector: read (unless it is all past the size),
			 * change, write. */
			m = ED_SECTOR - in < n ? ED_SECTOR - in : n;
			if (write && off - in >= b->size)
				memset(sec, 0, sizeof sec);
			else
				r = kit_io(k, b->sector, b->slot, 0, d, sec, ED_SECTOR);
			if (r >= 0 && write) {
				memcpy(sec + in, buf ? buf : zeros, m);
				r = kit_io(k, b->sector, b->slot, 1, d, sec, ED_SECTOR);
			} else if (r >= 0) {
				memcpy(buf, sec + in, m);
			}
		} else {
			m = (n / ED_SECTOR < run ? n / ED_SECTOR : run) * ED_SECTOR;
			if (buf == NULL && m > ZBYTES)
				m = ZBYTES;
			r = kit_io(k, b->sector, b->slot, write, d, buf ? buf : (void *)zeros, m);
		}
		if (r < 0)
			return kit_err(r);
		if (buf)
			buf += m;
		off += m;
		n -= m;
	}
	return 0;
}

/* Hold at least `end` bytes, allocating after the last extent. */
static int reserve(struct kit *k, struct kit_bytes *b, uint64_t end)
{
	uint64_t need = (end + ED_SECTOR - 1) / ED_SECTOR;
	while (b->nsect < need) {
		int ent = b->first + b->n;
		if (b->n == KIT_BYTES_EXT || ent >= ED_XN_MAX_ENTRIES)
			return -EFBIG;
		uint64_t goal = b->n ? b->ext[b->n - 1].start + b->ext[b->n - 1].nsect : b->sector;
		uint64_t start;
		int64_t got = kit_alloc_extent(k, b->sector, b->slot, ent, goal, need - b->nsect,
		                               KIT_UNIT, &start);
		if (got < 0)
			return (int)got;
		if (b->n > 0 && start == goal && kit_xn_combine(k, b->sector, b->slot, ent - 1, ent) >= 0) {
			b->ext[b->n - 1].nsect += (uint64_t)got;
		} else {
			b->ext[b->n].start = start;
			b->ext[b->n++].nsect = (uint64_t)got;
		}
		b->nsect += (uint64_t)got;
	}
	return 0;
}

long kit_bytes_read(struct kit *k, struct kit_bytes *b, void *buf, size_t n, uint64_t off)
{
	if (off >= b->size)
		return 0;
	if (n > b->size - off)
		n = (size_t)(b->size - off);
	int e = span(k, b, 0, buf, off, n);
	return e < 0 ? e : (long)n;
}

long kit_bytes_write(struct kit *k, struct kit_bytes *b, const void *buf, size_t n, uint64_t off)
{
	uint64_t end = off + n;
	if (n == 0)
		return 0;
	if (end < off || end > (1ull << 48))
		return -EFBIG;
	int e = reserve(k, b, end);
	if (e == 0 && off > b->size)
		e = span(k, b, 1, NULL, b->size, off - b->size);     /* the gap: zeros */
	if (e == 0)
		e = span(k, b, 1, (uint8_t *)(uintptr_t)buf, off, n);
	if (e < 0)
		return e;
	if (end > b->size)
		b->size = end;
	return (long)n;
}

int kit_bytes_truncate(struct kit *k, struct kit_bytes *b, uint64_t len)
{
	if (len > (1ull << 48))
		return -EFBIG;
	if (len > b->size) {
		int e = reserve(k, b, len);
		if (e == 0)
			e = span(k, b, 1, NULL, b->size, len - b->size);
		if (e < 0)
			return e;
	}
	b->size = len;
	return 0;
}

int kit_bytes_trim(struct kit *k, struct kit_bytes *b)
{
	uint64_t need = (b->size + ED_SECTOR - 1) / ED_SECTOR;
	while (b->n > 0 && b->nsect - b->ext[b->n - 1].nsect >= need) {
		int64_t r = kit_xn_remove(k, b->sector, b->slot, b->first + b->n - 1);
		if (r < 0)
			return kit_err(r);
		b->nsect -= b->ext[--b->n].nsect;
	}
	return 0;
}
