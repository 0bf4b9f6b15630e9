/*
 * share.c - one unixfs used by many processes at once (docs/sharing.md).
 *
 * Every process that mounts a unixfs attaches to one shared area named
 * from its key (kit_share, libos/share.h); its lock is taken around every
 * operation (the VFS calls ufs_share_enter and ufs_share_leave), so
 * operations of different processes never overlap.  unixfs caches a great
 * deal in the process's own memory - directories' names and blocks, small
 * files' bytes waiting to be written, the buffer cache, allocation state -
 * so the lock is a lease:
 *
 *  - while a process holds changes nobody else has seen, or is the only
 *    one attached, it keeps the lock between its operations, so working
 *    alone costs nothing;
 *  - it lets go when another process waits (after holding it for
 *    SHARE_LEASE_NS, so that taking turns costs one publish per turn), when
 *    it is about to block (sleep, wait, reading the console or a pipe), and
 *    at unmount; before letting go it publishes: a sync, so that every
 *    change it made is on the disk, durable, in the one place the others
 *    look (the directories' committed heads and the exodisk's shared cache
 *    of exonodes);
 *  - the next holder, told the file system changed (SHARE_CHANGED), drops
 *    everything it cached and reads what it needs again; its open files
 *    are found again by their path and id;
 *  - a holder that died (SHARE_DEAD: the kernel marks its lock) leaves the
 *    disk as a crash at that moment would, so the next holder does what a
 *    mount after a crash does: reloads, and finishes renames in progress.
 *
 * A mount takes the lock too and, for the VFS (ufs_share_mounted), lets
 * go when it returns; a mount made for fsck holds it until its unmount, so
 * the check sees one consistent state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

/* Changes in this process's memory that nobody else has seen. */
static int dirty(struct ufs *fs)
{
	if (fs->dirty != NULL || fs->dfiles != NULL || fs->dx.n != 0 || fs->ndoomed != 0)
		return 1;
	for (int i = 0; i < UFS_NINTENT; i++)
		if (fs->intent_done[i])
			return 1;
	return 0;
}

/* Before letting go: everything we changed becomes durable (a sync), so
 * the next holder reads it from the disk. */
static int publish(void *arg)
{
	struct ufs *fs = arg;
	if (fs->readonly || fs->root == NULL || !dirty(fs))
		return 0;
	share_touch(&fs->sh);
	int err = ufs_sync(fs);
	if (err < 0) {
		/* What could not be written must not stay only here: others
		 * would change the same directories under it.  It is lost, as
		 * in a crash, and we say so. */
		fprintf(stderr, "unixfs: changes lost: could not write them for other processes (%s)\n",
		        strerror(-err));
		ufs_share_reload(fs, 0);
	}
	return err;
}

int ufs_share_attach(struct ufs *fs, const char *opts)
{
	int err = kit_lease_attach(&fs->k, &fs->sh, sizeof(struct share_area), opts, publish, fs);
	/* A mount reads everything fresh and finishes renames in progress,
	 * which is all a death (SHARE_DEAD) asks of it. */
	return err < 0 ? err : 0;
}

void ufs_share_detach(struct ufs *fs)
{
	kit_unlock(&fs->k);           /* (only if it fell back to the lock) */
	kit_lease_detach(&fs->sh);
}

void ufs_share_mounted(struct ufs *fs)
{
	ufs_share_leave(fs);
}

int ufs_share_enter(void *fsp, int change)
{
	struct ufs *fs = fsp;
	if (share_op_again(&fs->sh, change, fs->root != NULL))
		return 0;
	int r = share_op_take(&fs->sh, change);
	if (r < 0)
		return r;
	if (r == SHARE_CHANGED || r == SHARE_DEAD || fs->root == NULL) {
		int err = ufs_share_reload(fs, r == SHARE_DEAD);
		if (err < 0) {
			ufs_share_leave(fs);
			return err;
		}
	}
	return 0;
}

void ufs_share_leave(void *fsp)
{
	struct ufs *fs = fsp;
	if (share_op_end(&fs->sh))
		return;
	share_lease_leave(&fs->sh, dirty(fs));
}

/* ---- catching up ------------------------------------------------------------------------ */

static void otab_remove(struct ufs *fs, struct uinode *ip)
{
	struct uinode **pp = &fs->otab[ip->id % UFS_OHASH];
	while (*pp && *pp != ip)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = ip->hnext;
	ip->hnext = NULL;
}

static void otab_insert(struct ufs *fs, struct uinode *ip)
{
	ip->hnext = fs->otab[ip->id % UFS_OHASH];
	fs->otab[ip->id % UFS_OHASH] = ip;
	fs->nobj++;
}

/* The path of ip inside the file system, from the names in memory (which
 * include this process's own renames); -1 if it has none (a detached
 * object). */
static int path_of(struct ufs *fs, struct uinode *ip, char *out, size_t size)
{
	size_t end = size - 1;
	out[end] = 0;
	while (ip != fs->root) {
		struct uent *e = ip->ent;
		if (e == NULL || e->dir == NULL || e->dir->self == NULL)
			return -1;
		size_t n = strlen(e->name);
		if (n + 1 > end)
			return -1;
		end -= n;
		memcpy(out + end, e->name, n);
		out[--end] = '/';
		ip = e->dir->self;
	}
	memmove(out, out + end, size - end);
	return 0;
}

/* An object standing in for an open file or directory that another
 * process removed (or moved to another directory): empty, nameless, freed
 * at its last close like any unlinked file. */
static struct uinode *stand_in(struct ufs *fs, int type, uint64_t id)
{
	struct uent *e = upool_alloc(fs, sizeof *e + 1);
	if (e == NULL)
		return NULL;
	e->blk = -1;
	e->r.type = (uint8_t)type;
	e->r.where = UFS_W_NONE;
	e->r.id = id;
	struct uinode *ip = ufs_onew(fs, e, type);
	if (ip == NULL) {
		upool_free(fs, e);
		return NULL;
	}
	if (type == UFS_T_DIR) {
		ip->d = calloc(1, sizeof *ip->d);
		if (ip->d == NULL) {
			e->ip = NULL;
			ip->ent = NULL;
			ufs_odestroy(fs, ip);
			upool_free(fs, e);
			return NULL;
		}
		ip->d->self = ip;
		ip->d->loaded = 1;
		fs->ndirs++;
	}
	ip->unlinked = 1;
	return ip;
}

/* Free an object taken out of the table before a reload. */
static void old_free(struct ufs *fs, struct uinode *ip)
{
	struct uent *e = ip->ent;
	if (e != NULL) {
		e->ip = NULL;
		ip->ent = NULL;
		if (e->dir == NULL)
			upool_free(fs, e);
	}
	ip->counted = ip->resv = 0;
	ip->parent = NULL;
	otab_insert(fs, ip);
	ufs_odestroy(fs, ip);
}

enum { F_ROOT, F_KEEP, F_PATH, F_LOST };

/* The object of file `id` at path - or, renamed by another process within
 * its directory, under another name there; NULL if neither. */
static struct uinode *find_again(struct ufs *fs, char *path, uint64_t id, int type)
{
	struct uinode *ip = NULL;
	if (ufs_namei(fs, path, &ip) == 0) {
		if (ip->id == id && ip->type == type)
			return ip;
		ufs_iput(fs, ip);
		ip = NULL;
	}
	char *slash = strrchr(path, '/');
	if (slash == NULL)
		return NULL;
	*slash = 0;
	struct uinode *dir = NULL;
	if (ufs_namei(fs, path, &dir) < 0)
		return NULL;
	if (dir->type == UFS_T_DIR)
		for (uint32_t k = 0; k < dir->d->npos && ip == NULL; k++) {
			struct uent *e = dir->d->pos[k];
			if (e != NULL && e->r.id == id && e->r.type == type && ufs_iget(fs, e, &ip) < 0)
				ip = NULL;
		}
	ufs_iput(fs, dir);
	return ip;
}

/* Did others change anything this process has loaded?  A directory is as
 * we loaded it while its dnode's entry 0 (the committed head, its
 * sequence number, its attributes) is as we last saw it: every change to
 * a directory - its names, its files' records and small files' bytes, its
 * space - ends in a commit that changes it.  A large file open here may
 * have been written in place by another process: that counts too. */
static int others_changed_ours(struct ufs *fs)
{
	if (fs->root == NULL)
		return 1;
	for (uint32_t h = 0; h < UFS_OHASH; h++)
		for (struct uinode *ip = fs->otab[h]; ip; ip = ip->hnext) {
			if (ip->b != NULL && ip->refs > 0)
				return 1;
			if (ip->d == NULL || !ip->d->loaded || ip->d->isnew)
				continue;
			struct ufs_xmeta m;
			int64_t r = kit_xn_get(&fs->k, ip->d->x.sector, ip->d->x.slot, UFS_E_META, &m,
			                       sizeof m);
			if (r != sizeof m || memcmp(&m, &ip->d->pm, sizeof m) != 0)
				return 1;
		}
	return 0;
}

/* Others changed only what we have not loaded: forget the files we keep
 * only as a cache (a large file's blocks may have been rewritten in
 * place), read the superblock again. */
static int catch_up(struct ufs *fs)
{
	ufs_ahead_drop(fs);           /* what was read ahead may be stale */
	for (uint32_t h = 0; h < UFS_OHASH; h++)
		for (struct uinode *ip = fs->otab[h], *next; ip; ip = next) {
			next = ip->hnext;
			if (ip->type == UFS_T_REG && ip->refs == 0 && !ip->ondirty && !ip->unlinked &&
			    !(ip->ent && ip->ent->memonly))
				ufs_odestroy(fs, ip);
		}
	fs->free_est = edc_fm_count_free(&fs->k.fm);
	return ufs_read_sb(fs);
}

int ufs_share_reload(struct ufs *fs, int dead)
{
	if (!dead && !dirty(fs) && !others_changed_ours(fs))
		return catch_up(fs);

	/* Where each open file is, by path and id, and which objects must
	 * survive as they are: a file nobody can name any more (unlinked) or
	 * that was never on the disk (memory only) is this process's alone. */
	uint32_t nf = 0;
	for (struct ufile *f = fs->files; f; f = f->next)
		nf++;
	struct uinode **old = calloc(nf ? nf : 1, sizeof *old);
	char **path = calloc(nf ? nf : 1, sizeof *path);
	uint8_t *cls = calloc(nf ? nf : 1, 1);
	if (old == NULL || path == NULL || cls == NULL) {
		free(old);
		free(path);
		free(cls);
		return -ENOMEM;
	}
	uint32_t nold = 0, i = 0;
	for (struct ufile *f = fs->files; f; f = f->next, i++) {
		struct uinode *ip = f->ip;
		if (ip == fs->root) {
			cls[i] = F_ROOT;
			continue;
		}
		if (ip == NULL) {         /* a reload that failed before */
			cls[i] = F_LOST;
			continue;
		}
		int keep = ip->unlinked || (ip->ent != NULL && ip->ent->memonly);
		char buf[LIBFS_PATH_MAX];
		if (keep)
			cls[i] = F_KEEP;
		else if (path_of(fs, ip, buf, sizeof buf) == 0 && (path[i] = strdup(buf)) != NULL)
			cls[i] = F_PATH;
		else
			cls[i] = F_LOST;
		int seen = 0;
		for (uint32_t k = 0; k < nold; k++)
			seen |= old[k] == ip;
		if (!seen) {
			otab_remove(fs, ip);
			fs->nobj--;
			ip->parent = NULL;
			if (ip->ent != NULL)
				ip->ent->ongone = 0;
			if (keep)
				ip->unlinked = 1;   /* nameless from now on */
			old[nold++] = ip;
		}
	}
	/* Everything else goes: objects, names, blocks, promises. */
	uint64_t resv = 0, counted = 0;
	for (uint32_t k = 0; k < nold; k++)
		if (old[k]->unlinked) {
			resv += old[k]->resv;
			counted += old[k]->counted;
		}
	ufs_idrop_all(fs);
	ufs_ahead_drop(fs);
	uint32_t nbufs = fs->bc.nbufs;
	bc_destroy(&fs->bc);
	int err = bc_init(&fs->bc, nbufs);
	fs->ndoomed = 0;
	memset(fs->intent_done, 0, sizeof fs->intent_done);
	fs->resv = resv;
	fs->dirty_bytes = counted;
	fs->free_est = edc_fm_count_free(&fs->k.fm);
	/* What the others made durable: the superblock, the root. */
	if (err == 0)
		err = ufs_read_sb(fs);
	if (err == 0)
		err = ufs_load_root(fs);
	if (err == 0 && dead && !fs->readonly)
		err = ufs_intent_recover(fs);
	/* The open files again: the same name with the same id, or a stand-in. */
	for (uint32_t k = 0; k < nold; k++)
		if (old[k]->unlinked)
			otab_insert(fs, old[k]);
	i = 0;
	for (struct ufile *f = fs->files; f; f = f->next, i++) {
		struct uinode *ip = f->ip, *nip = NULL;
		if (cls[i] == F_KEEP)
			continue;
		if (cls[i] == F_ROOT) {
			f->ip = fs->root;
			if (f->ip != NULL)
				f->ip->refs++;
			continue;
		}
		if (err == 0 && cls[i] == F_PATH && ip != NULL)
			nip = find_again(fs, path[i], ip->id, ip->type);
		if (nip == NULL)
			nip = stand_in(fs, ip ? ip->type : UFS_T_REG, ip ? ip->id : 0);
		if (nip != NULL && nip->unlinked)
			nip->refs++;
		f->ip = nip;
	}
	for (uint32_t k = 0; k < nold; k++)
		if (!old[k]->unlinked)
			old_free(fs, old[k]);
	/* A handle left without an object (no memory for a stand-in) cannot
	 * go on; the mount cannot either. */
	for (struct ufile *f = fs->files; f; f = f->next)
		if (f->ip == NULL && err == 0)
			err = -ENOMEM;
	for (i = 0; i < nf; i++)
		free(path[i]);
	free(path);
	free(old);
	free(cls);
	return err;
}
