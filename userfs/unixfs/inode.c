/*
 * inode.c - in-memory objects for files and directories (struct uinode).
 *
 * A file's inode is its record in its directory (struct uent: embedded, as
 * in C-FFS); the object exists only while something uses it: an open file,
 * a directory being walked, a file with bytes waiting to be written.  A
 * directory's object holds the directory's names (dir.c) and pins its
 * parent's, so a loaded directory's ancestors stay loaded.  Loading a
 * directory costs one exonode map and, for a small one, one read of its
 * whole space; a large file's object costs one exonode map per node of its
 * extent tree.
 *
 * Objects nobody uses are kept as a cache until there are UFS_OCACHE of
 * them; then clean ones go (ufs_itrim), when an object is loaded or made.
 * A directory's object holds all its names, so this bounds the names in
 * memory too: a program that makes a million files in new directories
 * keeps the ones it is filling and those waiting for their commit, not
 * every one it made (issue 11).  A small file's object goes at its last
 * close once its bytes are written: recreating it costs nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/clock.h"
#include "userfs/unixfs/ufs.h"

#define UFS_OCACHE 512

uint64_t ufs_now(struct ufs *fs)
{
	uint64_t t = libos_time_ns();
	/* Never backwards, and distinct, so ordering by time works. */
	if (t <= fs->clock)
		t = fs->clock + 1;
	fs->clock = t;
	return t;
}

struct uinode *ufs_ifind(struct ufs *fs, uint64_t id)
{
	for (struct uinode *ip = fs->otab[id % UFS_OHASH]; ip; ip = ip->hnext)
		if (ip->id == id)
			return ip;
	return NULL;
}

static struct uinode *onew(struct ufs *fs, struct uent *e, int type)
{
	struct uinode *ip = upool_alloc(fs, sizeof *ip);
	if (ip == NULL)
		return NULL;
	ip->id = e->r.id;
	ip->type = type;
	ip->ent = e;
	e->ip = ip;
	ip->parent = e->dir;
	if (ip->parent)
		ip->parent->nlive++;
	ip->hnext = fs->otab[ip->id % UFS_OHASH];
	fs->otab[ip->id % UFS_OHASH] = ip;
	fs->nobj++;
	return ip;
}

void ufs_file_undirty(struct ufs *fs, struct uinode *ip)
{
	if (!ip->ondirty)
		return;
	UFS_LIST_TAKE(ip, fnext, fprev);
	ip->ondirty = 0;
	fs->ndfiles--;
}

static void dir_undirty(struct udir *d)
{
	if (!d->dirty)
		return;
	UFS_LIST_TAKE(d, dnext, dprev);
	d->dirty = 0;
}

/* Forget the object (not what it names on disk). */
static void odestroy(struct ufs *fs, struct uinode *ip)
{
	struct uinode **pp = &fs->otab[ip->id % UFS_OHASH];
	while (*pp && *pp != ip)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = ip->hnext;
	fs->nobj--;
	ufs_file_undirty(fs, ip);
	fs->dirty_bytes -= ip->counted < fs->dirty_bytes ? ip->counted : fs->dirty_bytes;
	fs->resv -= ip->resv < fs->resv ? ip->resv : fs->resv;
	if (ip->d) {
		/* A removed directory whose removal is not yet durable: its
		 * durable records leave the file count with it (super.c). */
		if (ip->ent != NULL && ip->ent->ongone && ufs_dir_weight(ip->d) != 0) {
			if (ip->parent != NULL)
				ip->parent->dropw += ufs_dir_weight(ip->d);
			else
				fs->count_known = 0;     /* (not expected: count again) */
		}
		dir_undirty(ip->d);
		ufs_dir_free(fs, ip->d);
		fs->ndirs--;
	}
	if (ip->b) {
		ufs_stream_drop(fs, ip->id);
		bc_drop(&fs->bc, ip->id, 0);
		ufs_map_free(ip->b);
		free(ip->b);
	}
	ufs_ibuf_free(fs, ip);
	if (ip->ent != NULL)
		ip->ent->ip = NULL;
	if (ip->parent)
		ip->parent->nlive--;
	upool_free(fs, ip);
}

/* For share.c, which rebuilds open files' objects. */
struct uinode *ufs_onew(struct ufs *fs, struct uent *e, int type)
{
	return onew(fs, e, type);
}

void ufs_odestroy(struct ufs *fs, struct uinode *ip)
{
	odestroy(fs, ip);
}

/* Load a large file's fnode. */
static int load_big(struct ufs *fs, struct uinode *ip)
{
	ufs_xn_set(&ip->x, ufs_xref_sector(ip->ent->r.loc), (uint16_t)ufs_xref_slot(ip->ent->r.loc));
	ip->b = calloc(1, sizeof *ip->b);
	if (ip->b == NULL)
		return -ENOMEM;
	ip->b->zero_from = UINT64_MAX;
	int64_t r = ufs_xn_snapshot(fs, &ip->x, fs->page);
	if (r < 0)
		return r == ED_E_NOMEM || r == ED_E_NOMAP ? -ENOMEM
		       : ufs_damage(fs, "fnode unreadable", ip->x.sector, ip->id);
	const struct ed_xnmap_hdr *h = (const void *)fs->page;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	int have = 0;
	struct ufs_xmeta m;
	if (h->length != UFS_XN_BYTES)
		return ufs_damage(fs, "not an fnode (wrong size)", ip->x.sector, ip->id);
	for (uint32_t i = 0; i < h->nent; i++)
		if (ent[i].type == ED_ENT_DATA) {
			if (ent[i].idx == UFS_E_POS_FNODE)
				continue;          /* its position table: map.c checks it */
			if (ent[i].idx != UFS_E_META || ent[i].len != sizeof m || ent[i].a + ent[i].len > 4096)
				return ufs_damage(fs, "fnode holds an entry unixfs never makes", ip->x.sector, ip->id);
			memcpy(&m, fs->page + ent[i].a, sizeof m);
			have = 1;
		}
	if (!have || m.magic != UFS_XMETA_MAGIC || m.kind != UFS_K_FILE || m.version != UFS_VERSION ||
	    m.id != ip->id)
		return ufs_damage(fs, "not the fnode its name says", ip->x.sector, ip->id);
	ip->b->node[UN_INODE] = (struct unode){ ip->x, 0, 1 };
	int err = ufs_map_load(fs, ip, fs->page);
	if (err < 0)
		return err;
	/* Extents past the last block the size covers can only be left by a
	 * crash (written, the larger size never committed) or a truncate whose
	 * commit did not finish: they are not the file's.  Let them go before
	 * it can grow over them. */
	uint64_t keep = (ip->ent->r.size + UFS_BSIZE - 1) / UFS_BSIZE * UFS_BSECT;
	if (!fs->readonly && ip->b->mapped > keep)
		return ufs_map_shrink(fs, ip, keep);
	return 0;
}

int ufs_iget(struct ufs *fs, struct uent *e, struct uinode **ipp)
{
	if (e->ip != NULL) {
		e->ip->refs++;
		*ipp = e->ip;
		return 0;
	}
	int type = e->r.type;
	ufs_itrim(fs);
	struct uinode *ip = onew(fs, e, type);
	if (ip == NULL)
		return -ENOMEM;
	int err = 0;
	if (type == UFS_T_DIR) {
		ip->d = calloc(1, sizeof *ip->d);
		if (ip->d == NULL) {
			err = -ENOMEM;
		} else {
			fs->ndirs++;
			ip->d->self = ip;
			ufs_xn_set(&ip->d->x, ufs_xref_sector(e->r.loc), (uint16_t)ufs_xref_slot(e->r.loc));
			if (e->dir != NULL)
				ufs_ahead(fs, e->dir, e);
			err = ufs_dir_load(fs, ip->d, e->r.id);
		}
	} else if (e->r.where == UFS_W_NODE) {
		err = load_big(fs, ip);
	}
	if (err < 0) {
		odestroy(fs, ip);
		return err;
	}
	ip->refs = 1;
	*ipp = ip;
	return 0;
}

int ufs_iget_xref(struct ufs *fs, uint64_t xref, struct uinode **ipp)
{
	for (uint32_t h = 0; h < UFS_OHASH; h++)
		for (struct uinode *ip = fs->otab[h]; ip; ip = ip->hnext)
			if (ip->d && ufs_xref(ip->d->x.sector, ip->d->x.slot) == xref) {
				ip->refs++;
				*ipp = ip;
				return 0;
			}
	struct uent *e = upool_alloc(fs, sizeof *e + 1);
	struct udir *d = calloc(1, sizeof *d);
	if (e == NULL || d == NULL) {
		upool_free(fs, e);
		free(d);
		return -ENOMEM;
	}
	e->blk = -1;
	e->r.type = UFS_T_DIR;
	e->r.where = UFS_W_NODE;
	e->r.loc = xref;
	ufs_xn_set(&d->x, ufs_xref_sector(xref), (uint16_t)ufs_xref_slot(xref));
	int err = ufs_dir_load(fs, d, 0);
	if (err < 0) {
		ufs_dir_free(fs, d);
		upool_free(fs, e);
		return err;
	}
	e->r.id = d->m.id;
	struct uinode *ip = onew(fs, e, UFS_T_DIR);
	if (ip == NULL) {
		ufs_dir_free(fs, d);
		upool_free(fs, e);
		return -ENOMEM;
	}
	ip->d = d;
	d->self = ip;
	fs->ndirs++;
	ip->refs = 1;
	*ipp = ip;
	return 0;
}

void ufs_idrop_detached(struct ufs *fs)
{
	for (uint32_t h = 0; h < UFS_OHASH; h++)
		for (struct uinode *ip = fs->otab[h], *next; ip; ip = next) {
			next = ip->hnext;
			struct uent *e = ip->ent;
			if (ip != fs->root && ip->d && e && e->dir == NULL && !e->ongone && !ip->unlinked &&
			    ip->refs == 0 && !ip->d->dirty && ip->d->nlive == 0) {
				ip->ent = NULL;
				e->ip = NULL;
				upool_free(fs, e);
				odestroy(fs, ip);
			}
		}
}

void ufs_iref(struct uinode *ip)
{
	ip->refs++;
}

void ufs_iput(struct ufs *fs, struct uinode *ip)
{
	if (ip->refs > 0)
		ip->refs--;
	if (ip->refs > 0)
		return;
	if (ip->unlinked) {
		/* Its name is gone.  What it holds on disk goes once the removal
		 * is durable: the directory's commit (dir.c) if it is still to
		 * come, else now (at the next sync's end). */
		struct uent *e = ip->ent;
		if (ip->d) {
			/* A removed directory: names removed from it before it went
			 * are not committed by it any more - what they named goes
			 * with it. */
			dir_undirty(ip->d);
			for (struct uent *g = ip->d->gone; g; g = g->gnext)
				if (g->ip == NULL)
					ufs_doom_ent(fs, g);
				else
					g->ongone = 0;     /* its last close decides */
		}
		if (e != NULL && !e->ongone) {
			ufs_doom_ent(fs, e);
			ip->ent = NULL;
			upool_free(fs, e);
		}
		odestroy(fs, ip);
		return;
	}
	/* A small file with nothing to write: nothing worth keeping. */
	if (ip->type == UFS_T_REG && ip->b == NULL && !ip->ondirty && ip->ent && !ip->ent->memonly &&
	    ip != fs->root)
		odestroy(fs, ip);
}

void ufs_file_dirty(struct ufs *fs, struct uinode *ip)
{
	if (ip->ent && ip->ent->memonly)
		return;
	if (!ip->ondirty) {
		ip->ondirty = 1;
		UFS_LIST_PUSH(&fs->dfiles, ip, fnext, fprev);
		fs->ndfiles++;
	}
	ufs_ent_dirty(fs, ip->ent);
}

int ufs_create(struct ufs *fs, struct uinode *dir, const char *name, int type, uint32_t perm,
               struct uinode **ipp)
{
	struct udir *d = dir->d;
	if (strlen(name) > UFS_NAME_MAX)
		return -ENAMETOOLONG;
	if (d->damaged)
		return -EIO;
	ufs_itrim(fs);                  /* (dir is held: it and its ancestors stay) */
	uint64_t id;
	int err = ufs_new_id(fs, &id);
	if (err < 0)
		return err;
	uint64_t now = ufs_now(fs);
	struct ufs_drec r;
	memset(&r, 0, sizeof r);
	r.type = (uint8_t)type;
	r.persist = LIBFS_P_WRITEBACK;
	r.id = id;
	struct uxn x;
	struct ufs_xmeta m;
	if (type == UFS_T_DIR) {
		/* A dnode, with no names yet: safe to become durable at once. */
		err = ufs_alloc_xn(fs, d->x.sector, &x);
		if (err < 0)
			return err;
		memset(&m, 0, sizeof m);
		m.magic = UFS_XMETA_MAGIC;
		m.kind = UFS_K_DIR;
		m.version = UFS_VERSION;
		m.perm = perm & 07777;
		m.id = id;
		m.mtime = m.ctime = now;
		int64_t rr = ufs_xn_add_data(fs, &x, UFS_E_META, &m, sizeof m, 0);
		if (rr < 0) {
			ufs_xn_dealloc(fs, &x);
			return kit_err(rr);
		}
		r.where = UFS_W_NODE;
		r.loc = ufs_xref(x.sector, x.slot);
	} else {
		r.where = UFS_W_NONE;
		r.perm = perm & 07777;
		r.mtime = r.ctime = now;
	}
	struct uent *e;
	err = ufs_dir_add(fs, d, name, &r, &e);
	if (err < 0) {
		if (type == UFS_T_DIR)
			ufs_xn_dealloc(fs, &x);
		return err;
	}
	struct uinode *ip = onew(fs, e, type);
	if (ip == NULL || (type == UFS_T_DIR && (ip->d = calloc(1, sizeof *ip->d)) == NULL)) {
		/* Undo: the name goes (never committed), the dnode too. */
		if (ip)
			odestroy(fs, ip);
		ufs_dir_remove(fs, d, e);
		if (type == UFS_T_DIR)
			ufs_xn_dealloc(fs, &x);
		return -ENOMEM;
	}
	if (type == UFS_T_DIR) {
		fs->ndirs++;
		ip->d->self = ip;
		ip->d->x = x;
		ip->d->m = m;
		ip->d->pm = m;
		ip->d->isnew = 1;
		ip->d->loaded = 1;
		ufs_dir_dirty(fs, ip->d);
	}
	d->m.mtime = now;
	ufs_dir_dirty(fs, d);
	ip->refs = 1;
	*ipp = ip;
	return 0;
}

int ufs_make_big(struct ufs *fs, struct uinode *ip)
{
	struct uent *e = ip->ent;
	struct uxn x;
	uint64_t near = e->dir ? e->dir->x.sector : fs->sb_sector;
	int err = ufs_alloc_xn(fs, near, &x);
	if (err < 0)
		return err;
	struct ufs_xmeta m;
	memset(&m, 0, sizeof m);
	m.magic = UFS_XMETA_MAGIC;
	m.kind = UFS_K_FILE;
	m.version = UFS_VERSION;
	m.id = ip->id;
	int64_t r = ufs_xn_add_data(fs, &x, UFS_E_META, &m, sizeof m, 0);
	struct ubig *b = r >= 0 ? calloc(1, sizeof *b) : NULL;
	if (b == NULL) {
		ufs_xn_dealloc(fs, &x);
		return r < 0 ? kit_err(r) : -ENOMEM;
	}
	b->zero_from = UINT64_MAX;
	b->node[UN_INODE] = (struct unode){ x, 0, 1 };
	ip->x = x;
	ip->b = b;
	e->r.where = UFS_W_NODE;
	e->r.loc = ufs_xref(x.sector, x.slot);
	ufs_file_dirty(fs, ip);
	return 0;
}

void ufs_doom(struct ufs *fs, uint64_t xref)
{
	for (uint32_t i = 0; i < fs->ndoomed; i++)
		if (fs->doomed[i] == xref)
			return;
	if (fs->ndoomed == fs->doomedcap) {
		uint32_t cap = fs->doomedcap ? fs->doomedcap * 2 : 32;
		uint64_t *n = realloc(fs->doomed, cap * sizeof *n);
		if (n == NULL)
			return;          /* it stays allocated: fsck reports an orphan */
		fs->doomed = n;
		fs->doomedcap = cap;
	}
	fs->doomed[fs->ndoomed++] = xref;
}

int ufs_free_node(struct ufs *fs, uint64_t xref)
{
	struct uxn x;
	ufs_xn_set(&x, ufs_xref_sector(xref), (uint16_t)ufs_xref_slot(xref));
	int64_t r = ufs_xn_snapshot(fs, &x, fs->page);
	if (r == ED_E_SLOT || r == ED_E_NOTBOUND || r == ED_E_KIND || r == ED_E_CORRUPT)
		return 0;                 /* gone already */
	if (r < 0)
		return kit_err(r);
	const struct ed_xnmap_hdr *h = (const void *)fs->page;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	int children = 0;
	for (uint32_t i = 0; i < h->nent; i++)
		children |= ent[i].type == ED_ENT_EXONODE;
	if (children) {
		/* A large file with map nodes: empty them first (the exodisk
		 * frees a descendant only when it lists nothing). */
		struct uinode tmp;
		struct uent te;
		memset(&tmp, 0, sizeof tmp);
		memset(&te, 0, sizeof te);
		tmp.ent = &te;
		tmp.x = x;
		tmp.b = calloc(1, sizeof *tmp.b);
		if (tmp.b == NULL)
			return -ENOMEM;
		tmp.b->node[UN_INODE] = (struct unode){ x, 0, 1 };
		int err = ufs_map_load(fs, &tmp, fs->page);
		if (err == 0)
			err = ufs_map_shrink(fs, &tmp, 0);
		ufs_map_free(tmp.b);
		free(tmp.b);
		if (err < 0)
			return err;
	}
	r = ufs_xn_dealloc(fs, &x);
	if (r < 0 && r != ED_E_SLOT && r != ED_E_NOTBOUND)
		return kit_err(r);
	ufs_xn_freed(fs, x.sector, x.slot);
	/* A directory's space blocks were cached by its dnode's place. */
	bc_drop(&fs->bc, (1ull << 63) | xref, 0);
	return 0;
}

void ufs_itrim(struct ufs *fs)
{
	if (fs->nobj <= UFS_OCACHE)
		return;
	/* A walk visits every object, and objects that are busy or dirty
	 * (files waiting for their commit: thousands) cannot go.  So walk
	 * again only when some may have become idle since the last walk - a
	 * sync committed directories and let files go - or the objects
	 * doubled: the walks then cost O(1) per object made. */
	if (fs->cnt.syncs == fs->trim_syncs && fs->nobj < 2 * fs->trim_left)
		return;
	/* Files first, then directories whose children are gone; a few
	 * rounds, since letting a child go frees its parent (while a round
	 * lets some go). */
	uint32_t before = UINT32_MAX;
	for (int round = 0; round < 4 && fs->nobj > UFS_OCACHE / 2 && fs->nobj < before; round++) {
		before = fs->nobj;
		for (uint32_t h = 0; h < UFS_OHASH && fs->nobj > UFS_OCACHE / 2; h++) {
			struct uinode *ip = fs->otab[h];
			while (ip) {
				struct uinode *next = ip->hnext;
				int idle = ip->refs == 0 && !ip->ondirty && !ip->unlinked && ip != fs->root &&
				           !(ip->ent && ip->ent->memonly) && ip->resv == 0;
				if (idle && ip->d != NULL)
					idle = !ip->d->dirty && ip->d->nlive == 0 && ip->d->gone == NULL;
				if (idle && ip->b != NULL)
					idle = bc_count(&fs->bc, ip->id, 0, UINT64_MAX, 1) == 0;
				if (idle)
					odestroy(fs, ip);
				ip = next;
			}
		}
	}
	fs->trim_syncs = fs->cnt.syncs;
	fs->trim_left = fs->nobj;
}

void ufs_idrop_all(struct ufs *fs)
{
	/* Everything goes.  First the objects let go of their names (freeing
	 * the names no directory holds: the root's, removed ones), then the
	 * directories free their names, then the objects go. */
	for (uint32_t h = 0; h < UFS_OHASH; h++)
		for (struct uinode *ip = fs->otab[h]; ip; ip = ip->hnext) {
			struct uent *e = ip->ent;
			if (e == NULL)
				continue;
			e->ip = NULL;
			if (e->dir == NULL && !e->ongone)
				upool_free(fs, e);
			ip->ent = NULL;
		}
	for (uint32_t h = 0; h < UFS_OHASH; h++)
		while (fs->otab[h]) {
			struct uinode *ip = fs->otab[h];
			fs->otab[h] = ip->hnext;
			if (ip->d)
				ufs_dir_free(fs, ip->d);
			if (ip->b) {
				ufs_map_free(ip->b);
				free(ip->b);
			}
			ufs_ibuf_free(fs, ip);
			upool_free(fs, ip);
		}
	fs->nobj = 0;
	fs->ndirs = 0;
	fs->dirty = NULL;
	fs->dfiles = NULL;
	fs->ndfiles = 0;
	fs->root = NULL;
	fs->pending = 0;              /* no name is in memory but the disk's */
}
