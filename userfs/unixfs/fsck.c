/*
 * fsck.c - checking a unixfs.
 *
 * The exodisk already guarantees its own invariants (every allocated sector
 * belongs to exactly one object, metadata is authentic and current); this
 * checks what unixfs adds on top:
 *   - every directory loads: its dnode, the checksums and headers of its
 *     blocks, every record, and that no two of its records or blocks claim
 *     the same sector of its space (dir.c checks all of this on every load;
 *     fsck reports what it finds, naming the block);
 *   - every record names a live dnode or fnode of the right kind and id;
 *     no dnode is named twice (a loop), no id twice (a rename a crash
 *     interrupted is allowed: the next mount finishes it);
 *   - large files' extent lists and map nodes are well formed, every
 *     extent is allocated, and no two files share a sector; holes: the
 *     position tables are well formed, no two extents of a file overlap
 *     in it (map.c checks at every load), and no table line names an
 *     extent that is not there (fsck -r drops such lines); the holes of
 *     each file are counted;
 *   - the superblock's file count (version 4), unless a cut commit left
 *     it "not known", is the number of records plus the root; "repair"
 *     sets it;
 *   - no orphans: dnodes or fnodes of this file system that no record
 *     names.  A crash between removing a name and freeing what it named
 *     leaves one; with the "repair" option fsck frees them.
 * Orphans are found by asking, for each allocated block-aligned sector not
 * already accounted for, whether it is an exonode block whose slots open
 * with this file system's capabilities and hold its nodes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

int ufs_mount_common(const char *opts, int readonly, struct ufs **out);
int ufs_unmount_common(struct ufs *fs);

#define MAX_DEPTH 4096

struct run {
	uint64_t start, n;
	int xblk;                 /* a block of nodes: shared by up to four */
};

/* A set of 64-bit values: open addressing, at most half full, so adding
 * and asking cost O(1) however many there are (a million-file image has a
 * million file ids; a list searched from the start made fsck quadratic:
 * 60,000 files were its practical limit). */
struct set {
	uint64_t *v;              /* 0: an empty slot                    */
	uint64_t cap, n;          /* cap: a power of two, or 0           */
	int zero;                 /* 0 itself is in the set              */
};

struct ck {
	struct ufs *fs;
	int repair;
	ufs_report_fn report;
	void *arg;
	struct ufs_fsck_stats *st;
	struct set ids, xrefs;    /* file ids and node places reached */
	uint64_t names;           /* records reached, plus the root   */
	int unreadable;           /* a directory or file did not load */
	struct run *runs;         /* sectors owned by the file system */
	uint32_t nruns, runcap;
	char path[LIBFS_PATH_MAX + UFS_NAME_MAX + 2];
};

static void problem(struct ck *k, const char *what)
{
	k->st->problems++;
	k->report(k->arg, k->path[0] ? k->path : "/", what);
}

static int add_run(struct ck *k, uint64_t start, uint64_t n, int xblk)
{
	if (k->nruns == k->runcap) {
		uint32_t cap = k->runcap ? k->runcap * 2 : 256;
		struct run *r = realloc(k->runs, cap * sizeof *r);
		if (r == NULL)
			return -ENOMEM;
		k->runs = r;
		k->runcap = cap;
	}
	k->runs[k->nruns++] = (struct run){ start, n, xblk };
	return 0;
}

static uint64_t set_slot(const struct set *s, uint64_t x)
{
	uint64_t h = x * 0x9e3779b97f4a7c15ull;
	uint64_t i = (h ^ (h >> 29)) & (s->cap - 1);
	while (s->v[i] != 0 && s->v[i] != x)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int set_has(const struct set *s, uint64_t x)
{
	if (x == 0)
		return s->zero;
	return s->cap != 0 && s->v[set_slot(s, x)] == x;
}

/* Add x; 1 if it was there already, 0 if not, or -ENOMEM. */
static int set_add(struct set *s, uint64_t x)
{
	if (x == 0) {
		int was = s->zero;
		s->zero = 1;
		return was;
	}
	if (2 * (s->n + 1) > s->cap) {
		struct set g = { .cap = s->cap ? 2 * s->cap : 1024, .zero = s->zero };
		g.v = calloc(g.cap, sizeof *g.v);
		if (g.v == NULL)
			return -ENOMEM;
		for (uint64_t i = 0; i < s->cap; i++)
			if (s->v[i] != 0)
				g.v[set_slot(&g, s->v[i])] = s->v[i];
		g.n = s->n;
		free(s->v);
		*s = g;
	}
	uint64_t i = set_slot(s, x);
	if (s->v[i] == x)
		return 1;
	s->v[i] = x;
	s->n++;
	return 0;
}

static void check_alloc(struct ck *k, uint64_t start, uint64_t n)
{
	if (!edc_fm_test(&k->fs->k.fm, start) || !edc_fm_test(&k->fs->k.fm, start + n - 1))
		problem(k, "extent not allocated in the free map");
}

/* Record the sectors a directory owns; check its dnode's count of its
 * records (version 5: the file count may rest on it). */
static int account_dir(struct ck *k, struct udir *d)
{
	struct ufs *fs = k->fs;
	if (fs->sb.version >= UFS_SB_NREC && d->m.nrec != d->ndisk) {
		char what[120];
		snprintf(what, sizeof what, "its dnode counts %lu records, its blocks hold %lu%s",
		         (unsigned long)d->m.nrec, (unsigned long)d->ndisk, k->repair ? " (set)" : "");
		problem(k, what);
		if (k->repair && !fs->readonly) {
			d->m.nrec = d->ndisk;
			int64_t r = ufs_xn_add_data(fs, &d->x, UFS_E_META, &d->m, sizeof d->m, 0);
			if (r < 0)
				return kit_err(r);
			d->pm = d->m;
			/* (The superblock's count is set below, from the walk.) */
		}
	}
	int err = add_run(k, d->x.sector, UFS_XBLK_SECT, 1);
	for (uint32_t i = 0; err == 0 && i < d->sp.next; i++) {
		k->st->extents++;
		k->st->sectors += d->sp.ext[i].nsect;
		check_alloc(k, d->sp.ext[i].sector, d->sp.ext[i].nsect);
		err = add_run(k, d->sp.ext[i].sector, d->sp.ext[i].nsect, 0);
	}
	return err;
}

/* Record the sectors a large file owns. */
static int account_big(struct ck *k, struct uinode *ip)
{
	struct ubig *b = ip->b;
	int err = add_run(k, ip->x.sector, UFS_XBLK_SECT, 1);
	for (int i = UN_SINGLE; err == 0 && i < UN_MAX; i++)
		if (b->node[i].used) {
			k->st->mapnodes++;
			err = add_run(k, b->node[i].x.sector, UFS_MAP_SECT, 0);
		}
	for (uint32_t i = 0; err == 0 && i < b->next; i++) {
		k->st->extents++;
		k->st->sectors += b->ext[i].nsect;
		check_alloc(k, b->ext[i].sector, b->ext[i].nsect);
		err = add_run(k, b->ext[i].sector, b->ext[i].nsect, 0);
	}
	/* Holes: what of the size no extent holds. */
	uint64_t end = (ip->ent->r.size + UFS_SECT - 1) / UFS_SECT;
	uint64_t holes = ufs_map_holes(ip, 0, end);
	if (holes > 0) {
		k->st->sparse++;
		k->st->hole_bytes += holes * UFS_SECT;
	}
	if (err == 0 && b->stale_pos > 0) {
		if (k->repair && !k->fs->readonly)
			err = ufs_map_tidy(k->fs, ip);
		problem(k, k->repair ? "position table line naming no extent (dropped)"
		                     : "position table line naming no extent");
	}
	return err;
}

static int walk(struct ck *k, struct uinode *dir, size_t plen, int depth)
{
	if (depth > MAX_DEPTH) {
		problem(k, "directories nested deeper than fsck follows");
		return 0;
	}
	struct udir *d = dir->d;
	for (uint64_t cookie = 0;;) {
		struct uent *e;
		if (ufs_dir_next(d, &cookie, &e) == 0)
			return 0;
		if (e->memonly)
			continue;
		k->names++;
		snprintf(k->path + plen, sizeof k->path - plen, "/%s", e->name);
		size_t nlen = strlen(k->path);
		int dup = set_add(&k->ids, e->r.id);
		if (dup < 0)
			return dup;
		if (dup && !ufs_intent_explains(k->fs, e->r.id)) {
			problem(k, "file id named more than once");
			continue;
		}
		if (e->r.where == UFS_W_NODE) {
			int seen = set_add(&k->xrefs, e->r.loc);
			if (seen < 0)
				return seen;
			if (seen) {
				if (!dup)
					problem(k, e->r.type == UFS_T_DIR ? "directory named twice (a loop?)"
					                                   : "node named twice");
				continue;
			}
		}
		if (e->r.type == UFS_T_REG) {
			k->st->files++;
			k->st->bytes += e->r.size;
			if (e->r.where != UFS_W_NODE)
				continue;
		}
		struct uinode *ip;
		k->fs->damage[0] = 0;
		int err = ufs_iget(k->fs, e, &ip);
		if (err == -ENOMEM)
			return err;
		if (err < 0) {
			char what[200];
			snprintf(what, sizeof what, "unreadable: %s",
			         k->fs->damage[0] ? k->fs->damage : "I/O error");
			problem(k, what);
			k->unreadable = 1;
			continue;
		}
		if (ip->type == UFS_T_DIR) {
			k->st->dirs++;
			err = account_dir(k, ip->d);
			if (err == 0)
				err = walk(k, ip, nlen, depth + 1);
		} else {
			err = account_big(k, ip);
		}
		ufs_iput(k->fs, ip);
		if (err < 0)
			return err;
	}
}

static int cmp_run(const void *x, const void *y)
{
	const struct run *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Is sector s inside a run we know (runs sorted)?  1: data or a map
 * node; 2: a block of nodes, some of whose slots we know. */
static int known(struct ck *k, uint64_t s)
{
	uint32_t lo = 0, hi = k->nruns;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (k->runs[mid].start + k->runs[mid].n <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == k->nruns || k->runs[lo].start > s)
		return 0;
	return k->runs[lo].xblk ? 2 : 1;
}

/* Nodes of ours that nothing names.  Frees them if repair is set. */
static int orphans(struct ck *k, int repair)
{
	struct ufs *fs = k->fs;
	uint8_t *page = malloc(4096);
	if (page == NULL)
		return -ENOMEM;
	for (uint64_t s = 0; s < fs->k.fm.nsectors; s += UFS_XBLK_SECT) {
		if (!edc_fm_test(&fs->k.fm, s) || known(k, s) == 1 || s == fs->sb_sector ||
		    s == fs->k.a.lock)
			continue;
		for (uint16_t slot = 0; slot < UFS_XPB; slot++) {
			uint64_t x = ufs_xref(s, slot);
			if (set_has(&k->xrefs, x))
				continue;
			struct uxn xn;
			ufs_xn_set(&xn, s, slot);
			if (ufs_xn_snapshot(fs, &xn, page) < 0)
				continue;        /* not an exonode of ours, or a free slot */
			const struct ed_xnmap_hdr *h = (const void *)page;
			if (h->length != UFS_XN_BYTES)
				break;
			snprintf(k->path, sizeof k->path, "<node %llu:%u>", (unsigned long long)s, slot);
			problem(k, repair ? "orphan node (freed)" : "orphan node: no record names it");
			if (repair)
				ufs_free_node(fs, x);
		}
	}
	free(page);
	return 0;
}

/* The superblock's file count (version 4; as the mount resolved it, and
 * kept since: a repair's mount may have finished renames) against the
 * records the walk reached.  Not known (0 on disk: a commit of several
 * directories was cut off; the next mount counts the tree when asked) is
 * not a problem; repair sets it.  Damage the walk could not read makes
 * the comparison meaningless: left alone. */
static int check_count(struct ck *k)
{
	struct ufs *fs = k->fs;
	uint64_t sb = fs->sb.version >= UFS_SB_FILES && fs->count_known ? fs->nfiles : 0;
	k->st->names = k->names;
	k->st->sb_files = sb;
	if (fs->sb.version < UFS_SB_FILES || sb == k->names || k->unreadable)
		return 0;
	if (sb != 0) {
		char what[120];
		snprintf(what, sizeof what, "the superblock counts %llu files and directories, the tree holds %llu%s",
		         (unsigned long long)sb, (unsigned long long)k->names, k->repair ? " (set)" : "");
		k->path[0] = 0;
		problem(k, what);
	}
	if (!k->repair || fs->readonly)
		return 0;
	fs->nfiles = k->names;
	fs->pending = 0;
	fs->count_known = fs->count_exact = 1;
	fs->sb.files = k->names;
	fs->sb.pend_dir = fs->sb.pend_seq = 0;
	fs->sb.pend_delta = 0;
	fs->sb.pend_kind = UFS_PEND_DELTA;
	return ufs_push_sb(fs);
}

int unixfs_fsck(const char *opts, ufs_report_fn report, void *arg, struct ufs_fsck_stats *st)
{
	memset(st, 0, sizeof *st);
	char v[8];
	int repair = libfs_opt(opts, "repair", v, sizeof v) == 1;
	struct ufs *fs;
	int err = ufs_mount_common(opts, !repair, &fs);
	if (err < 0)
		return err;
	struct ck k;
	memset(&k, 0, sizeof k);
	k.fs = fs;
	k.repair = repair;
	st->version = fs->sb.version;
	k.report = report;
	k.arg = arg;
	k.st = st;
	st->dirs = 1;
	k.names = 1;
	err = set_add(&k.ids, fs->sb.root_id);
	if (err == 0)
		err = set_add(&k.xrefs, fs->sb.root);
	if (err == 0)
		err = add_run(&k, fs->sb_sector, 1, 0);
	if (err == 0)
		err = account_dir(&k, fs->root->d);
	if (err == 0)
		err = walk(&k, fs->root, 0, 0);
	if (err == 0) {
		k.path[0] = 0;
		qsort(k.runs, k.nruns, sizeof *k.runs, cmp_run);
		for (uint32_t i = 1; i < k.nruns; i++)
			if (k.runs[i].start < k.runs[i - 1].start + k.runs[i - 1].n &&
			    !(k.runs[i].xblk && k.runs[i - 1].xblk && k.runs[i].start == k.runs[i - 1].start)) {
				snprintf(k.path, sizeof k.path, "<sector %llu>", (unsigned long long)k.runs[i].start);
				problem(&k, "sectors owned twice");
			}
		err = orphans(&k, repair);
	}
	if (err == 0)
		err = check_count(&k);
	if (err == 0 && repair)
		err = ufs_writeback_all(fs);
	int e = ufs_unmount_common(fs);
	free(k.ids.v);
	free(k.xrefs.v);
	free(k.runs);
	if (err == 0)
		err = e;
	return err < 0 ? err : (int)st->problems;
}
