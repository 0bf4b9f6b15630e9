/*
 * table.c - the file allocation table: one entry per cluster saying which
 * cluster follows it in its file (or that it is free, bad, or the last).
 *
 * Entries are read and written in place in the volume cache, in the
 * active copy (and, when the copies are mirrored, in every copy at once,
 * so they never differ on the disk).  FAT12 entries are a byte and a half
 * and may straddle two sectors; FAT32 entries keep the four reserved high
 * bits they had.
 *
 * Allocation is next-fit from a hint (FSInfo's, on FAT32), preferring the
 * cluster right after the one a file ends with, so files grow in one
 * piece.  New chains and cut chains are class CL_FAT (written before the
 * names that point at them).  Freed chains are not freed at once: the
 * chain waits in fs->pending, still allocated in the FAT, until sync.c has
 * made the removal of its name durable, and only then do its entries
 * become 0 (class CL_FREE).  So a cluster is never handed to another file
 * while a durable name may still point at it - after a crash fsck.fat
 * finds, at worst, a lost chain to free, never two files sharing one.
 * After that, fat_discard gives the virtual volume's chunks that free
 * clusters wholly cover back to the exodisk.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/fatfs/fat.h"

/* ---- sets of clusters --------------------------------------------------------- */

int fset_add(struct fset *s, uint32_t v)
{
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 64;
		uint32_t *nv = fat_grow(s->v, s->n, cap, sizeof *nv);
		if (nv == NULL)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = v;
	return 0;
}

int fset_has(const struct fset *s, uint32_t v)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->v[i] == v)
			return 1;
	return 0;
}

void fset_clear(struct fset *s)
{
	s->n = 0;
}

/* ---- entries ---------------------------------------------------------------------- */

static uint64_t ent_byte(const struct fatfs *fs, uint32_t c)
{
	return fs->type == 12 ? c + c / 2 : fs->type == 16 ? 2ull * c : 4ull * c;
}

static uint64_t copy_lba(const struct fatfs *fs, int copy)
{
	return fs->rsvd + (uint64_t)copy * fs->fatsz;
}

/* Read or change the entry's bytes (2 for FAT12/16, 4 for FAT32), which
 * for FAT12 may lie in two sectors. */
static int ent_io(struct fatfs *fs, int copy, uint32_t c, uint8_t *bytes, int write, int cls)
{
	uint64_t off = ent_byte(fs, c);
	unsigned n = fs->type == 32 ? 4 : 2;
	for (unsigned done = 0; done < n;) {
		uint64_t lba = copy_lba(fs, copy) + (off + done) / ED_SECTOR;
		unsigned o = (unsigned)((off + done) % ED_SECTOR);
		unsigned m = ED_SECTOR - o < n - done ? ED_SECTOR - o : n - done;
		int e;
		uint8_t *p = fat_meta_sector(fs, lba, VV_RA, &e);
		if (p == NULL)
			return e;
		if (write) {
			memcpy(p + o, bytes + done, m);
			vvol_dirty(&fs->vol, lba, 1, cls);
		} else {
			memcpy(bytes + done, p + o, m);
		}
		vvol_unpin(&fs->vol, lba);
		done += m;
	}
	return 0;
}

int fat_get_copy(struct fatfs *fs, int copy, uint32_t c, uint32_t *v)
{
	if (c >= fs->nclusters + 2)
		return -EINVAL;
	uint8_t b[4];
	int e = ent_io(fs, copy, c, b, 0, 0);
	if (e < 0)
		return e;
	if (fs->type == 12)
		*v = c & 1 ? (uint32_t)le16(b) >> 4 : le16(b) & 0xFFFu;
	else if (fs->type == 16)
		*v = le16(b);
	else
		*v = le32(b) & FAT32_MASK;
	return 0;
}

int fat_get(struct fatfs *fs, uint32_t c, uint32_t *v)
{
	return fat_get_copy(fs, fs->active, c, v);
}

int fat_set_copy(struct fatfs *fs, int copy, uint32_t c, uint32_t v, int cls)
{
	if (c >= fs->nclusters + 2)
		return -EINVAL;
	uint8_t b[4];
	int e = 0;
	if (fs->type != 16)
		e = ent_io(fs, copy, c, b, 0, 0);
	if (e < 0)
		return e;
	if (fs->type == 12) {
		uint16_t old = le16(b);
		v &= 0xFFF;
		put16(b, c & 1 ? (old & 0x000Fu) | v << 4 : (old & 0xF000u) | v);
	} else if (fs->type == 16) {
		put16(b, v & 0xFFFF);
	} else {
		put32(b, (le32(b) & ~FAT32_MASK) | (v & FAT32_MASK));
	}
	return ent_io(fs, copy, c, b, 1, cls);
}

int fat_set(struct fatfs *fs, uint32_t c, uint32_t v, int cls)
{
	if (!fs->mirror)
		return fat_set_copy(fs, fs->active, c, v, cls);
	int e = 0;
	for (uint32_t k = 0; k < fs->nfats && e == 0; k++)
		e = fat_set_copy(fs, (int)k, c, v, cls);
	return e;
}

/* The end-of-chain mark fatfs writes. */
static uint32_t eoc_mark(const struct fatfs *fs)
{
	return fs->type == 12 ? 0xFFFu : fs->type == 16 ? 0xFFFFu : FAT32_MASK;
}

/* ---- allocation --------------------------------------------------------------------- */

/* The first free cluster at or after `from` (wrapping), 0 if none: whole
 * FAT sectors at a time on FAT16/32. */
static int scan_free(struct fatfs *fs, uint32_t from, uint32_t *out)
{
	uint32_t n = fs->nclusters, last = n + 1;
	if (!fat_valid_clus(fs, from))
		from = 2;
	uint32_t c = from;
	for (uint32_t seen = 0; seen < n;) {
		if (fs->type == 12) {
			uint32_t v;
			int e = fat_get(fs, c, &v);
			if (e < 0)
				return e;
			if (v == 0) {
				*out = c;
				return 0;
			}
			seen++;
			c = c == last ? 2 : c + 1;
			continue;
		}
		unsigned w = fs->type == 16 ? 2 : 4, per = ED_SECTOR / w;
		uint64_t lba = copy_lba(fs, fs->active) + ent_byte(fs, c) / ED_SECTOR;
		int e;
		const uint8_t *p = fat_meta_sector(fs, lba, VV_RA, &e);
		if (p == NULL)
			return e;
		uint32_t i = c % per;
		for (; i < per && seen < n && c <= last; i++, c++, seen++) {
			uint32_t v = w == 2 ? le16(p + i * w) : le32(p + i * w) & FAT32_MASK;
			if (v == 0) {
				vvol_unpin(&fs->vol, lba);
				*out = c;
				return 0;
			}
		}
		vvol_unpin(&fs->vol, lba);
		if (c > last)
			c = 2;
	}
	*out = 0;
	return 0;
}

int fat_alloc(struct fatfs *fs, uint32_t near, uint32_t *c)
{
	uint32_t v = 1;
	int e = 0;
	if (fat_valid_clus(fs, near))
		e = fat_get(fs, near, &v);
	if (e < 0)
		return e;
	uint32_t got = v == 0 ? near : 0;
	for (int round = 0; got == 0 && round < 2; round++) {
		if ((e = scan_free(fs, fs->hint, &got)) < 0)
			return e;
		/* Full, but chains wait to be freed: free them (a sync) and look again. */
		if (got == 0 && round == 0 && fs->pending.n > 0) {
			if ((e = fat_sync(fs)) < 0)
				return e;
		} else if (got == 0) {
			return -ENOSPC;
		}
	}
	if ((e = fat_set(fs, got, eoc_mark(fs), CL_FAT)) < 0)
		return e;
	fs->hint = got + 1 > fs->nclusters + 1 ? 2 : got + 1;
	if (fs->nfree > 0)
		fs->nfree--;
	fs->info_dirty = 1;
	*c = got;
	return 0;
}

int fat_count_free(struct fatfs *fs, uint32_t *n)
{
	if (fs->nfree >= 0) {
		*n = (uint32_t)fs->nfree;
		return 0;
	}
	uint32_t count = 0;
	for (uint32_t c = 2; c <= fs->nclusters + 1; c++) {
		uint32_t v;
		int e = fat_get(fs, c, &v);
		if (e < 0)
			return e;
		count += v == 0;
	}
	fs->nfree = count;
	*n = count;
	return 0;
}

/* ---- chains --------------------------------------------------------------------------- */

static int append(struct fchain *ch, uint32_t c)
{
	if (ch->nr > 0 && ch->r[ch->nr - 1].clus + ch->r[ch->nr - 1].n == c) {
		ch->r[ch->nr - 1].n++;
	} else {
		if (ch->nr == ch->cap) {
			uint32_t cap = ch->cap ? ch->cap * 2 : 4;
			struct frun *nr = fat_grow(ch->r, ch->nr, cap, sizeof *nr);
			if (nr == NULL)
				return -ENOMEM;
			ch->r = nr;
			ch->cap = cap;
		}
		ch->r[ch->nr++] = (struct frun){ ch->len, c, 1 };
	}
	ch->len++;
	return 0;
}

void fat_chain_free(struct fchain *ch)
{
	free(ch->r);
	memset(ch, 0, sizeof *ch);
}

int fat_chain_load(struct fatfs *fs, struct fchain *ch, uint32_t first, uint32_t limit)
{
	fat_chain_free(ch);
	ch->first = first;
	ch->known = 1;
	if (first == 0)
		return 0;
	uint32_t c = first;
	for (;;) {
		if (!fat_valid_clus(fs, c))
			return fat_damaged(fs, "a chain leaves the volume at cluster", c);
		if (ch->len >= limit || ch->len >= fs->nclusters)
			return fat_damaged(fs, "a chain is longer than it may be (a loop, or longer than "
			                   "its file), at cluster", c);
		int e = append(ch, c);
		uint32_t v;
		if (e == 0)
			e = fat_get(fs, c, &v);
		if (e < 0)
			return e;
		if (fat_is_eoc(fs, v))
			return 0;
		if (v == 0)
			return fat_damaged(fs, "a chain runs into a free cluster after", c);
		if (v == fs->bad)
			return fat_damaged(fs, "a chain runs into a bad cluster after", c);
		c = v;
	}
}

uint32_t fat_chain_span(const struct fchain *ch, uint32_t i, uint32_t *before, uint32_t *run)
{
	uint32_t lo = 0, hi = ch->nr;
	if (i >= ch->len)
		return 0;
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;
		if (ch->r[mid].idx <= i)
			lo = mid;
		else
			hi = mid;
	}
	const struct frun *r = &ch->r[lo];
	if (before)
		*before = i - r->idx;
	if (run)
		*run = r->n - (i - r->idx);
	return r->clus + (i - r->idx);
}

uint32_t fat_chain_at(const struct fchain *ch, uint32_t i, uint32_t *run)
{
	return fat_chain_span(ch, i, NULL, run);
}

int fat_chain_grow(struct fatfs *fs, struct fchain *ch, uint32_t n, uint32_t near)
{
	for (uint32_t k = 0; k < n; k++) {
		uint32_t last = ch->len ? fat_chain_at(ch, ch->len - 1, NULL) : 0;
		uint32_t c;
		int e = fat_alloc(fs, last ? last + 1 : near, &c);
		if (e == 0 && last)
			e = fat_set(fs, last, c, CL_FAT);
		if (e == 0)
			e = append(ch, c);
		if (e < 0)
			return e;
		if (ch->first == 0)
			ch->first = c;
	}
	return 0;
}

int fat_chain_cut(struct fatfs *fs, struct fchain *ch, uint32_t n)
{
	if (n >= ch->len)
		return 0;
	int e;
	if (n == 0) {
		e = fat_free_later(fs, ch->first);
		ch->first = 0;
	} else {
		uint32_t last = fat_chain_at(ch, n - 1, NULL), tail = fat_chain_at(ch, n, NULL);
		e = fat_set(fs, last, eoc_mark(fs), CL_FAT);
		if (e == 0)
			e = fat_free_later(fs, tail);
		if (e == 0 && (e = fset_add(&fs->cuts, last)) == 0)
			e = fset_add(&fs->cuts, tail);
	}
	if (e < 0)
		return e;
	/* Keep the runs below n. */
	while (ch->nr > 0 && ch->r[ch->nr - 1].idx >= n)
		ch->nr--;
	if (ch->nr > 0) {
		struct frun *r = &ch->r[ch->nr - 1];
		if (r->idx + r->n > n)
			r->n = n - r->idx;
	}
	ch->len = n;
	return 0;
}

/* ---- freeing ------------------------------------------------------------------------------ */

int fat_free_later(struct fatfs *fs, uint32_t first)
{
	return fat_valid_clus(fs, first) ? fset_add(&fs->pending, first) : 0;
}

/* FAT16/32: free the chain from cluster c, a FAT sector at a time.  An
 * entry never straddles a sector there, so one pinned sector per copy
 * serves every entry in it; the entry-at-a-time path costs five cache
 * look-ups per cluster (read, then read and write in each copy), and an
 * 80 MiB file has 20,480 clusters.  Same result as that path: the active
 * copy is read, every copy written (or the active one alone when the FAT
 * is not mirrored), FAT32's reserved top bits kept.  *count: clusters
 * freed. */
#define FAST_COPIES 4
static int free_chain_by_sector(struct fatfs *fs, uint32_t c, uint32_t *count)
{
	int copies[FAST_COPIES], ncopy = 0;
	if (!fs->mirror)
		copies[ncopy++] = fs->active;
	else
		for (uint32_t k = 0; k < fs->nfats; k++)
			copies[ncopy++] = (int)k;
	int act = 0;
	while (copies[act] != fs->active)
		act++;
	unsigned w = fs->type == 32 ? 4 : 2;
	uint8_t *p[FAST_COPIES];
	uint64_t cur = UINT64_MAX;   /* the FAT sector pinned in every copy */
	int e = 0;
	while (e == 0 && fat_valid_clus(fs, c) && *count <= fs->nclusters) {
		uint64_t off = ent_byte(fs, c), sec = off / ED_SECTOR;
		unsigned o = (unsigned)(off % ED_SECTOR);
		if (sec != cur) {
			for (int k = 0; cur != UINT64_MAX && k < ncopy; k++)
				vvol_unpin(&fs->vol, copy_lba(fs, copies[k]) + cur);
			cur = UINT64_MAX;
			int k;
			for (k = 0; k < ncopy; k++) {
				p[k] = fat_meta_sector(fs, copy_lba(fs, copies[k]) + sec, VV_RA, &e);
				if (p[k] == NULL)
					break;
			}
			if (k < ncopy) {
				while (k-- > 0)
					vvol_unpin(&fs->vol, copy_lba(fs, copies[k]) + sec);
				return e;
			}
			cur = sec;
		}
		uint32_t v = w == 4 ? le32(p[act] + o) & FAT32_MASK : le16(p[act] + o);
		if (v == 0)
			break;
		for (int k = 0; k < ncopy; k++) {
			if (w == 4)
				put32(p[k] + o, le32(p[k] + o) & ~FAT32_MASK);
			else
				put16(p[k] + o, 0);
			vvol_dirty(&fs->vol, copy_lba(fs, copies[k]) + sec, 1, CL_FREE);
		}
		if (fs->vol.k != NULL)
			e = fset_add(&fs->freed, c);
		if (fs->nfree >= 0)
			fs->nfree++;
		(*count)++;
		if (fat_is_eoc(fs, v) || v == fs->bad)
			break;
		c = v;
	}
	for (int k = 0; cur != UINT64_MAX && k < ncopy; k++)
		vvol_unpin(&fs->vol, copy_lba(fs, copies[k]) + cur);
	return e;
}

int fat_free_pending(struct fatfs *fs)
{
	int fast = fs->type != 12 && (fs->mirror ? fs->nfats : 1) <= FAST_COPIES;
	for (uint32_t i = 0; i < fs->pending.n; i++) {
		uint32_t c = fs->pending.v[i], count = 0;
		if (fast) {
			int e = free_chain_by_sector(fs, c, &count);
			if (e < 0)
				return e;
			fs->info_dirty = 1;
			continue;
		}
		/* The chain is ours and was checked when it was read; still,
		 * stop at anything that is not a plain link. */
		while (fat_valid_clus(fs, c) && count <= fs->nclusters) {
			uint32_t v;
			int e = fat_get(fs, c, &v);
			if (e == 0 && v == 0)
				break;
			if (e == 0)
				e = fat_set(fs, c, 0, CL_FREE);
			if (e == 0 && fs->vol.k != NULL)
				e = fset_add(&fs->freed, c);
			if (e < 0)
				return e;
			if (fs->nfree >= 0)
				fs->nfree++;
			count++;
			if (fat_is_eoc(fs, v) || v == fs->bad)
				break;
			c = v;
		}
		fs->info_dirty = 1;
	}
	fset_clear(&fs->pending);
	return 0;
}

int fat_cuts_hold(struct fatfs *fs, int undo)
{
	for (uint32_t i = 0; i + 1 < fs->cuts.n; i += 2) {
		uint32_t last = fs->cuts.v[i], tail = fs->cuts.v[i + 1], v;
		int e = fat_get(fs, last, &v);
		if (e < 0)
			return e;
		/* Grown again since (relinked): nothing to hold back. */
		if (undo && fat_is_eoc(fs, v))
			e = fat_set(fs, last, tail, CL_FAT);
		else if (!undo && v == tail)
			e = fat_set(fs, last, eoc_mark(fs), CL_FREE);
		if (e < 0)
			return e;
	}
	if (!undo)
		fset_clear(&fs->cuts);
	return 0;
}

static int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Is every cluster overlapping sectors [lba, lba + n) free?  Sectors past
 * the last cluster count as free; sectors before cluster 2 never do. */
static int all_free(struct fatfs *fs, uint64_t lba, uint64_t n, int *yes)
{
	*yes = 0;
	if (lba < fs->datasec)
		return 0;
	uint64_t c0 = (lba - fs->datasec) / fs->spc + 2, c1 = (lba + n - 1 - fs->datasec) / fs->spc + 2;
	if (c1 > fs->nclusters + 1)
		c1 = fs->nclusters + 1;
	if (fs->type == 12) {
		for (uint64_t c = c0; c <= c1; c++) {
			uint32_t v;
			int e = fat_get(fs, (uint32_t)c, &v);
			if (e < 0)
				return e;
			if (v != 0)
				return 0;
		}
		*yes = 1;
		return 0;
	}
	/* FAT16/32: the entries a sector at a time (a chunk's clusters have
	 * their entries side by side), not a cache look-up per entry. */
	unsigned w = fs->type == 32 ? 4 : 2;
	for (uint64_t c = c0; c <= c1;) {
		uint64_t off = ent_byte(fs, (uint32_t)c), sl = copy_lba(fs, fs->active) + off / ED_SECTOR;
		int e;
		const uint8_t *p = fat_meta_sector(fs, sl, VV_RA, &e);
		if (p == NULL)
			return e;
		int busy = 0;
		for (unsigned o = (unsigned)(off % ED_SECTOR); o < ED_SECTOR && c <= c1 && !busy; o += w, c++)
			busy = (w == 4 ? le32(p + o) & FAT32_MASK : le16(p + o)) != 0;
		vvol_unpin(&fs->vol, sl);
		if (busy)
			return 0;
	}
	*yes = 1;
	return 0;
}

int fat_discard(struct fatfs *fs)
{
	if (fs->vol.k == NULL || fs->freed.n == 0) {
		fset_clear(&fs->freed);
		return 0;
	}
	qsort(fs->freed.v, fs->freed.n, sizeof *fs->freed.v, by_value);
	/* Chunks wholly free go back in runs: one vvol_discard, and one
	 * exodisk request per map leaf, for a whole deleted file. */
	uint64_t chunk = fs->vol.d.chunk, done = UINT64_MAX, run = 0, runs = 0;
	int e = 0;
	for (uint32_t i = 0; i < fs->freed.n && e == 0; i++) {
		uint64_t k = fat_clus_lba(fs, fs->freed.v[i]) / chunk;
		uint64_t kl = (fat_clus_lba(fs, fs->freed.v[i]) + fs->spc - 1) / chunk;
		for (; k <= kl && e == 0; k++) {
			if (k == done)
				continue;
			done = k;
			int yes;
			e = all_free(fs, k * chunk, chunk, &yes);
			if (e != 0)
				break;
			/* all_free counts sectors past the last cluster as free:
			 * a chunk reaching into the checksum area (from totsec
			 * on, not chunk-aligned) must stay. */
			yes = yes && (k + 1) * chunk <= (fs->ck_area ? fs->ck_area : fs->vol.d.nsectors);
			if (yes && runs > 0 && run + runs == k) {
				runs++;
				continue;
			}
			if (runs > 0)
				e = vvol_discard(&fs->vol, run * chunk, runs * chunk);
			run = k;
			runs = yes ? 1 : 0;
		}
	}
	if (e == 0 && runs > 0)
		e = vvol_discard(&fs->vol, run * chunk, runs * chunk);
	fset_clear(&fs->freed);
	return e;
}
