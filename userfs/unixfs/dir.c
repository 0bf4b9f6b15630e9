/*
 * dir.c - directories: loading one from its dnode and blocks, its names in
 * memory, and preparing a commit.
 *
 * A loaded directory is a hash table of names (struct uent), each holding
 * its record - the embedded inode - as it is now and as the last commit
 * left it, and the record block it belongs to.  Names are assigned to
 * blocks when made and stay there, so a change rewrites only its block.
 *
 * Loading checks everything it reads: the dnode's metadata (its id must
 * be the one the record naming it carries), each block's checksum against
 * the pointer to it, its header (magic, kind, the directory's id), every
 * record, and that no two things claim the same sector of the space.  A
 * failure is -EIO with the damage described in fs->damage, never a wrong
 * name or another file's bytes.
 *
 * A commit is copy-on-write: every changed block (and the head, and the
 * table blocks of a large directory) is written to free sectors of the
 * space; after the barrier the dnode's entry 0 is replaced to name the new
 * head (sync.c orders this); only when that is durable do the old copies
 * and the space of removed files become free.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

int ufs_damage(struct ufs *fs, const char *what, uint64_t sector, uint64_t id)
{
	snprintf(fs->damage, sizeof fs->damage, "unixfs: file id %llu, sector %llu: %s",
	         (unsigned long long)id, (unsigned long long)sector, what);
	fs->cnt.damage++;
	return -EIO;
}

static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

/* ---- names in memory ----------------------------------------------------------- */

static int hash_grow(struct udir *d)
{
	uint32_t n = d->nhash ? d->nhash * 2 : 16;
	struct uent **h = calloc(n, sizeof *h);
	if (h == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->nhash; i++)
		for (struct uent *e = d->hash[i], *next; e; e = next) {
			next = e->hnext;
			e->hnext = h[e->hash & (n - 1)];
			h[e->hash & (n - 1)] = e;
		}
	free(d->hash);
	d->hash = h;
	d->nhash = n;
	return 0;
}

struct uent *ufs_dir_find(struct udir *d, const char *name, size_t len)
{
	if (d->nhash == 0)
		return NULL;
	uint32_t h = name_hash(name, len);
	for (struct uent *e = d->hash[h & (d->nhash - 1)]; e; e = e->hnext)
		if (e->hash == h && e->r.namelen == len && memcmp(e->name, name, len) == 0)
			return e;
	return NULL;
}

static struct uent *ent_new(struct ufs *fs, const char *name, size_t len)
{
	struct uent *e = upool_alloc(fs, sizeof *e + len + 1);
	if (e == NULL)
		return NULL;
	memcpy(e->name, name, len);
	e->name[len] = 0;
	e->hash = name_hash(name, len);
	e->blk = -1;
	return e;
}

/* Hash it and give it a readdir position. */
static int ent_link(struct udir *d, struct uent *e)
{
	if (d->nents + 1 > d->nhash && hash_grow(d) < 0)
		return -ENOMEM;
	if (d->npos == d->poscap) {
		uint32_t cap = d->poscap ? d->poscap * 2 : 16;
		struct uent **p = realloc(d->pos, cap * sizeof *p);
		if (p == NULL)
			return -ENOMEM;
		d->pos = p;
		d->poscap = cap;
	}
	e->pos = d->npos;
	d->pos[d->npos++] = e;
	e->hnext = d->hash[e->hash & (d->nhash - 1)];
	d->hash[e->hash & (d->nhash - 1)] = e;
	e->dir = d;
	d->nents++;
	if (e->r.type == UFS_T_DIR)
		d->nsubdirs++;
	return 0;
}

static void ent_unlink(struct udir *d, struct uent *e)
{
	struct uent **pp = &d->hash[e->hash & (d->nhash - 1)];
	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	e->hnext = NULL;
	d->pos[e->pos] = NULL;
	d->nents--;
	if (e->r.type == UFS_T_DIR)
		d->nsubdirs--;
}

static uint32_t blk_room(const struct udir *d, uint32_t i)
{
	return (i == 0 ? UFS_BSIZE - UFS_HEAD_REC : UFS_REC_SPACE) - d->blk[i].used;
}

static int blk_new(struct udir *d)
{
	if (d->nblk == d->blkcap) {
		uint32_t cap = d->blkcap ? d->blkcap * 2 : 4;
		struct ublk *b = realloc(d->blk, cap * sizeof *b);
		if (b == NULL)
			return -ENOMEM;
		d->blk = b;
		d->blkcap = cap;
	}
	memset(&d->blk[d->nblk], 0, sizeof d->blk[0]);
	return (int)d->nblk++;
}

static void blk_put(struct udir *d, struct uent *e, uint32_t i)
{
	struct ublk *b = &d->blk[i];
	e->blk = (int32_t)i;
	e->bprev = NULL;
	e->bnext = b->first;
	if (b->first)
		b->first->bprev = e;
	b->first = e;
	b->used += e->r.reclen;
}

static void blk_take(struct udir *d, struct uent *e)
{
	if (e->blk < 0)
		return;
	struct ublk *b = &d->blk[e->blk];
	if (e->bprev)
		e->bprev->bnext = e->bnext;
	else
		b->first = e->bnext;
	if (e->bnext)
		e->bnext->bprev = e->bprev;
	b->used -= e->r.reclen;
	b->dirty = 1;
	if ((uint32_t)e->blk < d->fill)
		d->fill = (uint32_t)e->blk;
	e->blk = -1;
	e->bprev = e->bnext = NULL;
}

/* Give e a record block with room for it. */
static int blk_assign(struct udir *d, struct uent *e)
{
	uint32_t need = e->r.reclen;
	if (d->nblk == 0 && blk_new(d) < 0)
		return -ENOMEM;
	uint32_t i = d->fill < d->nblk ? d->fill : 0;
	for (; i < d->nblk; i++)
		if (blk_room(d, i) >= need)
			break;
	if (i == d->nblk) {
		int k = blk_new(d);
		if (k < 0)
			return k;
		i = (uint32_t)k;
	}
	d->fill = i;
	blk_put(d, e, i);
	d->blk[i].dirty = 1;
	return 0;
}

void ufs_dir_dirty(struct ufs *fs, struct udir *d)
{
	if (d->dirty)
		return;
	d->dirty = 1;
	UFS_LIST_PUSH(&fs->dirty, d, dnext, dprev);
}

void ufs_ent_dirty(struct ufs *fs, struct uent *e)
{
	if (e->dir == NULL)
		return;
	if (e->blk >= 0)
		e->dir->blk[e->blk].dirty = 1;
	ufs_dir_dirty(fs, e->dir);
}

int ufs_dir_add(struct ufs *fs, struct udir *d, const char *name, const struct ufs_drec *r,
                struct uent **out)
{
	size_t len = strlen(name);
	if (len == 0)
		return -ENOENT;
	if (len > UFS_NAME_MAX)
		return -ENAMETOOLONG;
	if (d->damaged)
		return -EIO;
	struct uent *e = ent_new(fs, name, len);
	if (e == NULL)
		return -ENOMEM;
	e->r = *r;
	e->r.namelen = (uint8_t)len;
	e->r.reclen = (uint16_t)ufs_reclen((uint32_t)len);
	int err = ent_link(d, e);
	if (err == 0 && (err = blk_assign(d, e)) < 0)
		ent_unlink(d, e);
	if (err < 0) {
		upool_free(fs, e);
		return err;
	}
	ufs_dir_dirty(fs, d);
	d->cntchg = 1;
	fs->pending++;
	*out = e;
	return 0;
}

void ufs_dir_remove(struct ufs *fs, struct udir *d, struct uent *e)
{
	blk_take(d, e);
	ent_unlink(d, e);
	e->dir = NULL;
	e->gnext = d->gone;
	e->ongone = 1;
	d->gone = e;
	ufs_dir_dirty(fs, d);
	d->cntchg = 1;
	fs->pending--;
}

void ufs_doom_ent(struct ufs *fs, struct uent *e)
{
	if (e->moved)
		return;                   /* another name has its node */
	if (e->r.where == UFS_W_NODE && e->r.loc != 0)
		ufs_doom(fs, e->r.loc);   /* (a node never committed may have been written back) */
	if (e->committed && e->dr.where == UFS_W_NODE && e->dr.loc != e->r.loc)
		ufs_doom(fs, e->dr.loc);
}

void ufs_dir_memonly(struct ufs *fs, struct udir *d, struct uent *e)
{
	blk_take(d, e);
	e->memonly = 1;
	ufs_dir_dirty(fs, d);
	d->cntchg = 1;
}

int ufs_dir_rename(struct ufs *fs, struct udir *d, struct uent *e, const char *name,
                   struct uent **out)
{
	/* A new entry with the new name takes over the old one's record, its
	 * committed state and its object; the old one simply goes (what it
	 * points to stays with the new name). */
	struct uent *ne;
	int err = ufs_dir_add(fs, d, name, &e->r, &ne);
	if (err < 0)
		return err;
	ne->dr = e->dr;
	ne->committed = e->committed;
	ne->memonly = e->memonly;
	if (ne->memonly)
		blk_take(d, ne);
	ne->ip = e->ip;
	if (ne->ip)
		ne->ip->ent = ne;
	e->ip = NULL;
	e->moved = 1;
	ufs_dir_remove(fs, d, e);
	*out = ne;
	return 0;
}

int ufs_dir_next(struct udir *d, uint64_t *cookie, struct uent **out)
{
	while (*cookie < d->npos) {
		struct uent *e = d->pos[(*cookie)++];
		if (e != NULL) {
			*out = e;
			return 1;
		}
	}
	return 0;
}

/* ---- loading ------------------------------------------------------------------------- */

static int rec_ok(struct ufs *fs, const struct ufs_drec *r, uint32_t room)
{
	if (r->reclen < sizeof *r || r->reclen % 8 != 0 || r->reclen > room || r->namelen == 0 ||
	    r->namelen > UFS_NAME_MAX || ufs_reclen(r->namelen) > r->reclen || r->flags != 0 ||
	    r->reserved != 0 || r->id == 0 || r->persist > LIBFS_P_WRITETHROUGH)
		return 0;
	const char *name = (const char *)(r + 1);
	for (uint32_t i = 0; i < r->namelen; i++)
		if (name[i] == '/' || name[i] == 0)
			return 0;
	if ((r->namelen == 1 && name[0] == '.') || (r->namelen == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if (r->type == UFS_T_DIR)
		return r->where == UFS_W_NODE && ufs_xref_slot(r->loc) < UFS_XPB &&
		       ufs_xref_sector(r->loc) % UFS_XBLK_SECT == 0 &&
		       ufs_xref_sector(r->loc) < fs->k.fm.nsectors;
	if (r->type != UFS_T_REG)
		return 0;
	switch (r->where) {
	case UFS_W_NONE:
		return r->size == 0 && r->loc == 0;
	case UFS_W_SMALL:
		return r->size > 0 && r->size <= UFS_SMALL_MAX && r->loc < fs->k.fm.nsectors;
	case UFS_W_NODE:
		return ufs_xref_slot(r->loc) < UFS_XPB && ufs_xref_sector(r->loc) % UFS_XBLK_SECT == 0 &&
		       ufs_xref_sector(r->loc) < fs->k.fm.nsectors && r->size <= (uint64_t)INT64_MAX;
	}
	return 0;
}

/* Check a block read at sector against the pointer that named it. */
static int blk_ok(struct ufs *fs, struct udir *d, const uint8_t *b, uint64_t sector, uint32_t csum,
                  int kind)
{
	const struct ufs_dblk *h = (const void *)b;
	uint32_t c = ufs_dblk_csum(b);
	if (h->csum != c)
		return ufs_damage(fs, "directory block fails its checksum", sector, d->m.id);
	if (c != csum)
		return ufs_damage(fs, "directory block is not the one its pointer names (stale or misplaced)",
		                  sector, d->m.id);
	if (h->magic != UFS_DBLK_MAGIC || h->kind != kind || h->dir_id != d->m.id || h->seq > d->m.seq)
		return ufs_damage(fs, "directory block header is wrong", sector, d->m.id);
	uint32_t ptrs = kind == UFS_DB_HEAD ? UFS_HEAD_PTRS : kind == UFS_DB_TABLE ? UFS_TABLE_PTRS : 0;
	uint32_t off = kind == UFS_DB_HEAD ? UFS_HEAD_REC : 32;
	if (h->nptr > ptrs || (h->rec_len > 0 && (h->rec_off != off || h->rec_len > UFS_BSIZE - off)) ||
	    (kind == UFS_DB_TABLE && h->rec_len != 0))
		return ufs_damage(fs, "directory block header is wrong", sector, d->m.id);
	return 0;
}

/* The records of block b (index i) into the directory. */
static int load_records(struct ufs *fs, struct udir *d, const uint8_t *b, uint64_t sector, uint32_t i)
{
	const struct ufs_dblk *h = (const void *)b;
	uint32_t off = h->rec_off, end = (uint32_t)h->rec_off + h->rec_len;
	while (off < end) {
		const struct ufs_drec *r = (const void *)(b + off);
		if (end - off < sizeof *r || !rec_ok(fs, r, end - off))
			return ufs_damage(fs, "malformed record", sector, d->m.id);
		const char *name = (const char *)(r + 1);
		if (ufs_dir_find(d, name, r->namelen) != NULL)
			return ufs_damage(fs, "a name twice", sector, d->m.id);
		if (r->where == UFS_W_SMALL &&
		    ds_claim(&d->sp, r->loc, (r->size + UFS_SECT - 1) / UFS_SECT) < 0)
			return ufs_damage(fs, "a small file's bytes outside the space, or shared", sector,
			                  d->m.id);
		struct uent *e = ent_new(fs, name, r->namelen);
		if (e == NULL)
			return -ENOMEM;
		memcpy(&e->r, r, sizeof *r);
		e->r.reclen = (uint16_t)ufs_reclen(r->namelen);
		e->dr = e->r;
		e->committed = 1;
		int err = ent_link(d, e);
		if (err < 0) {
			upool_free(fs, e);
			return err;
		}
		blk_put(d, e, i);
		off += r->reclen;
	}
	return 0;
}

/* Read the directory blocks at ptrs (not yet cached ones all at once). */
static int read_blocks(struct ufs *fs, struct udir *d, const struct ufs_dptr *ptrs, uint32_t n,
                       uint8_t *bufs)
{
	struct uio w;
	uio_init(&w, fs, 0);
	int err = 0;
	for (uint32_t i = 0; i < n && err == 0; i++) {
		const uint8_t *g = ds_group(d, ptrs[i].sector, UFS_BSECT);
		if (g != NULL) {
			memcpy(bufs + (size_t)i * UFS_BSIZE, g, UFS_BSIZE);
			continue;
		}
		struct bbuf *b = bc_lookup(&fs->bc, ds_owner(d), ptrs[i].sector / UFS_BSECT);
		if (b != NULL && (b->flags & BB_VALID)) {
			memcpy(bufs + (size_t)i * UFS_BSIZE, b->data, UFS_BSIZE);
			continue;
		}
		struct dsext *e = ds_find(&d->sp, ptrs[i].sector);
		if (ptrs[i].sector % UFS_BSECT != 0 || e == NULL || ptrs[i].sector + UFS_BSECT > e->sector + e->nsect)
			err = ufs_damage(fs, "directory block outside the space", ptrs[i].sector, d->m.id);
		else
			err = uio_direct(&w, ufs_xn_prot(fs, &d->x), ptrs[i].sector, bufs + (size_t)i * UFS_BSIZE,
			                 UFS_BSIZE, NULL);
	}
	int e2 = uio_finish(&w);
	return err ? err : e2;
}

static int load_blocks(struct ufs *fs, struct udir *d)
{
	uint8_t *head = malloc(UFS_BSIZE);
	if (head == NULL)
		return -ENOMEM;
	uint8_t *bufs = NULL, *tabs = NULL;
	struct ufs_dptr *recs = NULL;
	uint32_t nrec = 0, nblocks = 1;
	struct ufs_dptr hp = { d->m.head, d->m.head_csum, UFS_DB_HEAD, { 0 } };
	int err = read_blocks(fs, d, &hp, 1, head);
	if (err == 0)
		err = blk_ok(fs, d, head, d->m.head, d->m.head_csum, UFS_DB_HEAD);
	if (err == 0 && ((const struct ufs_dblk *)head)->seq != d->m.seq)
		err = ufs_damage(fs, "head block is not the dnode's", d->m.head, d->m.id);
	if (err == 0 && ds_claim(&d->sp, d->m.head, UFS_BSECT) < 0)
		err = ufs_damage(fs, "head block outside the space, or shared", d->m.head, d->m.id);
	const struct ufs_dblk *h = (const void *)head;
	const struct ufs_dptr *hptr = (const void *)(head + 32);
	int tables = h->nptr > 0 && hptr[0].kind == UFS_DB_TABLE;
	for (uint32_t i = 0; err == 0 && i < h->nptr; i++)
		if (hptr[i].kind != (tables ? UFS_DB_TABLE : UFS_DB_RECORDS))
			err = ufs_damage(fs, "head mixes table and record pointers", d->m.head, d->m.id);
	if (err == 0 && tables) {
		/* Table blocks, then the record blocks they list. */
		tabs = malloc((size_t)h->nptr * UFS_BSIZE);
		d->tables = malloc(h->nptr * sizeof *d->tables);
		if (tabs == NULL || d->tables == NULL)
			err = -ENOMEM;
		if (err == 0)
			err = read_blocks(fs, d, hptr, h->nptr, tabs);
		uint32_t total = 0;
		for (uint32_t t = 0; err == 0 && t < h->nptr; t++) {
			const uint8_t *tb = tabs + (size_t)t * UFS_BSIZE;
			err = blk_ok(fs, d, tb, hptr[t].sector, hptr[t].csum, UFS_DB_TABLE);
			if (err == 0 && ds_claim(&d->sp, hptr[t].sector, UFS_BSECT) < 0)
				err = ufs_damage(fs, "table block shared", hptr[t].sector, d->m.id);
			if (err == 0)
				total += ((const struct ufs_dblk *)tb)->nptr;
			d->tables[t] = hptr[t];
		}
		d->ntables = (int)h->nptr;
		nblocks += h->nptr;
		if (err == 0 && (recs = malloc((total ? total : 1) * sizeof *recs)) == NULL)
			err = -ENOMEM;
		for (uint32_t t = 0; err == 0 && t < h->nptr; t++) {
			const uint8_t *tb = tabs + (size_t)t * UFS_BSIZE;
			const struct ufs_dblk *th = (const void *)tb;
			memcpy(recs + nrec, tb + 32, th->nptr * sizeof *recs);
			nrec += th->nptr;
		}
	} else if (err == 0) {
		nrec = h->nptr;
		if ((recs = malloc((nrec ? nrec : 1) * sizeof *recs)) == NULL)
			err = -ENOMEM;
		else
			memcpy(recs, hptr, nrec * sizeof *recs);
	}
	for (uint32_t i = 0; err == 0 && i < nrec; i++)
		if (recs[i].kind != UFS_DB_RECORDS)
			err = ufs_damage(fs, "table lists something other than record blocks", d->m.head, d->m.id);
	if (err == 0 && nrec > 0 && (bufs = malloc((size_t)nrec * UFS_BSIZE)) == NULL)
		err = -ENOMEM;
	if (err == 0 && nrec > 0)
		err = read_blocks(fs, d, recs, nrec, bufs);
	nblocks += nrec;
	if (err == 0 && nblocks != d->m.nblocks)
		err = ufs_damage(fs, "dnode's count of blocks is wrong", d->m.head, d->m.id);
	/* The head's records are block 0; record block i is block i + 1. */
	if (err == 0 && blk_new(d) < 0)
		err = -ENOMEM;
	if (err == 0) {
		d->blk[0].sector = d->m.head;
		d->blk[0].csum = d->m.head_csum;
		err = load_records(fs, d, head, d->m.head, 0);
	}
	for (uint32_t i = 0; err == 0 && i < nrec; i++) {
		const uint8_t *b = bufs + (size_t)i * UFS_BSIZE;
		err = blk_ok(fs, d, b, recs[i].sector, recs[i].csum, UFS_DB_RECORDS);
		if (err == 0 && ds_claim(&d->sp, recs[i].sector, UFS_BSECT) < 0)
			err = ufs_damage(fs, "record block shared", recs[i].sector, d->m.id);
		int k = err == 0 ? blk_new(d) : -1;
		if (err == 0 && k < 0)
			err = -ENOMEM;
		if (err == 0) {
			d->blk[k].sector = recs[i].sector;
			d->blk[k].csum = recs[i].csum;
			err = load_records(fs, d, b, recs[i].sector, (uint32_t)k);
		}
	}
	free(head);
	free(tabs);
	free(bufs);
	free(recs);
	return err;
}

int ufs_dir_load(struct ufs *fs, struct udir *d, uint64_t id)
{
	uint8_t *page = fs->page;
	int64_t r = ufs_xn_snapshot(fs, &d->x, page);
	if (r < 0)
		return r == ED_E_NOMEM || r == ED_E_NOMAP ? -ENOMEM
		       : ufs_damage(fs, "dnode unreadable", d->x.sector, id);
	const struct ed_xnmap_hdr *h = (const void *)page;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	int have = 0;
	if (h->length != UFS_XN_BYTES)
		return ufs_damage(fs, "not a dnode (wrong size)", d->x.sector, id);
	for (uint32_t i = 0; i < h->nent; i++) {
		if (ent[i].type == ED_ENT_EXTENT)
			continue;
		if (ent[i].type != ED_ENT_DATA || ent[i].idx != UFS_E_META ||
		    ent[i].len != sizeof(struct ufs_xmeta) || ent[i].a + ent[i].len > 4096)
			return ufs_damage(fs, "dnode holds an entry unixfs never makes", d->x.sector, id);
		memcpy(&d->m, page + ent[i].a, sizeof d->m);
		have = 1;
	}
	const struct ufs_xmeta *m = &d->m;
	if (!have || m->magic != UFS_XMETA_MAGIC || m->kind != UFS_K_DIR || m->version != UFS_VERSION ||
	    (id != 0 && m->id != id) || m->flags != 0 ||
	    (m->nrec != 0 && (fs->sb.version < UFS_SB_NREC || m->head == 0)) ||
	    (m->head == 0) != (m->nblocks == 0))
		return ufs_damage(fs, "not the dnode its name says", d->x.sector, id);
	int err = ds_load(fs, d, page);
	if (err == 0 && m->head != 0) {
		/* A small directory (its space a group, dspace.c) comes in
		 * whole, names and small files in one request, when the caller
		 * is about to read a file (open for reading), or when it was
		 * read ahead; otherwise only its blocks (the small files' bytes
		 * cost transfer time on a real disk: a 100 KiB group is two
		 * seeks' worth), and the whole of it on the first read of a
		 * small file's bytes (ds_read). */
		if (!ufs_ahead_take(fs, d) && fs->want_data)
			err = ds_read_all(fs, d);
		if (err == 0)
			err = load_blocks(fs, d);
	}
	if (err < 0)
		return err;
	d->pm = d->m;
	d->loaded = 1;
	d->ndisk = d->nents;          /* (the file count: super.c) */
	return 0;
}

void ufs_dir_free(struct ufs *fs, struct udir *d)
{
	for (uint32_t i = 0; i < d->npos; i++)
		if (d->pos[i] && d->pos[i]->ip == NULL)
			upool_free(fs, d->pos[i]);
		else if (d->pos[i])
			d->pos[i]->dir = NULL;
	while (d->gone) {
		struct uent *e = d->gone;
		d->gone = e->gnext;
		if (e->ip == NULL)
			upool_free(fs, e);
	}
	free(d->hash);
	free(d->pos);
	free(d->blk);
	free(d->tables);
	ds_group_drop(fs, d);
	ds_destroy(&d->sp);
	free(d);
}

/* ---- committing -------------------------------------------------------------------------- */

/* The record an entry has in the commit being prepared, or NULL if it is
 * left out (memory-only, or new and its bytes could not be written). */
static const struct ufs_drec *version(const struct uent *e)
{
	if (e->memonly)
		return NULL;
	if (e->failed)
		return e->committed ? &e->dr : NULL;
	if (e->r.where == UFS_W_SMALL && e->r.loc == 0)
		return e->committed ? &e->dr : NULL;
	return &e->r;
}

/* Records of block i into area (room bytes); returns the bytes used. */
static uint32_t put_records(const struct udir *d, uint32_t i, uint8_t *area)
{
	uint32_t off = 0;
	for (const struct uent *e = d->blk[i].first; e; e = e->bnext) {
		const struct ufs_drec *r = version(e);
		if (r == NULL)
			continue;
		struct ufs_drec *o = (void *)(area + off);
		memcpy(o, r, sizeof *o);
		o->reclen = e->r.reclen;
		o->namelen = e->r.namelen;
		memcpy(o + 1, e->name, e->r.namelen);
		memset((uint8_t *)(o + 1) + e->r.namelen, 0, e->r.reclen - sizeof *o - e->r.namelen);
		off += e->r.reclen;
	}
	return off;
}

static void seal(uint8_t *b, const struct udir *d, int kind, uint16_t nptr, uint16_t rec_off,
                 uint16_t rec_len)
{
	struct ufs_dblk *h = (void *)b;
	h->magic = UFS_DBLK_MAGIC;
	h->csum = 0;
	h->dir_id = d->m.id;
	h->seq = d->m.seq + 1;
	h->kind = (uint8_t)kind;
	h->pad = 0;
	h->nptr = nptr;
	h->rec_off = rec_off;
	h->rec_len = rec_len;
	h->csum = ufs_dblk_csum(b);
}

/* A new block of the space for a directory block; written through w. */
static int put_block(struct ufs *fs, struct udir *d, struct uio *w, const uint8_t *b, uint64_t *sector)
{
	int err = ds_alloc(fs, d, UFS_BSECT, UFS_BSECT, 0, sector);
	if (err < 0)
		return err;
	ds_note_tmp(&d->sp, *sector, UFS_BSECT);
	ds_written(fs, d, *sector, b, UFS_BSIZE);
	return uio_write(w, ufs_xn_prot(fs, &d->x), *sector, b, UFS_BSIZE, d);
}

/* Does anything of the directory's blocks need writing? */
static int changed(const struct udir *d)
{
	if (d->gone != NULL || d->m.head == 0)
		return 1;
	for (uint32_t i = 0; i < d->nblk; i++)
		if (d->blk[i].dirty)
			return 1;
	return 0;
}

/* The records a commit of d now would hold. */
static uint32_t records_now(const struct udir *d)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < d->npos; i++)
		n += d->pos[i] != NULL && version(d->pos[i]) != NULL;
	return n;
}

int ufs_dir_prepare(struct ufs *fs, struct udir *d, struct uio *w)
{
	if (d->damaged)
		return -EIO;
	d->newhead = d->m.head;
	d->newcsum = d->m.head_csum;
	d->newnblocks = d->m.nblocks;
	d->newnrec = d->ndisk;
	/* What this commit stops naming is worked out afresh against the
	 * directory as it is; blocks an earlier, unfinished attempt wrote are
	 * not freed here (they may be named by a dnode write-back that did
	 * happen: leaving them costs only space until the next load). */
	d->sp.nlater = 0;
	if (!changed(d))
		return 0;
	uint8_t *b = fs->page;
	struct udspace *sp = &d->sp;
	int err = 0;
	/* What this commit stops pointing at, freed once it is durable; and,
	 * in the same pass over the names (a directory of thousands, spread
	 * over memory, is worth walking once, not twice), the records the
	 * commit will hold (as records_now counts them). */
	for (struct uent *e = d->gone; e && err == 0; e = e->gnext)
		if (e->committed && e->dr.where == UFS_W_SMALL && e->moved != 1)
			err = ds_free_later(sp, e->dr.loc, (e->dr.size + UFS_SECT - 1) / UFS_SECT);
	uint32_t nnow = 0;
	for (uint32_t i = 0; i < d->npos; i++) {
		const struct uent *e = d->pos[i];
		if (e == NULL)
			continue;
		const struct ufs_drec *v = version(e);
		nnow += v != NULL;
		if (err != 0 || !e->committed || e->dr.where != UFS_W_SMALL)
			continue;
		if (v == NULL || v->where != UFS_W_SMALL || v->loc != e->dr.loc)
			err = ds_free_later(sp, e->dr.loc, (e->dr.size + UFS_SECT - 1) / UFS_SECT);
	}
	d->newnrec = nnow;
	/* Record blocks 1..: the changed ones to new places. */
	uint32_t nrec = 0;
	for (uint32_t i = 1; i < d->nblk && err == 0; i++) {
		struct ublk *k = &d->blk[i];
		k->nsector = k->sector;
		k->ncsum = k->csum;
		if (!k->dirty && k->sector != 0) {
			nrec++;
			continue;
		}
		if (k->sector != 0)
			err = ds_free_later(sp, k->sector, UFS_BSECT);
		memset(b, 0, UFS_BSIZE);
		uint32_t len = put_records(d, i, b + 32);
		if (len == 0 || err < 0) {
			k->nsector = 0;         /* empty: not listed any more */
			continue;
		}
		seal(b, d, UFS_DB_RECORDS, 0, 32, (uint16_t)len);
		k->ncsum = ((struct ufs_dblk *)b)->csum;
		err = put_block(fs, d, w, b, &k->nsector);
		nrec++;
	}
	/* Table blocks, for a directory of more record blocks than a head
	 * lists: all of them rewritten. */
	uint32_t ntab = nrec > UFS_HEAD_PTRS ? (nrec + UFS_TABLE_PTRS - 1) / UFS_TABLE_PTRS : 0;
	struct ufs_dptr *tabs = NULL;
	if (err == 0 && ntab > UFS_HEAD_PTRS)
		err = -EFBIG;
	if (err == 0 && ntab > 0 && (tabs = calloc(ntab, sizeof *tabs)) == NULL)
		err = -ENOMEM;
	uint32_t bi = 1;
	for (uint32_t t = 0; t < ntab && err == 0; t++) {
		memset(b, 0, UFS_BSIZE);
		struct ufs_dptr *p = (void *)(b + 32);
		uint16_t np = 0;
		for (; bi < d->nblk && np < UFS_TABLE_PTRS; bi++)
			if (d->blk[bi].nsector != 0)
				p[np++] = (struct ufs_dptr){ d->blk[bi].nsector, d->blk[bi].ncsum, UFS_DB_RECORDS, { 0 } };
		seal(b, d, UFS_DB_TABLE, np, 0, 0);
		tabs[t].csum = ((struct ufs_dblk *)b)->csum;
		tabs[t].kind = UFS_DB_TABLE;
		err = put_block(fs, d, w, b, &tabs[t].sector);
	}
	for (int t = 0; t < d->ntables && err == 0; t++)
		err = ds_free_later(sp, d->tables[t].sector, UFS_BSECT);
	/* The head: pointers, and block 0's records. */
	if (err == 0) {
		memset(b, 0, UFS_BSIZE);
		struct ufs_dptr *p = (void *)(b + 32);
		uint16_t np = 0;
		if (ntab > 0) {
			memcpy(p, tabs, ntab * sizeof *p);
			np = (uint16_t)ntab;
		} else {
			for (uint32_t i = 1; i < d->nblk; i++)
				if (d->blk[i].nsector != 0)
					p[np++] = (struct ufs_dptr){ d->blk[i].nsector, d->blk[i].ncsum, UFS_DB_RECORDS, { 0 } };
		}
		uint32_t len = d->nblk > 0 ? put_records(d, 0, b + UFS_HEAD_REC) : 0;
		if (np == 0 && len == 0) {
			/* No names: no head. */
			d->newhead = 0;
			d->newcsum = 0;
			d->newnblocks = 0;
		} else {
			seal(b, d, UFS_DB_HEAD, np, len ? UFS_HEAD_REC : 0, (uint16_t)len);
			d->newcsum = ((struct ufs_dblk *)b)->csum;
			d->newnblocks = 1 + ntab + nrec;
			err = put_block(fs, d, w, b, &d->newhead);
		}
		if (err == 0 && d->m.head != 0)
			err = ds_free_later(sp, d->m.head, UFS_BSECT);
	}
	if (err < 0) {
		free(tabs);
		ufs_dir_abort(fs, d);
		return err;
	}
	free(d->tables);
	d->tables = tabs;
	d->ntables = (int)ntab;
	return 0;
}

int ufs_dir_publish(struct ufs *fs, struct udir *d)
{
	struct ufs_xmeta m = d->m;
	if (m.head != d->newhead || m.head_csum != d->newcsum) {
		m.head = d->newhead;
		m.head_csum = d->newcsum;
		m.nblocks = d->newnblocks;
		m.seq++;
		/* (Version 5: the count of its records goes with the commit;
		 * the file count may rest on it: super.c.) */
		m.nrec = fs->sb.version >= UFS_SB_NREC && m.head != 0 ? d->newnrec : 0;
	}
	if (memcmp(&m, &d->pm, sizeof m) != 0) {
		int64_t r = ufs_xn_add_data(fs, &d->x, UFS_E_META, &m, sizeof m, 0);
		if (r < 0)
			return kit_err(r);
		d->pm = m;
	}
	d->m = m;
	/* The blocks just written are named now (in the exodisk cache, and
	 * perhaps on disk any moment): they are never given back by an abort. */
	d->sp.ntmp = 0;
	return 0;
}

void ufs_dir_done(struct ufs *fs, struct udir *d)
{
	for (uint32_t i = 1; i < d->nblk; i++) {
		d->blk[i].sector = d->blk[i].nsector;
		d->blk[i].csum = d->blk[i].ncsum;
		d->blk[i].dirty = 0;
	}
	if (d->nblk > 0) {
		d->blk[0].sector = d->m.head;
		d->blk[0].csum = d->m.head_csum;
		d->blk[0].dirty = 0;
	}
	uint32_t records = 0, later = 0;
	for (uint32_t i = 0; i < d->npos; i++) {
		struct uent *e = d->pos[i];
		if (e == NULL)
			continue;
		const struct ufs_drec *v = version(e);
		if (v != NULL) {
			e->dr = *v;
			e->committed = 1;
			records++;
		} else if (e->memonly) {
			e->committed = 0;
		} else {
			later++;          /* a new file whose bytes could not be placed */
		}
	}
	ds_committed(&d->sp);
	/* The removed names are gone from disk: what they named can go too,
	 * unless another name has it (a rename) or it is still open.  A
	 * removed directory still open takes its durable records out of the
	 * count now (one no longer in memory left them in d->dropw). */
	uint64_t gone = 0;
	while (d->gone) {
		struct uent *e = d->gone;
		d->gone = e->gnext;
		e->gnext = NULL;
		e->ongone = 0;
		if (e->ip != NULL && e->ip->d != NULL && !e->moved) {
			gone += ufs_dir_weight(e->ip->d);
			e->ip->d->ndisk = 0;
			e->ip->d->dropw = 0;
		}
		/* An open object keeps its node until its last close (inode.c). */
		if (e->ip != NULL)
			continue;
		ufs_doom_ent(fs, e);
		upool_free(fs, e);
	}
	ufs_count_dir(fs, d, records, gone);
	if (later)
		d->cntchg = 1;            /* its commit will change the count */
}

int64_t ufs_dir_count_change(const struct udir *d)
{
	int64_t n = records_now(d);
	for (const struct uent *e = d->gone; e != NULL; e = e->gnext)
		if (e->ip != NULL && e->ip->d != NULL && !e->moved)
			n -= (int64_t)ufs_dir_weight(e->ip->d);
	return n - (int64_t)d->ndisk - (int64_t)d->dropw;
}

void ufs_dir_abort(struct ufs *fs, struct udir *d)
{
	(void)fs;
	ds_abort(&d->sp);
	d->sp.nlater = 0;
}
