/*
 * fsck.c - checking a unixfs.
 *
 * The exodisk already guarantees its own invariants (every allocated sector
 * belongs to exactly one object, metadata is authentic and current); this
 * checks what unixfs adds on top:
 *   - every directory record names a live inode of the right type and
 *     generation, no inode is named twice, directory parents agree;
 *   - every directory is well formed (records tile their chunks);
 *   - inodes are well formed (metadata, immediate bytes, extent lists and
 *     map nodes: the same checks a mount makes when it loads one);
 *   - no two files share a sector, and every extent is allocated;
 *   - no orphans: inodes of this file system that no directory names.  A
 *     crash between removing a name and freeing the inode leaves one; with
 *     the "repair" option fsck frees them.
 * Orphans are found by asking, for each allocated block-aligned sector not
 * already accounted for, whether it is an exonode block whose slots open
 * with this file system's capabilities and hold inodes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

int ufs_mount_common(const char *opts, int readonly, struct ufs **out);
int ufs_unmount_common(struct ufs *fs);

struct run {
	uint64_t start, n;
	uint64_t ino;
	int iblk;                 /* a block of inodes: shared by up to four */
};

struct ck {
	struct ufs *fs;
	ufs_report_fn report;
	void *arg;
	struct ufs_fsck_stats *st;
	uint64_t *seen;           /* inode numbers reached */
	uint32_t nseen, seencap;
	struct run *runs;         /* sectors owned by the file system */
	uint32_t nruns, runcap;
	char path[LIBFS_PATH_MAX + UFS_NAME_MAX + 2];
};

static void problem(struct ck *k, const char *what)
{
	k->st->problems++;
	k->report(k->arg, k->path[0] ? k->path : "/", what);
}

static int add_run(struct ck *k, uint64_t start, uint64_t n, uint64_t ino, int iblk)
{
	if (k->nruns == k->runcap) {
		uint32_t cap = k->runcap ? k->runcap * 2 : 256;
		struct run *r = realloc(k->runs, cap * sizeof *r);
		if (r == NULL)
			return -ENOMEM;
		k->runs = r;
		k->runcap = cap;
	}
	k->runs[k->nruns++] = (struct run){ start, n, ino, iblk };
	return 0;
}

static int was_seen(struct ck *k, uint64_t ino)
{
	for (uint32_t i = 0; i < k->nseen; i++)
		if (k->seen[i] == ino)
			return 1;
	return 0;
}

static int seen(struct ck *k, uint64_t ino)
{
	if (was_seen(k, ino))
		return 1;
	if (k->nseen == k->seencap) {
		uint32_t cap = k->seencap ? k->seencap * 2 : 256;
		uint64_t *s = realloc(k->seen, cap * sizeof *s);
		if (s == NULL)
			return -ENOMEM;
		k->seen = s;
		k->seencap = cap;
	}
	k->seen[k->nseen++] = ino;
	return 0;
}

/* Record the sectors an inode owns and check its extents. */
static int account(struct ck *k, struct uinode *ip)
{
	int err = add_run(k, ip->sector, UFS_IBLK_SECT, ip->ino, 1);
	for (int i = UN_SINGLE; err == 0 && i < UN_LEAF0 + UFS_INNER_MAX; i++)
		if (ip->node[i].used) {
			k->st->mapnodes++;
			err = add_run(k, ip->node[i].sector, UFS_MAP_SECT, ip->ino, 0);
		}
	for (uint32_t i = 0; err == 0 && i < ip->next; i++) {
		const struct uext *e = &ip->ext[i];
		k->st->extents++;
		k->st->sectors += e->nsect;
		if (!edc_fm_test(&k->fs->fm, e->sector) || !edc_fm_test(&k->fs->fm, e->sector + e->nsect - 1))
			problem(k, "extent not allocated in the free map");
		err = add_run(k, e->sector, e->nsect, ip->ino, 0);
	}
	return err;
}

static int walk(struct ck *k, struct uinode *dir, size_t plen, int depth)
{
	if (depth > 256) {
		problem(k, "directories nested too deeply (a loop?)");
		return 0;
	}
	uint64_t cookie = 0;
	struct udirent de;
	for (;;) {
		int r = ufs_dir_next(k->fs, dir, &cookie, &de);
		if (r < 0) {
			k->path[plen] = 0;
			problem(k, "directory data unreadable or malformed");
			return r == -ENOMEM ? r : 0;
		}
		if (r == 0)
			return 0;
		snprintf(k->path + plen, sizeof k->path - plen, "/%s", de.name);
		size_t nlen = strlen(k->path);
		struct uinode *ip;
		int e = ufs_iget(k->fs, de.ino, de.gen, &ip);
		if (e < 0) {
			problem(k, e == -EIO ? "names a missing, reused or malformed inode" : "inode unreadable");
			continue;
		}
		if (ip->d.type != de.type)
			problem(k, "record type differs from the inode's");
		int dup = seen(k, ip->ino);
		if (dup < 0) {
			ufs_iput(k->fs, ip);
			return dup;
		}
		if (dup) {
			/* A rename a crash interrupted leaves two names; the next
			 * mount removes the old one. */
			if (!ufs_intent_explains(k->fs, ip->ino))
				problem(k, "inode named more than once");
			ufs_iput(k->fs, ip);
			continue;
		}
		if ((e = account(k, ip)) < 0) {
			ufs_iput(k->fs, ip);
			return e;
		}
		if (ip->d.type == UFS_T_DIR) {
			k->st->dirs++;
			if (ip->d.parent != dir->ino)
				problem(k, "directory's parent is not the directory naming it");
			e = walk(k, ip, nlen, depth + 1);
		} else {
			k->st->files++;
			k->st->bytes += ip->d.size;
		}
		ufs_iput(k->fs, ip);
		if (e < 0)
			return e;
	}
}

static int cmp_run(const void *x, const void *y)
{
	const struct run *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Is sector s inside a run we know (runs sorted)?  1: data or a map
 * node; 2: a block of inodes, some of whose slots we know. */
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
	return k->runs[lo].iblk ? 2 : 1;
}

/* Inodes of ours that nothing names.  Frees them if repair is set. */
static int orphans(struct ck *k, int repair)
{
	struct ufs *fs = k->fs;
	uint8_t *page = malloc(4096);
	if (page == NULL)
		return -ENOMEM;
	for (uint64_t s = 0; s < fs->fm.nsectors; s += UFS_IBLK_SECT) {
		if (!edc_fm_test(&fs->fm, s) || known(k, s) == 1 || s == fs->sb_sector ||
		    s == fs->sb.lock_sector)
			continue;
		for (uint16_t slot = 0; slot < UFS_IPB; slot++) {
			if (was_seen(k, ufs_ino(s, slot)))
				continue;
			if (ufs_xn_snapshot(fs, s, slot, page) < 0)
				continue;        /* not an exonode of ours, or a free slot */
			const struct ed_xnmap_hdr *h = (const void *)page;
			if (h->length != UFS_INODE_BYTES)
				break;
			uint64_t ino = ufs_ino(s, slot);
			snprintf(k->path, sizeof k->path, "<inode %llu>", (unsigned long long)ino);
			problem(k, repair ? "orphan inode (freed)" : "orphan inode: no directory names it");
			if (!repair)
				continue;
			struct uinode *ip;
			if (ufs_iget(fs, ino, 0, &ip) == 0) {
				ip->refs = 0;
				ufs_ifree(fs, ip);
			} else {
				/* Unreadable as an inode: free the exonode itself. */
				ufs_xn_dealloc(fs, s, slot);
			}
		}
	}
	free(page);
	return 0;
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
	k.report = report;
	k.arg = arg;
	k.st = st;
	st->dirs = 1;
	err = seen(&k, fs->root->ino);
	if (err == 0)
		err = add_run(&k, fs->sb_sector, 1, 0, 0);
	if (err == 0)
		err = account(&k, fs->root);
	if (err == 0)
		err = walk(&k, fs->root, 0, 0);
	if (err == 0) {
		qsort(k.runs, k.nruns, sizeof *k.runs, cmp_run);
		for (uint32_t i = 1; i < k.nruns; i++)
			if (k.runs[i].start < k.runs[i - 1].start + k.runs[i - 1].n &&
			    !(k.runs[i].iblk && k.runs[i - 1].iblk && k.runs[i].start == k.runs[i - 1].start)) {
				snprintf(k.path, sizeof k.path, "<sector %llu>", (unsigned long long)k.runs[i].start);
				problem(&k, "sectors owned twice");
			}
		err = orphans(&k, repair);
	}
	int e = ufs_unmount_common(fs);
	free(k.seen);
	free(k.runs);
	if (err == 0)
		err = e;
	return err < 0 ? err : (int)st->problems;
}
