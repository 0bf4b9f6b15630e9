/*
 * super.c - making, finding, mounting and unmounting a unixfs.
 *
 * Finding it again after a reboot: mkfs puts the superblock exonode at the
 * first free sector of the disk it can (a multiple of 8), so a mount looks
 * at the allocated sectors in order and takes the first exonode that opens
 * with the owner's capabilities and holds a unixfs superblock.  Sectors
 * that are not exonode blocks are answered from the kernel's binding table
 * without a disk read, so the search is cheap; a mount given sb=SECTOR
 * goes straight there.
 *
 * The lock: a unixfs keeps its buffer cache and allocation state in the
 * process that mounted it, so two processes must not have it mounted at
 * once.  A mount allocates an exonode at the superblock's lock_sector and
 * never writes it back; a second mount's allocation fails until the first
 * process unmounts - or exits, since the exodisk undoes a process's
 * unwritten allocations when it exits.  So a crash never leaves it locked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/clock.h"
#include "userfs/unixfs/ufs.h"

#define DEFAULT_CACHE  256
#define DEFAULT_WAIT   5000

static uint64_t opt_num(const char *opts, const char *key, uint64_t def, int *bad)
{
	char v[32];
	int r = libfs_opt(opts, key, v, sizeof v);
	if (r == 0)
		return def;
	char *end;
	unsigned long long n = r > 0 && v[0] ? strtoull(v, &end, 0) : 0;
	if (r < 0 || v[0] == 0 || *end != 0)
		*bad = 1;
	return n;
}

/* A struct ufs with the client, unit, key and free map of opts. */
static int setup(struct ufs *fs, const char *opts)
{
	memset(fs, 0, sizeof *fs);
	fs->c = edc_default();
	if (fs->c == NULL)
		return -ENODEV;
	int bad = 0;
	fs->unit = (int)opt_num(opts, "unit", 0, &bad);
	if (bad || capkey_from_opts(&fs->key, "unixfs", opts) < 0)
		return -EINVAL;
	if (edc_fm_open(fs->c, fs->unit, &fs->fm) != 0)
		return -ENODEV;
	return 0;
}

static int sb_valid(const struct ufs_super *sb, uint64_t nsectors)
{
	return sb->magic == UFS_SUPER_MAGIC && sb->version == UFS_VERSION &&
	       sb->inode_bytes == UFS_INODE_BYTES && sb->bsize == UFS_BSIZE &&
	       sb->lock_sector < nsectors && ufs_ino_slot(sb->root) < UFS_IPB &&
	       ufs_ino_sector(sb->root) < nsectors;
}

/* Read the superblock at sector s; 0, -EACCES (not ours) or another error. */
static int read_sb(struct ufs *fs, uint64_t s)
{
	int64_t r = ufs_xn_read_data(fs, s, 0, 0, &fs->sb, sizeof fs->sb);
	if (r == ED_E_CAP)
		return -EACCES;
	if (r < 0)
		return r == ED_E_NOTBOUND || r == ED_E_KIND || r == ED_E_SLOT || r == ED_E_ENTRY ||
		       r == ED_E_RANGE ? -ENODEV : ufs_err(r);
	if (r != sizeof fs->sb || !sb_valid(&fs->sb, fs->fm.nsectors))
		return -EIO;
	fs->sb_sector = s;
	return 0;
}

static int find_sb(struct ufs *fs, const char *opts)
{
	int bad = 0;
	uint64_t s = opt_num(opts, "sb", UINT64_MAX, &bad);
	if (bad)
		return -EINVAL;
	if (s != UINT64_MAX)
		return s < fs->fm.nsectors ? read_sb(fs, s) : -EINVAL;
	/* Look: the first allocated exonode we can open that is a unixfs. */
	int seen_other = 0;
	for (s = 0; s < fs->fm.nsectors; s += 8) {
		if (!edc_fm_test(&fs->fm, s))
			continue;
		int r = read_sb(fs, s);
		if (r == 0)
			return 0;
		if (r == -EACCES)
			seen_other = 1;
		else if (r != -ENODEV && r != -EIO)
			return r;
	}
	/* Exonodes we cannot open: perhaps ours, with another key. */
	return seen_other ? -EACCES : -ENODEV;
}

static int lock(struct ufs *fs, uint64_t wait_ms)
{
	uint64_t deadline = ufs_now(fs) + wait_ms * 1000000ull;
	for (;;) {
		int64_t r = ufs_xn_alloc(fs, fs->sb.lock_sector, 0, UFS_LOCK_BYTES);
		if (r == 0) {
			fs->locked = 1;
			return 0;
		}
		if (r != ED_E_SLOT && r != ED_E_ALLOCATED)
			return ufs_err(r);
		if (ufs_now(fs) >= deadline)
			return -EBUSY;
		/* Another process has it mounted: give it time. */
		libos_sleep_ns(10 * 1000 * 1000);
	}
}

static void unlock(struct ufs *fs)
{
	if (!fs->locked)
		return;
	/* Never written back, so freeing it frees the sector at once. */
	ufs_xn_dealloc(fs, fs->sb.lock_sector, 0);
	fs->locked = 0;
}

static void teardown(struct ufs *fs)
{
	ufs_idrop_all(fs);
	bc_destroy(&fs->bc);
	free(fs->dblk);
	free(fs->doomed);
	free(fs);
}

/* Mount for real use (readonly = 0) or for fsck. */
int ufs_mount_common(const char *opts, int readonly, struct ufs **out)
{
	struct ufs *fs = malloc(sizeof *fs);
	if (fs == NULL)
		return -ENOMEM;
	int err = setup(fs, opts);
	int bad = 0;
	uint64_t cache = opt_num(opts, "cache", DEFAULT_CACHE, &bad);
	uint64_t wait_ms = opt_num(opts, "wait", DEFAULT_WAIT, &bad);
	if (err == 0 && (bad || cache < 16 || cache > 65536))
		err = -EINVAL;
	if (err == 0)
		err = find_sb(fs, opts);
	if (err == 0)
		err = lock(fs, wait_ms);
	if (err == 0)
		err = bc_init(&fs->bc, (uint32_t)cache);
	fs->readonly = readonly;
	if (err == 0) {
		err = ufs_iget(fs, fs->sb.root, fs->sb.root_gen, &fs->root);
		if (err == 0 && fs->root->d.type != UFS_T_DIR)
			err = -EIO;
	}
	fs->data_goal = fs->sb_sector;
	fs->free_est = edc_fm_count_free(&fs->fm);
	if (err == 0 && !readonly)
		err = ufs_intent_recover(fs);
	if (err < 0) {
		unlock(fs);
		teardown(fs);
		return err;
	}
	*out = fs;
	return 0;
}

/* Free every memory-only file: they exist only for this mount. */
static int drop_memory_files(struct ufs *fs)
{
	int first = 0;
	for (uint32_t h = 0; h < UFS_IHASH; h++)
		for (struct uinode *dir = fs->itab[h]; dir; dir = dir->hnext)
			while (dir->memnames) {
				struct umemname *m = dir->memnames;
				dir->memnames = m->next;
				struct uinode *ip = ufs_ifind(fs, m->ino);
				free(m);
				if (ip != NULL) {
					ip->unlinked = 1;
					if (ip->refs == 0) {
						int e = ufs_ifree(fs, ip);
						if (e < 0 && first == 0)
							first = e;
						/* The table changed: start this chain again. */
						dir = fs->itab[h];
						if (dir == NULL)
							break;
					}
				}
			}
	return first;
}

int ufs_unmount_common(struct ufs *fs)
{
	int err = 0;
	if (!fs->readonly) {
		err = drop_memory_files(fs);
		int e = ufs_sync(fs);
		if (err == 0)
			err = e;
	}
	unlock(fs);
	teardown(fs);
	return err;
}

void ufs_abandon(struct ufs *fs)
{
	/* The open files' handles are the VFS's; the inodes go with the table. */
	teardown(fs);
}

int unixfs_mkfs(const char *opts, uint64_t *sbp)
{
	struct ufs *fs = malloc(sizeof *fs);
	if (fs == NULL)
		return -ENOMEM;
	int err = setup(fs, opts);
	if (err < 0) {
		free(fs);
		return err;
	}
	int bad = 0;
	uint64_t s = opt_num(opts, "sb", UINT64_MAX, &bad);
	if (bad) {
		free(fs);
		return -EINVAL;
	}
	/* One file system per owner and disk, unless told otherwise: a second
	 * one could never be found by looking (the first would be). */
	char v[8];
	if (s == UINT64_MAX && libfs_opt(opts, "force", v, sizeof v) != 1 && find_sb(fs, "") == 0) {
		free(fs);
		return -EEXIST;
	}
	memset(&fs->sb, 0, sizeof fs->sb);
	if (s == UINT64_MAX) {
		/* The first free place for the superblock and the lock sector. */
		s = edc_fm_find(&fs->fm, 0, 2, 8);
		if (s == UINT64_MAX) {
			free(fs);
			return -ENOSPC;
		}
	}
	if (s + 2 > fs->fm.nsectors || edc_fm_test(&fs->fm, s) || edc_fm_test(&fs->fm, s + 1)) {
		free(fs);
		return -EEXIST;
	}
	if ((err = bc_init(&fs->bc, 16)) < 0) {
		free(fs);
		return err;
	}
	struct ufs_super *sb = &fs->sb;
	sb->magic = UFS_SUPER_MAGIC;
	sb->version = UFS_VERSION;
	sb->inode_bytes = UFS_INODE_BYTES;
	sb->bsize = UFS_BSIZE;
	sb->lock_sector = s + 1;
	sb->created = ufs_now(fs);
	sb->fsid = sb->created ^ (s << 32) ^ 0x5bd1e9955bd1e995ull;
	char label[32];
	if (libfs_opt(opts, "label", label, sizeof label) == 1)
		memcpy(sb->label, label, sizeof label);
	fs->sb_sector = s;
	int64_t r = ufs_xn_alloc(fs, s, 0, UFS_SB_BYTES);
	if (r < 0) {
		teardown(fs);
		return r == ED_E_ALLOCATED ? -EEXIST : ufs_err(r);
	}
	ufs_touch(fs, s, 0, -1);
	struct uinode *root;
	err = ufs_icreate(fs, NULL, UFS_T_DIR, 0755, &root);
	if (err == 0) {
		sb->root = root->ino;
		sb->root_gen = root->d.gen;
		r = ufs_xn_add_data(fs, s, 0, 0, sb, sizeof *sb);
		if (r < 0)
			err = ufs_err(r);
	}
	if (err == 0)
		err = ufs_writeback_all(fs);
	if (err == 0)
		*sbp = s;
	teardown(fs);
	return err;
}

void unixfs_counters(void *fsp, struct ufs_counters *out)
{
	struct ufs *fs = fsp;
	*out = fs->cnt;
	out->cache_hits = fs->bc.hits;
	out->cache_misses = fs->bc.misses;
}
