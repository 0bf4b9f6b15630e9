/*
 * sync.c - making unixfs durable without ever letting a durable pointer
 * name something that is not durable.
 *
 * The pointers unixfs has: the superblock names the root dnode; a dnode's
 * entry 0 names its head block (with its checksum), the head its table or
 * record blocks; a record names its small file's sectors, or a dnode or
 * fnode; an fnode's entries name extents and map nodes.  The rules:
 *
 *  1. Whatever a dnode or fnode says may become durable at any moment: the
 *     exodisk writes back a whole block of four when any of them is
 *     written, and a full exodisk cache forces write-backs we do not
 *     schedule.  So an existing dnode's entry 0 is changed only in step 5
 *     below, after what it will name is durable; extents may be added to
 *     any node early (nothing durable points into them yet); a new dnode
 *     is not named by anything durable until its parent's commit.
 *  2. Directory blocks are copy-on-write: a commit writes them to free
 *     sectors, never over the ones the durable tree uses.
 *  3. Sectors (directory blocks, small files' bytes, extents, whole nodes)
 *     that a commit stops naming are reused or freed only after that
 *     commit is durable.
 *  4. Write-back goes deepest first (xops.c): map nodes before fnodes, the
 *     superblock (file id counter, renames in progress) last.
 *
 * A sync therefore runs in steps:
 *   1. every dirty file's bytes go out (small files to new sectors of their
 *      directory's space; large files' blocks to their extents), and every
 *      changed directory's blocks to new sectors beside them - all in
 *      flight together, gathered into few requests;
 *   2. every changed node is written back, deepest first, the superblock
 *      last - while the writes of step 1 are in flight when they are few
 *      (all of it may become durable at any moment anyway, rule 1); then
 *      new dnodes get their first head, written back too.  (The dnodes
 *      step 5 writes back anyway wait for it: writeback_early.)  The
 *      superblock goes with the dnodes when the file count changes: it
 *      names the one commit that changes it, or says "not known"
 *      (super.c);
 *   3. barrier (the device's cache is flushed): steps 1 and 2 are durable;
 *   4. (nothing: the waits of 1 and 2 are done);
 *   5. each changed directory's dnode gets its new head and is written
 *      back: the commit point, one atomic exodisk write-back per block;
 *   6. what the commits stopped naming is freed: old directory blocks,
 *      old small files' sectors, nodes of removed names, space a directory
 *      no longer needs; renames whose old name is now gone are forgotten;
 *      the file count, if several directories changed it; written back
 *      again.
 * A directory whose files or blocks could not be written is not committed
 * (its durable state stays the last one), and nothing of it is dropped:
 * it stays dirty for the next sync, and the sync reports the error.  A
 * file whose bytes could not be placed (a full disk) is committed as it
 * last was, the others of its directory as they are now.
 *
 * fsync of a file commits its directory alone when that directory's name
 * (and every ancestor's) is durable; otherwise it is a sync.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

/* ---- the superblock and renames ------------------------------------------------------ */

int ufs_push_sb(struct ufs *fs)
{
	return ufs_push_sb_at(fs, -1);
}

int ufs_push_sb_at(struct ufs *fs, int depth)
{
	struct uxn x;
	ufs_xn_set(&x, fs->sb_sector, 0);
	/* (Versions 2 and 3: their shorter entry, as their builds read it.) */
	uint32_t len = fs->sb.version >= UFS_SB_FILES ? sizeof fs->sb : UFS_SUPER_V3_BYTES;
	int64_t r = ufs_xn_add_data(fs, &x, UFS_E_SUPER, &fs->sb, len, depth);
	return r < 0 ? kit_err(r) : 0;
}

static int intent_free(struct ufs *fs)
{
	for (int i = 0; i < UFS_NINTENT; i++)
		if (fs->sb.intent[i].id == 0 && !fs->intent_done[i])
			return i;
	return -1;
}

int ufs_intent_reserve(struct ufs *fs)
{
	int i = intent_free(fs);
	if (i < 0) {
		int err = ufs_sync(fs);
		if (err < 0)
			return err;
		i = intent_free(fs);
	}
	return i < 0 ? -EBUSY : i;
}

int ufs_intent_set(struct ufs *fs, int slot, const struct ufs_intent *in)
{
	fs->sb.intent[slot] = *in;
	return ufs_push_sb(fs);
}

int ufs_intent_explains(struct ufs *fs, uint64_t id)
{
	for (int i = 0; i < UFS_NINTENT; i++)
		if (fs->sb.intent[i].id == id)
			return 1;
	return 0;
}

/* ---- the steps ----------------------------------------------------------------------- */

/* Settle what the I/O just finished carried (fs->wfiles, fs->wbufs). */
static void settle(struct ufs *fs)
{
	for (uint32_t i = 0; i < fs->nwbufs; i++) {
		struct udir *o = fs->wbufs[i].owner;
		if (o == NULL || o->err == 0)
			bc_clean(&fs->bc, fs->wbufs[i].b);
	}
	fs->nwbufs = 0;
	for (uint32_t i = 0; i < fs->nwfiles; i++) {
		struct uinode *ip = fs->wfiles[i];
		struct udir *o = ip->ent ? ip->ent->dir : NULL;
		ufs_small_settled(fs, ip, o == NULL || o->err == 0);
	}
	uint32_t n = fs->nwfiles;
	fs->nwfiles = 0;
	for (uint32_t i = 0; i < n; i++)
		ufs_iput(fs, fs->wfiles[i]);
}

/* Has this file anything left to write? */
static int file_clean(struct ufs *fs, struct uinode *ip)
{
	if (ip->b != NULL)
		return bc_count(&fs->bc, ip->id, 0, UINT64_MAX, 1) == 0 && ip->b->zero_from == UINT64_MAX;
	return !ip->idirty;
}

/* The order directories are committed in (and their files written): by
 * id, the order they were made in, so that what is made together lands
 * together whatever addresses the heap gave their objects (the address
 * breaks ties: ids are unique unless the disk is damaged). */
static int dir_order(uint64_t ida, uintptr_t a, uint64_t idb, uintptr_t b)
{
	if (ida != idb)
		return ida < idb ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int dir_cmp(const struct udir *a, const struct udir *b)
{
	return dir_order(a->m.id, (uintptr_t)a, b->m.id, (uintptr_t)b);
}

/* A dirty file's place in the order of by_dir, copied out of its object,
 * its name and its directory: sorting thousands of files then compares
 * entries of one array instead of following three pointers per comparison
 * into objects spread over the heap (the million-file run's write-backs,
 * issue 11: tools/memtouch). */
struct fkey {
	uint64_t dir;             /* the directory's id                          */
	uintptr_t daddr;          /* ... and object (dir_order, as dir_cmp)      */
	uint64_t id;              /* the file's                                  */
	struct uinode *ip;
};

static int by_dir(const void *x, const void *y)
{
	const struct fkey *a = x, *b = y;
	int c = dir_order(a->dir, a->daddr, b->dir, b->daddr);
	if (c != 0)
		return c;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int by_id(const void *x, const void *y)
{
	return dir_cmp(*(struct udir *const *)x, *(struct udir *const *)y);
}

/* The dirty files with bytes to write (of directory only, if set), grouped
 * by directory: a directory's files then land next to each other and go
 * out in few requests.  NULL with *n = 0 if there are none. */
static struct uinode **dirty_files(struct ufs *fs, struct udir *only, uint32_t *n, int *errp)
{
	uint32_t k = 0;
	for (struct uinode **pp = &fs->dfiles; *pp != NULL;) {
		struct uinode *ip = *pp;
		struct uent *e = ip->ent;
		if (ip->unlinked || e == NULL || e->memonly || e->dir == NULL) {
			ufs_file_undirty(fs, ip);
			continue;
		}
		k += only == NULL || e->dir == only;
		pp = &ip->fnext;
	}
	*n = 0;
	if (k == 0)
		return NULL;
	struct uinode **v = malloc(k * sizeof *v);
	struct fkey *key = malloc(k * sizeof *key);
	if (v == NULL || key == NULL) {
		free(v);
		free(key);
		*errp = -ENOMEM;
		return NULL;
	}
	for (struct uinode *ip = fs->dfiles; ip; ip = ip->fnext) {
		struct udir *d = ip->ent->dir;
		if (only == NULL || d == only)
			key[(*n)++] = (struct fkey){ d->m.id, (uintptr_t)d, ip->id, ip };
	}
	qsort(key, *n, sizeof *key, by_dir);
	for (uint32_t i = 0; i < *n; i++)
		v[i] = key[i].ip;
	free(key);
	return v;
}

/* Sectors the small files v[i..] of directory d will take, plus `more`:
 * the space grows once for them all. */
static void reserve(struct ufs *fs, struct uinode **v, uint32_t n, uint32_t i, struct udir *d,
                    uint64_t more, int slack)
{
	uint64_t need = more;
	for (; i < n && v[i]->ent->dir == d; i++)
		if (v[i]->b == NULL && v[i]->idirty)
			need += (v[i]->ent->r.size + UFS_SECT - 1) / UFS_SECT;
	if (need > 0)
		ds_reserve(fs, d, need, slack);
}

/* Step 1 for files v[*i..] of directory d (all of v if d is NULL). */
static int write_files(struct ufs *fs, struct uinode **v, uint32_t n, uint32_t *i, struct udir *d,
                       struct uio *w, int slack)
{
	int first = 0;
	struct udir *cur = NULL;
	for (; *i < n && (d == NULL || v[*i]->ent->dir == d); (*i)++) {
		if (v[*i]->ent->dir != cur) {
			cur = v[*i]->ent->dir;
			if (d == NULL)
				reserve(fs, v, n, *i, cur, 0, slack);
		}
		struct uinode *ip = v[*i];
		ip->ent->failed = 0;
		int err = ufs_flush_data(fs, ip, w, slack);
		if (err < 0) {
			ip->ent->failed = (uint8_t)(err < -255 ? EIO : -err);
			if (first == 0)
				first = err;
		}
	}
	return first;
}

/* Files written ahead wait, with their directories, in memory for the next
 * commit.  Past this many of them a write-behind is a sync instead: so a
 * program that makes files without ever syncing (a million of them, issue
 * 11) keeps the work of each write-behind and commit, and the memory held
 * for them, bounded, instead of growing with every file it made. */
#define COMMIT_FILES 16384

int ufs_writebehind(struct ufs *fs)
{
	if (fs->readonly || fs->in_sync)
		return 0;
	if (fs->ndfiles > COMMIT_FILES)
		return ufs_sync(fs);
	fs->in_sync = 1;
	for (struct udir *d = fs->dirty; d; d = d->dnext)
		d->err = 0;
	uint32_t n, i = 0;
	int err = 0;
	struct uinode **v = dirty_files(fs, NULL, &n, &err);
	struct uio w;
	uio_init(&w, fs, 1);
	if (err == 0)
		err = write_files(fs, v, n, &i, NULL, &w, 1);
	int e2 = uio_finish(&w);
	settle(fs);
	free(v);
	/* (failed marks matter only to a commit.) */
	for (struct uinode *ip = fs->dfiles; ip; ip = ip->fnext)
		if (ip->ent)
			ip->ent->failed = 0;
	fs->in_sync = 0;
	return err ? err : e2;
}

/* Is d's name durable, and every ancestor's? */
int ufs_dir_named(struct ufs *fs, struct udir *d)
{
	while (d != NULL && d->self != fs->root) {
		struct uent *e = d->self->ent;
		if (d->isnew || e == NULL || !e->committed || e->dir == NULL)
			return 0;
		d = e->dir;
	}
	return d != NULL;
}

/* The exonode blocks a commit will change, read in together before it
 * starts: each directory's dnode (its space grows, its head changes) and,
 * for a whole sync, the nodes it frees.  After an emptied exodisk cache
 * (another process, a full cache, a cold start) each would otherwise be
 * read when first used, one wait after another: deleting a large file
 * waited for its directory's dnode, then the commit, then the file's
 * fnode, then the free.  Blocks already cached cost a system call each and
 * no request.  At most PREFETCH_MAX blocks: more would only push the first
 * ones out of the cache again before they are used.  Failures do not
 * matter: the use reads the block in itself (kit_again). */
#define PREFETCH_MAX 64

struct prefetch {
	uint64_t seen[PREFETCH_MAX];
	uint32_t n;
	struct edc_slot slots[32];
	struct edc_batch b;
};

static void prefetch_one(struct ufs *fs, struct prefetch *p, struct uxn *x)
{
	if (p->n == PREFETCH_MAX)
		return;
	for (uint32_t k = 0; k < p->n; k++)
		if (p->seen[k] == x->sector)
			return;
	p->seen[p->n++] = x->sector;
	(void)edc_batch_xn_read(&p->b, ufs_xn_prot(fs, x));
}

static void prefetch(struct ufs *fs, struct udir **list, uint32_t n, int freeing)
{
	struct prefetch *p = malloc(sizeof *p);
	if (p == NULL)
		return;
	p->n = 0;
	edc_batch_init(&p->b, fs->k.c, p->slots, 32);
	for (uint32_t i = 0; i < n; i++)
		prefetch_one(fs, p, &list[i]->x);
	/* Nodes freed after the commit: those already waiting, and those of
	 * the names it removes (ufs_doom_ent, from ufs_dir_done). */
	for (uint32_t i = 0; freeing && i < fs->ndoomed; i++) {
		struct uxn x;
		ufs_xn_set(&x, ufs_xref_sector(fs->doomed[i]), (uint16_t)ufs_xref_slot(fs->doomed[i]));
		prefetch_one(fs, p, &x);
	}
	for (uint32_t i = 0; freeing && i < n; i++)
		for (const struct uent *e = list[i]->gone; e && p->n < PREFETCH_MAX; e = e->gnext) {
			uint64_t loc = e->r.where == UFS_W_NODE ? e->r.loc :
			               e->committed && e->dr.where == UFS_W_NODE ? e->dr.loc : 0;
			if (loc == 0 || e->moved || e->ip != NULL)
				continue;
			struct uxn x;
			ufs_xn_set(&x, ufs_xref_sector(loc), (uint16_t)ufs_xref_slot(loc));
			prefetch_one(fs, p, &x);
		}
	(void)edc_batch_wait(&p->b);
	free(p);
}

/* Step 1's requests up to which step 2 overlaps them (commit). */
#define EARLY_WRITES 4

static int by_sector(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static uint64_t *sector_in(uint64_t *v, uint32_t n, uint64_t sector)
{
	return bsearch(&sector, v, n, sizeof *v, by_sector);
}

/* Step 2's write-back, less the blocks that only the commit points of
 * step 5 need: the dnode of a directory already on disk that this sync
 * commits.  Such a dnode changed before the barrier only where its space
 * grew, and step 5 writes its block back anyway with the new head, so its
 * new extents become durable there, in the same atomic write-back as the
 * head that first names them.  That is one write-back fewer, and it keeps
 * the exodisk's remanence bookkeeping out of the sync: the new sectors'
 * allocation is not durable when the barrier makes their bytes durable,
 * so the barrier's flush needs no `written` log record of its own
 * (docs/exodisk.md, "Remanence"); written back before it, the allocation
 * named them unwritten and the flush had to log them written.
 * A block is held back only if nothing else in it is something a commit
 * point may name: not a new dnode, not the fnode of a file waiting for
 * its commit (two nodes share a block, and a block's write-back takes
 * both).  Without memory for the list, everything goes, as before. */
static int writeback_early(struct ufs *fs, struct udir **list, uint32_t n)
{
	struct kit_dirty *dx = &fs->dx;
	uint64_t *hold = malloc(((size_t)n + 1) * sizeof *hold);
	struct kit_dblk *held = malloc(((size_t)dx->n + 1) * sizeof *held);
	if (hold == NULL || held == NULL) {
		free(hold);
		free(held);
		return ufs_writeback_all(fs);
	}
	uint32_t nh = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!list[i]->isnew && list[i]->err == 0)
			hold[nh++] = list[i]->x.sector;
	qsort(hold, nh, sizeof *hold, by_sector);
	uint64_t *p;
	for (uint32_t i = 0; i < n; i++)
		if (list[i]->isnew && (p = sector_in(hold, nh, list[i]->x.sector)) != NULL)
			*p = UINT64_MAX;
	for (struct uinode *ip = fs->dfiles; ip; ip = ip->fnext)
		if (ip->b != NULL && (p = sector_in(hold, nh, ip->x.sector)) != NULL)
			*p = UINT64_MAX;
	/* (UINT64_MAX is no exonode block: a sector marked so holds nothing.) */
	uint32_t k = 0, nheld = 0;
	for (uint32_t j = 0; j < dx->n; j++) {
		p = sector_in(hold, nh, dx->v[j].sector);
		if (p != NULL && *p != UINT64_MAX)
			held[nheld++] = dx->v[j];
		else
			dx->v[k++] = dx->v[j];
	}
	dx->n = k;
	dx->icap = 0;              /* (the kit indexes the set again when next added to) */
	int err = ufs_writeback_all(fs);
	/* The set keeps what it could not write; the held blocks join it
	 * again (there is room: they were in it). */
	if (nheld > 0)
		memcpy(dx->v + dx->n, held, nheld * sizeof *held);
	dx->n += nheld;
	dx->icap = 0;
	free(held);
	free(hold);
	return err;
}

/* Commit the directories of list (n of them; only is set for an fsync). */
static int commit(struct ufs *fs, struct udir **list, uint32_t n, struct udir *only)
{
	int first = 0;
	for (uint32_t i = 0; i < n; i++)
		list[i]->err = 0;
	prefetch(fs, list, n, only == NULL);
	uint64_t writes0 = fs->cnt.data_writes;
	/* 1. Each directory's files' bytes, then its blocks next to them. */
	uint32_t nf, fi = 0;
	int err = 0;
	struct uinode **files = dirty_files(fs, only, &nf, &err);
	if (err < 0)
		return err;
	qsort(list, n, sizeof *list, by_id);
	struct uio w;
	uio_init(&w, fs, 1);
	for (uint32_t i = 0; i < n; i++) {
		struct udir *d = list[i];
		/* (Files of directories not on the list: none, as ufs_sync puts
		 * every dirty file's directory there.) */
		while (fi < nf && dir_cmp(files[fi]->ent->dir, d) < 0)
			fi++;
		/* Room for its files and its changed blocks (and a head), in one
		 * run, so that one request writes them all. */
		uint64_t blocks = 1 + (uint64_t)d->ntables;
		for (uint32_t b = 1; b < d->nblk; b++)
			blocks += d->blk[b].dirty;
		reserve(fs, files, nf, fi, d, blocks * UFS_BSECT, 0);
		if ((err = write_files(fs, files, nf, &fi, d, &w, 0)) < 0 && first == 0)
			first = err;
		if (d->damaged)
			d->err = -EIO;
		else if (d->err == 0 && (err = ufs_dir_prepare(fs, d, &w)) < 0)
			d->err = err;
	}
	free(files);
	/* 2. When step 1 is a few requests (a file's fsync, a create or a
	 * removal), everything changed so far is written back while they are
	 * in flight: extents added to nodes, map nodes, new fnodes, the
	 * superblock - all of it safe to be durable at any moment (rule 1:
	 * the exodisk may write any of it back on its own), none of it a
	 * commit point, so it need not wait for the bytes; the commit points
	 * (step 5) are what waits, for the barrier.  That is one wait for the
	 * disk fewer.  A long step 1 (many directories' files) is not worth
	 * it: on a disk that seeks, each log record between its writes costs
	 * a seek there and back (on the RZ25 model 1,000 10 KB files took 9%
	 * longer to create). */
	uio_send(&w);
	/* The file count in the superblock: before a commit that changes it
	 * can be durable, the superblock names that commit, or says "not
	 * known" (super.c).  What each directory's commit holds is settled by
	 * now (a write that fails keeps its directory out of the commit). */
	int cerr = ufs_count_begin(fs, list, n);
	if (fs->cnt.data_writes - writes0 <= EARLY_WRITES)
		(void)writeback_early(fs, list, n);   /* (what failed stays in the set: below) */
	err = uio_finish(&w);
	settle(fs);
	if (err < 0 && first == 0)
		first = err;
	/* New dnodes get their first head, once their blocks are written; it
	 * and whatever else changed since are written back.  A new directory
	 * that failed is left out of its parent's commit too (the parent
	 * would name a dnode that is not there). */
	for (uint32_t i = 0; i < n; i++) {
		struct udir *d = list[i];
		if (d->isnew && d->err == 0 && (err = ufs_dir_publish(fs, d)) < 0)
			d->err = err;
	}
	err = cerr < 0 ? cerr : writeback_early(fs, list, n);
	/* 3. The barrier. */
	if (err == 0)
		err = ufs_barrier(fs);
	if (err < 0) {
		for (uint32_t i = 0; i < n; i++)
			if (!list[i]->isnew)
				ufs_dir_abort(fs, list[i]);
			else if (list[i]->err == 0)
				list[i]->err = err;
		/* New dnodes published their head: keep their blocks (a write-
		 * back may still make them durable); they are committed again. */
		ufs_count_end(fs, 0, 0);
		return first ? first : err;
	}
	/* 5. The commit points. */
	for (uint32_t i = 0; i < n; i++) {
		struct udir *d = list[i];
		if (d->isnew || d->err != 0)
			continue;
		if ((err = ufs_dir_publish(fs, d)) < 0)
			d->err = err;
	}
	err = ufs_writeback_all(fs);
	if (err < 0) {
		/* Some commits may be durable, some not: keep every old and new
		 * block (nothing freed, nothing reused) and report it; the next
		 * sync writes back again. */
		ufs_count_end(fs, 0, 0);
		return first ? first : err;
	}
	/* 6. What the commits no longer name. */
	int committed_any = 0, all = 1;
	for (uint32_t i = 0; i < n; i++) {
		struct udir *d = list[i];
		if (d->err != 0) {
			all = 0;
			ufs_dir_abort(fs, d);
			if (first == 0)
				first = d->err;
			continue;
		}
		committed_any = 1;
		d->isnew = 0;
		ufs_dir_done(fs, d);
		for (int k = 0; k < UFS_NINTENT; k++)
			if (fs->intent_done[k] && fs->sb.intent[k].sdir == ufs_xref(d->x.sector, d->x.slot)) {
				memset(&fs->sb.intent[k], 0, sizeof fs->sb.intent[k]);
				fs->intent_done[k] = 0;
				if ((err = ufs_push_sb(fs)) < 0 && first == 0)
					first = err;
			}
	}
	/* Files whose directory committed and that have nothing left leave
	 * the list (unlinked where they are: those that stay may be many). */
	for (struct uinode **pp = &fs->dfiles; *pp != NULL;) {
		struct uinode *ip = *pp;
		struct uent *e = ip->ent;
		struct udir *d = e ? e->dir : NULL;
		if (d == NULL || d->err != 0 || (only != NULL && d != only) || e->failed) {
			pp = &ip->fnext;
			continue;
		}
		if (ip->b && (err = ufs_big_committed(fs, ip)) < 0 && first == 0)
			first = err;
		if (!file_clean(fs, ip)) {
			pp = &ip->fnext;
			continue;
		}
		ufs_file_undirty(fs, ip);
		if (ip->refs == 0) {
			ip->refs = 1;
			ufs_iput(fs, ip);       /* a small file's object goes */
		}
	}
	/* Nodes whose names are gone: free once every removal made so far is
	 * durable, which a whole sync that went well guarantees. */
	if (only == NULL && first == 0) {
		uint32_t k = 0;
		for (uint32_t i = 0; i < fs->ndoomed; i++) {
			int e = ufs_free_node(fs, fs->doomed[i]);
			if (e < 0) {
				fs->doomed[k++] = fs->doomed[i];
				if (first == 0)
					first = e;
			}
		}
		fs->ndoomed = k;
	}
	if (committed_any)
		for (uint32_t i = 0; i < n; i++)
			if (list[i]->err == 0 && (err = ds_trim(fs, list[i])) < 0 && first == 0)
				first = err;
	/* Directories with nothing left to do leave the list: not those
	 * that failed, have a changed block, or have a file still waiting.
	 * One pass over the waiting files marks theirs, one over the dirty
	 * list takes the others out: linear in directories plus files. */
	for (uint32_t i = 0; i < n; i++)
		list[i]->leave = 0;
	for (struct uinode *ip = fs->dfiles; ip; ip = ip->fnext)
		if (ip->ent && ip->ent->dir)
			ip->ent->dir->leave = 2;        /* stays */
	for (uint32_t i = 0; i < n; i++) {
		struct udir *d = list[i];
		if (d->err != 0 || d->leave != 0)
			continue;
		int left = 0;
		for (uint32_t b = 0; b < d->nblk && !left; b++)
			left = d->blk[b].dirty;
		d->leave = !left;
	}
	for (struct udir **pp = &fs->dirty; *pp != NULL;) {
		struct udir *d = *pp;
		if (d->leave == 1) {
			UFS_LIST_TAKE(d, dnext, dprev);
			d->dirty = 0;
		} else {
			pp = &d->dnext;
		}
		d->leave = 0;
	}
	/* After a whole sync that went well, everything removed before it is
	 * gone from disk: every rename's old name included (even one whose
	 * directory went too, and so never commits again). */
	if (only == NULL && first == 0)
		for (int k = 0; k < UFS_NINTENT; k++)
			if (fs->intent_done[k]) {
				memset(&fs->sb.intent[k], 0, sizeof fs->sb.intent[k]);
				fs->intent_done[k] = 0;
				if ((err = ufs_push_sb(fs)) < 0 && first == 0)
					first = err;
			}
	/* The superblock gets the count the commits made durable. */
	if ((err = ufs_count_end(fs, all, only == NULL)) < 0 && first == 0)
		first = err;
	err = ufs_writeback_all(fs);
	if (err < 0 && first == 0)
		first = err;
	return first;
}

int ufs_sync(struct ufs *fs)
{
	if (fs->readonly || fs->in_sync)
		return 0;
	fs->in_sync = 1;
	fs->cnt.syncs++;
	/* Files with bytes to write make their directories dirty too. */
	for (struct uinode *ip = fs->dfiles; ip; ip = ip->fnext)
		if (ip->ent && ip->ent->dir)
			ufs_dir_dirty(fs, ip->ent->dir);
	uint32_t n = 0;
	for (struct udir *d = fs->dirty; d; d = d->dnext)
		n++;
	struct udir **list = malloc((n ? n : 1) * sizeof *list);
	int err;
	if (list == NULL) {
		err = -ENOMEM;
	} else {
		n = 0;
		for (struct udir *d = fs->dirty; d; d = d->dnext)
			list[n++] = d;
		err = commit(fs, list, n, NULL);
		if (err == 0 && n == 0) {
			/* Nothing of ours to commit: doomed nodes, the superblock. */
			err = ufs_writeback_all(fs);
		}
		free(list);
	}
	fs->free_est = edc_fm_count_free(&fs->k.fm);
	fs->in_sync = 0;
	return err;
}

int ufs_fsync(struct ufs *fs, struct uinode *ip)
{
	if (fs->readonly || ip->ent == NULL || ip->ent->memonly || ip->unlinked)
		return 0;
	struct udir *d = ip->type == UFS_T_DIR ? ip->d : ip->ent->dir;
	if (d == NULL || !ufs_dir_named(fs, d) || fs->in_sync)
		return ufs_sync(fs);
	fs->in_sync = 1;
	ufs_dir_dirty(fs, d);
	int err = commit(fs, &d, 1, d);
	fs->in_sync = 0;
	return err;
}

/* ---- renames a crash interrupted ---------------------------------------------------------- */

int ufs_intent_recover(struct ufs *fs)
{
	int any = 0;
	for (int i = 0; i < UFS_NINTENT; i++) {
		const struct ufs_intent *in = &fs->sb.intent[i];
		if (in->id == 0)
			continue;
		any = 1;
		struct uinode *s = NULL, *dd = NULL;
		int err = ufs_iget_xref(fs, in->ddir, &dd);
		if (err == 0)
			err = ufs_iget_xref(fs, in->sdir, &s);
		if (err == -EIO) {
			/* A directory of the rename is gone (removed, and its
			 * dnode freed, before the record could be cleared): the
			 * file has one name or none to remove. */
			err = 0;
		} else if (err == 0) {
			/* Both names durable: the old one goes.  Otherwise the crash
			 * came before the new name was: nothing to do. */
			struct uent *ne = NULL, *oe = NULL;
			for (uint32_t k = 0; k < dd->d->npos && ne == NULL; k++)
				if (dd->d->pos[k] && dd->d->pos[k]->r.id == in->id)
					ne = dd->d->pos[k];
			for (uint32_t k = 0; ne && k < s->d->npos && oe == NULL; k++)
				if (s->d->pos[k] && s->d->pos[k]->r.id == in->id && s->d->pos[k] != ne)
					oe = s->d->pos[k];
			if (oe != NULL) {
				oe->moved = 2;
				ufs_dir_remove(fs, s->d, oe);
			}
		}
		if (s)
			ufs_iput(fs, s);
		if (dd)
			ufs_iput(fs, dd);
		if (err < 0)
			return err;
		fs->intent_done[i] = 1;
	}
	if (!any)
		return 0;
	int err = ufs_sync(fs);
	/* Records whose source directory had nothing to commit go now. */
	for (int i = 0; err == 0 && i < UFS_NINTENT; i++)
		if (fs->intent_done[i]) {
			memset(&fs->sb.intent[i], 0, sizeof fs->sb.intent[i]);
			fs->intent_done[i] = 0;
			err = ufs_push_sb(fs);
		}
	if (err == 0)
		err = ufs_writeback_all(fs);
	ufs_idrop_detached(fs);
	return err;
}
