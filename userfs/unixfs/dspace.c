/*
 * dspace.c - a directory's space: the extents its dnode lists, holding its
 * directory blocks and its small files' bytes (ufs_format.h).
 *
 * In memory each extent has a bitmap of the sectors in use, rebuilt when
 * the directory is loaded from what its blocks and records claim; nothing
 * about free space is stored.  Space freed by a commit (old copies of
 * directory blocks, old bytes of rewritten or removed files) is reused only
 * after that commit is durable (ds_free_later, ds_committed): until then a
 * crash would bring back the records that point at it.
 *
 * Growing: the last extent is lengthened in place when the sectors after
 * it are free (add, then combine), else a new extent is added near the
 * dnode.  Write-behind grows with room to spare, so that the directory's
 * later files land next to its earlier ones and a reader takes them in one
 * request; what is left over is given back after the next commit
 * (ds_trim), with every extent that holds nothing.
 *
 * Reading goes through the buffer cache in 4 KiB blocks named by disk
 * sector (extents start on 4 KiB boundaries); a miss brings in what
 * follows in the same extent too.  Directories no larger than
 * UFS_GROUP_MAX are read whole when loaded: one request for the names and
 * the small files together.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

#define READ_MAX        (256u * 1024)         /* one read at most (cache fill) */
#define SLACK_MIN       128u                  /* sectors: 64 KiB              */
#define SLACK_MAX       2048u                 /* 1 MiB                        */
#define MANY_EXT        (UFS_DNODE_EXT / 4)   /* extents: past this, grow by doubling */

uint64_t ds_owner(const struct udir *d)
{
	/* Named by the dnode's place (known before it is read); a dnode freed
	 * drops its blocks (ufs_free_node), so a new one there finds none. */
	return (1ull << 63) | ufs_xref(d->x.sector, d->x.slot);
}

static int bit(const uint8_t *m, uint64_t i) { return (m[i / 8] >> (i % 8)) & 1; }
static void setbit(uint8_t *m, uint64_t i) { m[i / 8] |= (uint8_t)(1u << (i % 8)); }
static void clrbit(uint8_t *m, uint64_t i) { m[i / 8] &= (uint8_t)~(1u << (i % 8)); }

static int add_ext(struct udspace *sp, uint64_t sector, uint32_t nsect, uint16_t idx)
{
	if (sp->next == sp->extcap) {
		uint32_t cap = sp->extcap ? sp->extcap * 2 : 4;
		struct dsext *n = realloc(sp->ext, cap * sizeof *n);
		if (n == NULL)
			return -ENOMEM;
		sp->ext = n;
		sp->extcap = cap;
	}
	uint8_t *used = calloc(1, (nsect + 7) / 8 + 1);
	if (used == NULL)
		return -ENOMEM;
	sp->ext[sp->next++] = (struct dsext){ sector, nsect, idx, 0, used, 0, NULL, 0 };
	sp->total += nsect;
	return 0;
}

static void drop_ext(struct udspace *sp, uint32_t i)
{
	sp->ext[i].g = NULL;
	sp->total -= sp->ext[i].nsect;
	sp->nused -= sp->ext[i].nused;
	free(sp->ext[i].used);
	sp->ext[i] = sp->ext[--sp->next];
}

void ds_destroy(struct udspace *sp)
{
	for (uint32_t i = 0; i < sp->next; i++)
		free(sp->ext[i].used);
	free(sp->ext);
	free(sp->later);
	free(sp->tmp);
	memset(sp, 0, sizeof *sp);
}

int ds_load(struct ufs *fs, struct udir *d, const void *page)
{
	const struct ed_xnmap_hdr *h = page;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	for (uint32_t i = 0; i < h->nent; i++) {
		if (ent[i].type != ED_ENT_EXTENT)
			continue;
		if (ent[i].idx < UFS_E_EXT || ent[i].idx >= UFS_E_EXT + UFS_DNODE_EXT ||
		    ent[i].a % UFS_BSECT != 0 || ent[i].b % UFS_BSECT != 0 || ent[i].b == 0 ||
		    ent[i].b > UINT32_MAX || ent[i].a + ent[i].b > fs->k.fm.nsectors)
			return ufs_damage(fs, "dnode lists an extent unixfs never makes", d->x.sector,
			                  d->m.id);
		int err = add_ext(&d->sp, ent[i].a, (uint32_t)ent[i].b, ent[i].idx);
		if (err < 0)
			return err;
	}
	return 0;
}

struct dsext *ds_find(struct udspace *sp, uint64_t sector)
{
	for (uint32_t i = 0; i < sp->next; i++)
		if (sector >= sp->ext[i].sector && sector < sp->ext[i].sector + sp->ext[i].nsect)
			return &sp->ext[i];
	return NULL;
}

int ds_claim(struct udspace *sp, uint64_t sector, uint64_t n)
{
	struct dsext *e = ds_find(sp, sector);
	if (e == NULL || n == 0 || sector + n > e->sector + e->nsect)
		return -EIO;
	uint64_t o = sector - e->sector;
	for (uint64_t i = 0; i < n; i++)
		if (bit(e->used, o + i))
			return -EIO;
	for (uint64_t i = 0; i < n; i++)
		setbit(e->used, o + i);
	e->nused += (uint32_t)n;
	sp->nused += n;
	return 0;
}

void ds_free(struct udspace *sp, uint64_t sector, uint64_t n)
{
	struct dsext *e = ds_find(sp, sector);
	if (e == NULL)
		return;
	uint64_t o = sector - e->sector;
	for (uint64_t i = 0; i < n && o + i < e->nsect; i++)
		if (bit(e->used, o + i)) {
			clrbit(e->used, o + i);
			e->nused--;
			sp->nused--;
		}
}

static int push_range(struct urange **v, uint32_t *n, uint32_t *cap, uint64_t s, uint64_t k)
{
	if (*n > 0 && (*v)[*n - 1].start + (*v)[*n - 1].n == s) {
		(*v)[*n - 1].n += k;
		return 0;
	}
	if (*n == *cap) {
		uint32_t c = *cap ? *cap * 2 : 16;
		struct urange *m = realloc(*v, c * sizeof *m);
		if (m == NULL)
			return -ENOMEM;
		*v = m;
		*cap = c;
	}
	(*v)[(*n)++] = (struct urange){ s, k };
	return 0;
}

int ds_free_later(struct udspace *sp, uint64_t sector, uint64_t n)
{
	return push_range(&sp->later, &sp->nlater, &sp->latercap, sector, n);
}

int ds_note_tmp(struct udspace *sp, uint64_t sector, uint64_t n)
{
	return push_range(&sp->tmp, &sp->ntmp, &sp->tmpcap, sector, n);
}

void ds_abort(struct udspace *sp)
{
	for (uint32_t i = 0; i < sp->ntmp; i++)
		ds_free(sp, sp->tmp[i].start, sp->tmp[i].n);
	sp->ntmp = 0;
}

void ds_committed(struct udspace *sp)
{
	for (uint32_t i = 0; i < sp->nlater; i++)
		ds_free(sp, sp->later[i].start, sp->later[i].n);
	sp->nlater = 0;
	sp->ntmp = 0;
}

/* A free run of n sectors starting at a multiple of align inside extent e,
 * at or after sector `from`; UINT64_MAX if none. */
static uint64_t run_in(const struct dsext *e, uint64_t from, uint64_t n, uint64_t align)
{
	if (from < e->sector)
		from = e->sector;
	uint64_t o = from - e->sector;
	o = (o + align - 1) / align * align;      /* extents start aligned */
	while (o + n <= e->nsect) {
		uint64_t k = 0;
		while (k < n && !bit(e->used, o + k))
			k++;
		if (k == n)
			return e->sector + o;
		o = (o + k + 1 + align - 1) / align * align;
	}
	return UINT64_MAX;
}

static uint64_t find_free(struct udspace *sp, uint64_t n, uint64_t align)
{
	if (sp->total - sp->nused < n)
		return UINT64_MAX;
	/* Where the last allocation ended first (files made together are
	 * placed together), then anywhere. */
	struct dsext *h = ds_find(sp, sp->hint);
	if (h != NULL) {
		uint64_t s = run_in(h, sp->hint, n, align);
		if (s != UINT64_MAX)
			return s;
	}
	for (uint32_t i = 0; i < sp->next; i++) {
		uint64_t s = run_in(&sp->ext[i], 0, n, align);
		if (s != UINT64_MAX)
			return s;
	}
	return UINT64_MAX;
}

/* The lowest extent entry of the dnode not in use, keeping one spare for
 * splitting (ds_trim); -1 if none. */
static int free_idx(struct udspace *sp, int spare)
{
	int inuse = 0;
	for (int idx = UFS_E_EXT; idx < UFS_E_EXT + UFS_DNODE_EXT; idx++) {
		int used = 0;
		for (uint32_t i = 0; i < sp->next && !used; i++)
			used = sp->ext[i].idx == idx;
		inuse += used;
	}
	if (inuse + (spare ? 1 : 0) >= UFS_DNODE_EXT)
		return -1;
	for (int idx = UFS_E_EXT; idx < UFS_E_EXT + UFS_DNODE_EXT; idx++) {
		int used = 0;
		for (uint32_t i = 0; i < sp->next && !used; i++)
			used = sp->ext[i].idx == idx;
		if (!used)
			return idx;
	}
	return -1;
}

/* Grow the space by at least need sectors (want if it can), as one run. */
static int grow(struct ufs *fs, struct udir *d, uint64_t need, uint64_t want, int slack)
{
	struct udspace *sp = &d->sp;
	need = (need + UFS_BSECT - 1) / UFS_BSECT * UFS_BSECT;
	want = (want + UFS_BSECT - 1) / UFS_BSECT * UFS_BSECT;
	if (want < need)
		want = need;
	/* Lengthen the extent we last allocated in, when what follows it is
	 * free: the directory stays one run on disk. */
	struct dsext *last = ds_find(sp, sp->hint ? sp->hint - 1 : 0);
	if (last == NULL && sp->next > 0)
		last = &sp->ext[sp->next - 1];
	int idx = free_idx(sp, 1);
	if (last != NULL && idx >= 0) {
		uint64_t end = last->sector + last->nsect;
		uint64_t n = ufs_room_after(fs, end, want);
		if (n >= need && last->nsect + n <= UINT32_MAX / 2) {
			int64_t r = ufs_xn_add_extent(fs, &d->x, idx, end, n, 0);
			if (r >= 0) {
				r = ufs_xn_combine(fs, &d->x, last->idx, idx, 0);
				if (r < 0) {
					ufs_xn_remove(fs, &d->x, idx, 0);
					return kit_err(r);
				}
				uint8_t *m = realloc(last->used, (last->nsect + n + 7) / 8 + 1);
				if (m == NULL)
					return -ENOMEM;      /* (the exonode has it; a reload fixes this) */
				memset(m + (last->nsect + 7) / 8, 0, (n + 7) / 8 + 1);
				/* Bits past the old end in its last byte are clear already. */
				last->used = m;
				last->nsect += (uint32_t)n;
				last->fresh |= (uint8_t)slack;
				sp->total += n;
				fs->data_goal = end + n;
				return 0;
			}
			if (!kit_taken(r) && r != ED_E_XNFULL)
				return kit_err(r);
		}
	}
	idx = free_idx(sp, 1);
	if (idx < 0)
		return -EFBIG;            /* no extent entry left: see ds_alloc */
	/* A directory already in many extents gets a new one as large as its
	 * space so far (kept, not trimmed: ds_trim), so its extents double
	 * instead of adding one per commit until the dnode has none left. */
	if (sp->next >= MANY_EXT && want < sp->total)
		want = sp->total < UINT32_MAX / 4 ? sp->total : UINT32_MAX / 4;
	uint64_t goal = last ? last->sector + last->nsect : d->x.sector;
	for (int tries = 0; tries < 16; tries++) {
		uint64_t start;
		int64_t n = ufs_alloc_run(fs, goal, want, need, UFS_BSECT, &start);
		if (n < 0)
			return (int)n;
		int64_t r = ufs_xn_add_extent(fs, &d->x, idx, start, (uint64_t)n, 0);
		if (kit_taken(r)) {
			goal = start + (uint64_t)n;
			continue;
		}
		if (r < 0)
			return kit_err(r);
		int err = add_ext(sp, start, (uint32_t)n, (uint16_t)idx);
		if (err < 0)
			return err;
		sp->ext[sp->next - 1].fresh = (uint8_t)slack;
		sp->hint = start;
		fs->data_goal = start + (uint64_t)n;
		return 0;
	}
	return -ENOSPC;
}

int ds_alloc(struct ufs *fs, struct udir *d, uint64_t n, uint64_t align, int slack, uint64_t *sector)
{
	struct udspace *sp = &d->sp;
	uint64_t s = find_free(sp, n, align);
	if (s == UINT64_MAX) {
		uint64_t want = n;
		if (slack) {
			want = n * 4 > SLACK_MIN ? n * 4 : SLACK_MIN;
			if (want > SLACK_MAX)
				want = n > SLACK_MAX ? n : SLACK_MAX;
		}
		int err = grow(fs, d, n, want, slack);
		if (err < 0)
			return err;
		s = find_free(sp, n, align);
		if (s == UINT64_MAX)
			return -ENOSPC;      /* cannot happen: the new run is free */
	}
	int err = ds_claim(sp, s, n);
	if (err < 0)
		return err;
	sp->hint = s + n;
	*sector = s;
	return 0;
}

int ds_reserve(struct ufs *fs, struct udir *d, uint64_t n, int slack)
{
	struct udspace *sp = &d->sp;
	uint64_t free = sp->total - sp->nused;
	if (free >= n)
		return 0;
	uint64_t need = n - free, want = need;
	if (slack) {
		want = n * 4 > SLACK_MIN ? n * 4 : SLACK_MIN;
		if (want > SLACK_MAX)
			want = need > SLACK_MAX ? need : SLACK_MAX;
	}
	int err = grow(fs, d, need, want, slack);
	/* Not being able to grow in one run is no failure yet: the files
	 * are placed one by one, each growing the space as it needs. */
	return err == -EFBIG || err == -ENOSPC ? 0 : err;
}

int ds_trim(struct ufs *fs, struct udir *d)
{
	struct udspace *sp = &d->sp;
	for (uint32_t i = 0; i < sp->next;) {
		struct dsext *e = &sp->ext[i];
		if (e->nused == 0) {
			int64_t r = ufs_xn_remove(fs, &d->x, e->idx, 0);
			if (r < 0)
				return kit_err(r);
			bc_drop_range(&fs->bc, ds_owner(d), e->sector / UFS_BSECT,
			              (e->sector + e->nsect) / UFS_BSECT);
			if (sp->hint >= e->sector && sp->hint <= e->sector + e->nsect)
				sp->hint = 0;
			drop_ext(sp, i);
			continue;
		}
		if (e->fresh && sp->next >= MANY_EXT) {
			e->fresh = 0;        /* (grow: its room is kept) */
		} else if (e->fresh) {
			e->fresh = 0;
			uint64_t top = e->nsect;
			while (top > 0 && !bit(e->used, top - 1))
				top--;
			uint64_t keep = (top + UFS_BSECT - 1) / UFS_BSECT * UFS_BSECT;
			int idx = free_idx(sp, 0);
			if (keep < e->nsect && idx >= 0) {
				int64_t r = ufs_xn_split(fs, &d->x, e->idx, keep * ED_SECTOR, idx, 0);
				if (r >= 0)
					r = ufs_xn_remove(fs, &d->x, idx, 0);
				if (r < 0)
					return kit_err(r);
				bc_drop_range(&fs->bc, ds_owner(d), (e->sector + keep) / UFS_BSECT,
				              (e->sector + e->nsect) / UFS_BSECT);
				uint64_t oldend = e->sector + e->nsect;
				sp->total -= e->nsect - keep;
				e->nsect = (uint32_t)keep;
				if (e->gn > keep)
					e->gn = (uint32_t)keep;
				if (sp->hint > e->sector + keep && sp->hint <= oldend)
					sp->hint = e->sector + keep;
			}
		}
		i++;
	}
	return 0;
}

/* ---- reading ----------------------------------------------------------------------- */

static uint8_t *rbuf;

/* Put [sector, sector + nblk*8) from mem into the cache. */
static void cache_put(struct ufs *fs, uint64_t owner, uint64_t sector, const uint8_t *mem, uint64_t nblk)
{
	for (uint64_t i = 0; i < nblk; i++) {
		struct bbuf *b = bc_get(&fs->bc, owner, sector / UFS_BSECT + i);
		if (b == NULL)
			return;
		if (!(b->flags & BB_DIRTY)) {
			memcpy(b->data, mem + i * UFS_BSIZE, UFS_BSIZE);
			b->flags |= BB_VALID;
		}
	}
}

int ds_read(struct ufs *fs, struct udir *d, uint64_t pos, void *buf, uint64_t bytes, uint64_t ahead)
{
	uint64_t owner = ds_owner(d);
	uint8_t *out = buf;
	uint64_t end = pos + bytes;
	while (pos < end) {
		uint64_t blk = pos / UFS_BSIZE, off = pos % UFS_BSIZE;
		uint64_t k = UFS_BSIZE - off < end - pos ? UFS_BSIZE - off : end - pos;
		struct dsext *ge = ds_find(&d->sp, pos / ED_SECTOR);
		if (ge != NULL && ge->g != NULL && pos / ED_SECTOR < ge->sector + ge->gn) {
			/* In the group: as much as it covers, at once. */
			uint64_t gend = (ge->sector + ge->gn) * ED_SECTOR;
			uint64_t n = end < gend ? end - pos : gend - pos;
			memcpy(out, ge->g + (pos - ge->sector * ED_SECTOR), n);
			out += n;
			pos += n;
			continue;
		}
		struct bbuf *b = bc_lookup(&fs->bc, owner, blk);
		if (b != NULL && (b->flags & BB_VALID)) {
			memcpy(out, b->data + off, k);
			out += k;
			pos += k;
			continue;
		}
		/* A small directory not read whole yet: now, once. */
		if (d->sp.gbuf == NULL && !d->sp.gtried) {
			int err = ds_read_all(fs, d);
			if (err < 0)
				return err;
			if (d->sp.gbuf != NULL)
				continue;
		}
		/* A miss: read from this block to the end of the range and
		 * `ahead` sectors more, within the extent, up to a cached block. */
		struct dsext *e = ds_find(&d->sp, blk * UFS_BSECT);
		if (e == NULL)
			return ufs_damage(fs, "bytes outside the directory's space", blk * UFS_BSECT,
			                  d->m.id);
		uint64_t want = (end - blk * UFS_BSIZE + ahead * ED_SECTOR + UFS_BSIZE - 1) / UFS_BSIZE;
		uint64_t room = (e->sector + e->nsect) / UFS_BSECT - blk;
		uint64_t n = want < room ? want : room;
		if (n > READ_MAX / UFS_BSIZE)
			n = READ_MAX / UFS_BSIZE;
		for (uint64_t i = 1; i < n; i++)
			if (bc_lookup(&fs->bc, owner, blk + i) != NULL) {
				n = i;
				break;
			}
		if (rbuf == NULL && (rbuf = malloc(READ_MAX)) == NULL)
			return -ENOMEM;
		int err = ufs_io_sync(fs, ufs_xn_prot(fs, &d->x), 0, blk * UFS_BSECT, rbuf, n * UFS_BSIZE);
		if (err < 0)
			return err;
		cache_put(fs, owner, blk * UFS_BSECT, rbuf, n);
		/* Copy what this read wanted straight from the buffer (the cache
		 * may have had no room). */
		uint64_t got = n * UFS_BSIZE - off;
		if (got > end - pos)
			got = end - pos;
		memcpy(out, rbuf + off, got);
		out += got;
		pos += got;
	}
	return 0;
}

void ds_written(struct ufs *fs, struct udir *d, uint64_t sector, const void *data, uint64_t bytes)
{
	uint64_t owner = ds_owner(d);
	const uint8_t *in = data;
	uint64_t pos = sector * ED_SECTOR, end = pos + bytes;
	struct dsext *ge = ds_find(&d->sp, sector);
	if (ge != NULL && ge->g != NULL && sector < ge->sector + ge->gn) {
		uint64_t gend = (ge->sector + ge->gn) * ED_SECTOR;
		memcpy(ge->g + (pos - ge->sector * ED_SECTOR), in, (end < gend ? end : gend) - pos);
	}
	while (pos < end) {
		uint64_t blk = pos / UFS_BSIZE, off = pos % UFS_BSIZE;
		uint64_t k = UFS_BSIZE - off < end - pos ? UFS_BSIZE - off : end - pos;
		struct bbuf *b = bc_lookup(&fs->bc, owner, blk);
		if (b != NULL && (b->flags & BB_VALID))
			memcpy(b->data + off, in, k);
		in += k;
		pos += k;
	}
}

static void glru_unlink(struct ufs *fs, struct udir *d)
{
	struct udspace *sp = &d->sp;
	if (sp->gprev)
		sp->gprev->sp.gnext = sp->gnext;
	else if (fs->ghead == d)
		fs->ghead = sp->gnext;
	if (sp->gnext)
		sp->gnext->sp.gprev = sp->gprev;
	else if (fs->gtail == d)
		fs->gtail = sp->gprev;
	sp->gprev = sp->gnext = NULL;
}

void ds_group_drop(struct ufs *fs, struct udir *d)
{
	struct udspace *sp = &d->sp;
	if (sp->gbuf == NULL)
		return;
	glru_unlink(fs, d);
	for (uint32_t i = 0; i < sp->next; i++)
		sp->ext[i].g = NULL;
	upool_big_free(fs, sp->gbuf);
	sp->gbuf = NULL;
	fs->gbytes -= sp->gbytes;
	sp->gbytes = 0;
}

const uint8_t *ds_group(struct udir *d, uint64_t sector, uint64_t n)
{
	struct dsext *e = ds_find(&d->sp, sector);
	if (e == NULL || e->g == NULL || sector + n > e->sector + e->gn)
		return NULL;
	return e->g + (sector - e->sector) * ED_SECTOR;
}

/* Room for a group of `bytes` in the mount's budget: the groups used
 * longest ago go. */
void ds_group_room(struct ufs *fs, size_t bytes)
{
	while (fs->gbytes + bytes > fs->gmax && fs->gtail != NULL)
		ds_group_drop(fs, fs->gtail);
}

/* buf (from upool_big_alloc) holds the whole space, its extents in order:
 * it becomes the directory's group. */
void ds_group_attach(struct ufs *fs, struct udir *d, uint8_t *buf)
{
	struct udspace *sp = &d->sp;
	uint64_t off = 0;
	for (uint32_t i = 0; i < sp->next; i++) {
		sp->ext[i].g = buf + off;
		sp->ext[i].gn = sp->ext[i].nsect;
		off += (uint64_t)sp->ext[i].nsect * ED_SECTOR;
	}
	sp->gtried = 1;
	sp->gbuf = buf;
	sp->gbytes = off;
	fs->gbytes += off;
	sp->gnext = fs->ghead;
	if (fs->ghead)
		fs->ghead->sp.gprev = d;
	fs->ghead = d;
	if (fs->gtail == NULL)
		fs->gtail = d;
}

int ds_read_all(struct ufs *fs, struct udir *d)
{
	struct udspace *sp = &d->sp;
	size_t bytes = sp->total * ED_SECTOR;
	if (bytes > UFS_GROUP_MAX || bytes == 0 || sp->gbuf != NULL)
		return 0;
	sp->gtried = 1;
	ds_group_room(fs, bytes);
	uint8_t *buf = upool_big_alloc(fs, bytes);
	if (buf == NULL)
		return 0;                /* no memory: read what is needed, as needed */
	/* Every extent at once (usually there is one). */
	struct uio w;
	uio_init(&w, fs, 0);
	uint64_t off = 0;
	int err = 0;
	for (uint32_t i = 0; i < sp->next && err == 0; i++) {
		err = uio_direct(&w, ufs_xn_prot(fs, &d->x), sp->ext[i].sector, buf + off,
		                 sp->ext[i].nsect * ED_SECTOR, NULL);
		off += (uint64_t)sp->ext[i].nsect * ED_SECTOR;
	}
	int e2 = uio_finish(&w);
	if (err == 0)
		err = e2;
	if (err < 0) {
		upool_big_free(fs, buf);
		return err;
	}
	ds_group_attach(fs, d, buf);
	return 0;
}
