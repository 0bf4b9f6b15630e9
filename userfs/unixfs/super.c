/*
 * super.c - making, finding, mounting and unmounting a unixfs.
 *
 * The superblock is the file system's anchor, made and found by the libFS
 * kit (libos/kit/anchor.c): at the first free one of a sequence of places
 * derived from the owner's key, so a mount finds it with a few free-map
 * tests and one exonode read, however large the disk.  Its entry 0 is the
 * kit's record, entry 1 unixfs's (struct ufs_super).
 *
 * Many processes may have one unixfs mounted at once: a mount joins the
 * file system's shared area and takes its lock while it reads the
 * superblock and the root (share.c, docs/sharing.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/clock.h"
#include "userfs/unixfs/ufs.h"

#define DEFAULT_CACHE  32768           /* blocks: 128 MiB at most, allocated as used */
#define GROUPS_MAX     (16u << 20)     /* directories' groups kept, at most (bytes) */
#define DEFAULT_DIRTY  (8u << 20)       /* small files' bytes held before write-behind */

/* The kit's hook for a full exodisk cache (kit_again): write back. */
static int kit_writeback(struct kit *k)
{
	struct ufs *fs = k->fs;
	if (fs->readonly || fs->dx.n == 0)
		return -1;
	return ufs_writeback_all(fs);
}

/* What every mount and mkfs starts with, after the kit's open. */
static int setup(struct ufs *fs)
{
	fs->k.fs = fs;
	fs->k.writeback = kit_writeback;
	fs->page = malloc(4096);
	return fs->page == NULL ? -ENOMEM : 0;
}

static int sb_valid(const struct ufs_super *sb, uint64_t nsectors)
{
	return sb->magic == UFS_SUPER_MAGIC && sb->version >= UFS_SB_VERSION_MIN &&
	       sb->version <= UFS_SB_VERSION && sb->bsize == UFS_BSIZE &&
	       (sb->pend_kind == UFS_PEND_DELTA ||
	        (sb->pend_kind == UFS_PEND_DNODE && sb->version >= UFS_SB_NREC && sb->pend_dir != 0)) &&
	       ufs_xref_slot(sb->root) < UFS_XPB && ufs_xref_sector(sb->root) < nsectors &&
	       sb->root_id != 0 && sb->next_id > sb->root_id;
}

/* The superblock from the anchor the kit found. */
/* The exodisk's message for code. */
static const char *ed_why(int64_t code)
{
	const char *m = ed_strerror((long)code);
	return m != NULL ? m : "unreadable";
}

/* The superblock cannot be used: say what was wrong (it is kept as the
 * damage found, too); -EIO. */
static int sb_damaged(struct ufs *fs, uint64_t sector, const char *what)
{
	snprintf(fs->damage, sizeof fs->damage, "unixfs: superblock (anchor exonode) at sector %llu: %s",
	         (unsigned long long)sector, what);
	fs->cnt.damage++;
	fprintf(stderr, "%s; not mounted\n", fs->damage);
	return -EIO;
}

static void count_resolve(struct ufs *fs);

int ufs_read_sb(struct ufs *fs)
{
	fs->sb_sector = fs->k.anchor;
	memset(&fs->sb, 0, sizeof fs->sb);
	int64_t r = kit_xn_get(&fs->k, fs->sb_sector, 0, UFS_E_SUPER, &fs->sb, sizeof fs->sb);
	if (r == ED_E_ENTRY)
		return sb_damaged(fs, fs->sb_sector, "it holds no unixfs superblock entry");
	if (r < 0)
		return kit_err(r) == -EIO ? sb_damaged(fs, fs->sb_sector, ed_why(r)) : kit_err(r);
	if (r == sizeof fs->sb && fs->sb.magic == UFS_SUPER_MAGIC &&
	    (fs->sb.version > UFS_SB_VERSION || fs->sb.version < UFS_SB_VERSION_MIN))
		return sb_damaged(fs, fs->sb_sector,
		                  "a unixfs format version this build does not read (it reads 2 to 5)");
	uint64_t want = fs->sb.version >= UFS_SB_FILES ? sizeof fs->sb : UFS_SUPER_V3_BYTES;
	if ((uint64_t)r != want || !sb_valid(&fs->sb, fs->k.fm.nsectors))
		return sb_damaged(fs, fs->sb_sector, "its superblock entry is malformed");
	count_resolve(fs);
	return 0;
}

/* ---- the file count --------------------------------------------------------------------------
 *
 * statfs's number of files is the durable tree's (fs->nfiles, kept as
 * commits change it) plus what is pending in memory (fs->pending: names
 * added less names removed since).  The superblock keeps the durable
 * count across a power cut with no walk of the tree at mount.  The hard
 * part: the directories of a sync commit one by one (sync.c step 5), so a
 * cut can leave any subset of them durable.  So before a commit that
 * changes the count can be durable (ufs_count_begin, written back with
 * sync.c's step 2, before the barrier), the superblock says either
 *   - (version 5) when one directory's commit changes it by its own
 *     records alone (an fsync, a create, a removal of files, most small
 *     syncs): the count of all but that directory's records, and its
 *     dnode, whose nrec - written with each of its commits, atomically
 *     with the commit - adds them (count_resolve).  Once the superblock
 *     says so, more commits of that directory change the count with no
 *     write of the superblock at all: the count's record is folded into
 *     the dnode's;
 *   - when one directory's commit changes it otherwise (its removed
 *     subdirectories' durable records leave with it), or on version 4:
 *     the count before, and that directory's dnode with the commit number
 *     it will have and the change - a mount reads that one dnode and
 *     knows whether the commit happened.  No write more than the sync
 *     made before;
 *   - when several do: 0, "not known", and once their commits are durable
 *     the new count (ufs_count_end, one more write-back at the end of the
 *     sync).
 * A mount that finds 0 - a cut during such a commit - or a version 2 or 3
 * file system counts the tree the first time it is asked (ufs_files).
 * Each directory knows the records of its durable version (d->ndisk, set
 * at load and at each commit), so a commit's change is exact however its
 * names came and went; a removed directory's durable records (it is empty
 * in memory, but its own removals may not have committed) leave the count
 * when the removal of its name commits (d->dropw carries them to its
 * parent while it is gone from memory).  After a failed commit (some
 * directories may be durable and some not) nothing is written until a
 * whole sync goes well. */

/* No pending change in the superblock (in memory). */
static void pend_clear(struct ufs_super *sb)
{
	sb->pend_dir = sb->pend_seq = 0;
	sb->pend_delta = 0;
	sb->pend_kind = UFS_PEND_DELTA;
}

static void count_resolve(struct ufs *fs)
{
	struct ufs_super *sb = &fs->sb;
	fs->nfiles = 0;
	fs->count_known = fs->count_exact = 0;
	fs->pend_d = NULL;
	if (sb->version < UFS_SB_FILES || sb->files == 0)
		return;
	uint64_t n = sb->files;
	if (sb->pend_dir != 0) {
		struct ufs_xmeta m;
		int64_t r = kit_xn_get(&fs->k, ufs_xref_sector(sb->pend_dir), ufs_xref_slot(sb->pend_dir),
		                       UFS_E_META, &m, sizeof m);
		if (r != sizeof m || m.magic != UFS_XMETA_MAGIC || m.kind != UFS_K_DIR) {
			/* Cannot tell: count the tree when asked. */
			sb->files = 0;
			pend_clear(sb);
			return;
		}
		if (sb->pend_kind == UFS_PEND_DNODE) {
			/* That directory's records are its dnode's to count: the
			 * superblock stays as it is. */
			fs->nfiles = n + m.nrec;
			fs->count_known = fs->count_exact = 1;
			return;
		}
		if (m.seq >= sb->pend_seq)
			n += (uint64_t)(int64_t)sb->pend_delta;
		/* Resolved, in memory.  The disk's copy must say so before that
		 * directory commits again: a later commit that leaves the count
		 * alone would take its number up to pend_seq, and a mount after
		 * the next cut would add a change that never happened. */
		fs->count_stale = 1;
		sb->files = n;
		pend_clear(sb);
	}
	fs->nfiles = n;
	fs->count_known = fs->count_exact = 1;
}

/* ufs_count_begin's write-back of the superblock, in step 2 with the
 * dnodes: durable before the barrier, so before any of the sync's commits. */
static int count_push(struct ufs *fs)
{
	int e = ufs_push_sb_at(fs, 0);
	if (e == 0)
		fs->count_stale = 0;
	return e;
}

int ufs_count_begin(struct ufs *fs, struct udir **list, uint32_t n)
{
	struct ufs_super *sb = &fs->sb;
	fs->pend_d = NULL;
	if (sb->version < UFS_SB_FILES)
		return 0;
	/* Nothing below changes the superblock: only a stale one goes out. */
	int stale = fs->count_stale && n > 0;
	struct udir *one = NULL;
	int many = 0;
	for (uint32_t i = 0; i < n && !many; i++)
		if (list[i]->cntchg || list[i]->dropw) {
			many = one != NULL;
			one = list[i];
		}
	if (one == NULL)
		return stale ? count_push(fs) : 0;
	if (!many && !one->isnew && fs->count_known && fs->count_exact) {
		int64_t delta = ufs_dir_count_change(one);
		if (delta == 0)           /* (a rename within it: no change) */
			return stale ? count_push(fs) : 0;
		uint64_t xref = ufs_xref(one->x.sector, one->x.slot);
		/* Its own records' change alone, and its durable dnode counts
		 * them: the dnode's commit carries the count. */
		if (sb->version >= UFS_SB_NREC && delta == (int64_t)one->newnrec - (int64_t)one->ndisk &&
		    one->pm.nrec == one->ndisk) {
			fs->pend_d = one;
			fs->pend_delta = delta;
			if (sb->pend_kind == UFS_PEND_DNODE && sb->pend_dir == xref && sb->files != 0)
				return stale ? count_push(fs) : 0;
			sb->files = fs->nfiles - one->ndisk;
			pend_clear(sb);
			sb->pend_dir = xref;
			sb->pend_kind = UFS_PEND_DNODE;
			return count_push(fs);
		}
		if (delta == (int32_t)delta) {
			sb->files = fs->nfiles;
			pend_clear(sb);
			sb->pend_dir = xref;
			sb->pend_seq = one->m.seq + 1;      /* what ufs_dir_publish makes it */
			sb->pend_delta = (int32_t)delta;
			fs->pend_d = one;
			fs->pend_delta = delta;
			/* In step 2's write-back with the dnodes, not after them: it
			 * need only be durable before the barrier, and so costs no
			 * log record of its own. */
			return count_push(fs);
		}
	}
	if (sb->files == 0 && sb->pend_dir == 0)
		return stale ? count_push(fs) : 0;
	sb->files = 0;
	pend_clear(sb);
	return count_push(fs);
}

int ufs_count_end(struct ufs *fs, int ok, int whole)
{
	struct ufs_super *sb = &fs->sb;
	fs->pend_d = NULL;
	if (!ok) {
		/* Some commits may be durable and not counted, or counted and
		 * not reachable: exact again after a whole sync that goes well. */
		fs->count_exact = 0;
		return 0;
	}
	if (whole)
		fs->count_exact = 1;
	if (sb->version < UFS_SB_FILES)
		return 0;
	if (!fs->count_known) {
		/* (Only if something went wrong: it is counted again when asked.) */
		if (sb->files == 0)
			return 0;
		sb->files = 0;
	} else if (!fs->count_exact || sb->files != 0) {
		/* A count with a pending commit resolves itself; 0 is written
		 * over once the count is the durable tree's again. */
		return 0;
	} else {
		sb->files = fs->nfiles;
	}
	pend_clear(sb);
	return ufs_push_sb(fs);
}

void ufs_count_dir(struct ufs *fs, struct udir *d, uint32_t n, uint64_t gone)
{
	int64_t delta = (int64_t)n - (int64_t)d->ndisk - (int64_t)gone - (int64_t)d->dropw;
	if (d == fs->pend_d && delta != fs->pend_delta)
		fs->count_known = 0;      /* (a bug: the superblock's pending change is wrong) */
	/* (And if the superblock leaves its count to this dnode, the dnode
	 * must count the records exactly, and they must be all it changed.) */
	if (fs->sb.pend_kind == UFS_PEND_DNODE && fs->sb.pend_dir == ufs_xref(d->x.sector, d->x.slot) &&
	    (d->pm.nrec != n || delta != (int64_t)n - (int64_t)d->ndisk))
		fs->count_known = 0;
	fs->nfiles += (uint64_t)delta;
	fs->pending -= delta;
	d->ndisk = n;
	d->dropw = 0;
	d->cntchg = 0;
}

/* Every directory's durable records and names now, below dir. */
static int count_below(struct ufs *fs, struct uinode *dir, uint64_t *durable, uint64_t *live, int depth)
{
	if (depth > 4096)
		return -ELOOP;
	struct udir *d = dir->d;
	*durable += ufs_dir_weight(d);
	*live += d->nents;
	for (uint64_t cookie = 0;;) {
		struct uent *e;
		if (ufs_dir_next(d, &cookie, &e) == 0)
			return 0;
		if (e->r.type != UFS_T_DIR || e->memonly)
			continue;
		struct uinode *ip;
		int err = ufs_iget(fs, e, &ip);
		if (err == 0) {
			err = count_below(fs, ip, durable, live, depth + 1);
			ufs_iput(fs, ip);
		}
		if (err < 0)
			return err;
	}
}

int ufs_files(struct ufs *fs, uint64_t *out)
{
	if (!fs->count_known) {
		/* After a whole sync that went well every directory in memory
		 * is its durable version, and every durable one is in the tree
		 * as memory has it (read-only: nothing changed). */
		int err = fs->readonly ? 0 : ufs_sync(fs);
		uint64_t durable = 1, live = 1;
		if (err == 0)
			err = count_below(fs, fs->root, &durable, &live, 0);
		if (err < 0)
			return err;
		fs->nfiles = durable;
		fs->pending = (int64_t)(live - durable);
		fs->count_known = 1;
		if (!fs->readonly && ufs_count_end(fs, 1, 1) < 0)
			fs->count_exact = 0;     /* (the superblock stays at 0) */
	}
	int64_t n = (int64_t)fs->nfiles + fs->pending;
	*out = n > 0 ? (uint64_t)n : 0;
	return 0;
}

static void teardown(struct ufs *fs)
{
	ufs_idrop_all(fs);
	ufs_ahead_drop(fs);
	bc_destroy(&fs->bc);
	kit_dirty_free(&fs->dx);
	free(fs->doomed);
	free(fs->wfiles);
	free(fs->wbufs);
	free(fs->page);
	upool_destroy(fs);
	free(fs);
}

/* The root directory's object: its name is its own. */
int ufs_load_root(struct ufs *fs)
{
	struct uent *e = upool_alloc(fs, sizeof *e + 2);
	if (e == NULL)
		return -ENOMEM;
	e->blk = -1;
	e->r.type = UFS_T_DIR;
	e->r.where = UFS_W_NODE;
	e->r.loc = fs->sb.root;
	e->r.id = fs->sb.root_id;
	e->committed = 1;
	e->dr = e->r;
	int err = ufs_iget(fs, e, &fs->root);
	if (err < 0)
		upool_free(fs, e);
	return err;
}

/* Mount for real use (readonly = 0) or for fsck. */
int ufs_mount_common(const char *opts, int readonly, struct ufs **out)
{
	struct ufs *fs = calloc(1, sizeof *fs);
	if (fs == NULL)
		return -ENOMEM;
	uint64_t cache, dirty;
	int err = kit_opt_num(opts, "cache", DEFAULT_CACHE, &cache);
	if (err == 0)
		err = kit_opt_num(opts, "dirty", DEFAULT_DIRTY / 1024, &dirty);
	if (err == 0 && (cache < 16 || cache > 65536 || dirty > (1u << 22)))
		err = -EINVAL;
	/* The kit opens the unit and key and finds the anchor; share.c joins
	 * the other processes using it and takes the lock. */
	if (err == 0)
		err = kit_open(&fs->k, "unixfs", opts);
	if (err == 0)
		err = kit_anchor_find(&fs->k, opts);
	if (err == -EIO && fs->k.bad_code < 0)
		err = sb_damaged(fs, fs->k.bad_place, ed_why(fs->k.bad_code));
	if (err == 0)
		err = setup(fs);
	if (err == 0)
		err = ufs_share_attach(fs, opts);
	if (err == 0)
		err = ufs_read_sb(fs);
	if (err == 0)
		err = bc_init(&fs->bc, (uint32_t)cache);
	fs->readonly = readonly;
	fs->dirty_max = dirty * 1024;
	fs->gmax = cache * UFS_BSIZE < GROUPS_MAX ? cache * UFS_BSIZE : GROUPS_MAX;
	fs->id_next = fs->id_limit = fs->sb.next_id;
	fs->data_goal = fs->next_fit = fs->sb_sector;
	fs->free_est = edc_fm_count_free(&fs->k.fm);
	uint64_t said = fs->cnt.damage;   /* sb_damaged has said its own */
	if (err == 0)
		err = ufs_load_root(fs);
	if (err == 0 && !readonly)
		err = ufs_intent_recover(fs);
	if (err < 0) {
		/* Damage met past the superblock (the root directory, a block
		 * that cannot be read in): say what, as sb_damaged does. */
		if (err == -EIO && fs->damage[0] && fs->cnt.damage > said)
			fprintf(stderr, "%s; not mounted\n", fs->damage);
		else if (fs->cnt.damage == 0)
			kit_say_unmountable(&fs->k, err);
		ufs_share_detach(fs);
		teardown(fs);
		return err;
	}
	*out = fs;
	return 0;
}

int ufs_unmount_common(struct ufs *fs)
{
	int err = ufs_share_enter(fs, !fs->readonly);
	if (err == 0 && !fs->readonly)
		err = ufs_sync(fs);
	ufs_share_detach(fs);
	teardown(fs);
	return err;
}

void ufs_abandon(struct ufs *fs)
{
	/* The open files' handles are the VFS's; the objects go with the table.
	 * (A host test's dying process: the lock is left as the kernel leaves
	 * a dead holder's.) */
	kit_lease_abandon(&fs->sh);
	teardown(fs);
}

int unixfs_mkfs(const char *opts, uint64_t *sbp)
{
	/* version=2 makes the format before holes (for older builds'
	 * tools); it becomes 3 when its first hole is made.  version=3:
	 * without the file count (it stays 3). */
	uint64_t version;
	int verr = kit_opt_num(opts, "version", UFS_SB_VERSION, &version);
	if (verr < 0 || version < UFS_SB_VERSION_MIN || version > UFS_SB_VERSION)
		return -EINVAL;
	struct ufs *fs = calloc(1, sizeof *fs);
	if (fs == NULL)
		return -ENOMEM;
	/* The anchor, at the first of the owner's places that is free (or at
	 * sb=SECTOR); -EEXIST if this owner has a unixfs here already. */
	int err = kit_mkfs(&fs->k, "unixfs", opts, UFS_SB_BYTES);
	if (err == 0)
		err = setup(fs);
	if (err == 0)
		err = bc_init(&fs->bc, 16);
	if (err < 0) {
		teardown(fs);
		return err;
	}
	fs->sb_sector = fs->k.anchor;
	struct ufs_super *sb = &fs->sb;
	memset(sb, 0, sizeof *sb);
	sb->magic = UFS_SUPER_MAGIC;
	sb->version = (uint32_t)version;
	sb->bsize = UFS_BSIZE;
	sb->root_id = 1;
	sb->next_id = 2;
	sb->files = version >= UFS_SB_FILES ? 1 : 0;   /* the root */
	char label[32];
	if (libfs_opt(opts, "label", label, sizeof label) == 1)
		memcpy(sb->label, label, sizeof label);
	/* The root: a dnode with no names, near the anchor. */
	struct uxn rx;
	err = ufs_alloc_xn(fs, fs->sb_sector, &rx);
	if (err == 0) {
		struct ufs_xmeta m;
		memset(&m, 0, sizeof m);
		m.magic = UFS_XMETA_MAGIC;
		m.kind = UFS_K_DIR;
		m.version = UFS_VERSION;
		m.perm = 0755;
		m.id = sb->root_id;
		m.mtime = m.ctime = fs->k.a.created;
		int64_t r = ufs_xn_add_data(fs, &rx, UFS_E_META, &m, sizeof m, 0);
		if (r < 0)
			err = kit_err(r);
	}
	if (err == 0) {
		sb->root = ufs_xref(rx.sector, rx.slot);
		err = ufs_push_sb(fs);
	}
	/* The root first (depth 0), then the superblock naming it (-1). */
	if (err == 0)
		err = ufs_writeback_all(fs);
	if (err == 0)
		*sbp = fs->sb_sector;
	teardown(fs);
	return err;
}

void unixfs_counters(void *fsp, struct ufs_counters *out)
{
	struct ufs *fs = fsp;
	*out = fs->cnt;
	out->cache_hits = fs->bc.hits;
	out->cache_misses = fs->bc.misses;
	out->writebacks = fs->k.st.commits;
	out->objects = fs->nobj;
	out->pool_bytes = fs->pool.bytes;
}

const char *unixfs_damage(void *fsp)
{
	struct ufs *fs = fsp;
	return fs->damage[0] ? fs->damage : NULL;
}
