/*
 * imap.c - the inode map, and inodes in memory.
 *
 * In a log-structured file system an inode has no fixed place: each time
 * it changes, a new copy goes to the log.  The inode map says where the
 * newest copy of each inode is (struct lfs_imapent: location, generation,
 * and for a free inode the next free one).  It is cut into blocks of 255
 * entries; a checkpoint writes the blocks that changed since the last one
 * and records where every block is.  A mount reads none of them: a block
 * is read the first time one of its inodes is wanted, so a mount costs the
 * same whatever the number of files.  Between checkpoints, changed entries
 * travel in the commit records (log.c), which roll-forward applies.
 *
 * Free inode numbers form a list through the map (free_head); a freed
 * inode's generation goes up, so the cleaner can tell from a summary
 * entry alone that a block belonged to a file since deleted.
 *
 * Inodes in memory (struct lnode) are found by number in a hash table.
 * Any change makes one dirty; a commit writes the dirty ones four to a
 * sector (lfs_flush_inodes) and points the map at the new copies, making
 * the old copies' bytes dead.  Clean ones nobody holds are dropped when
 * there are many.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"

#define MAX_NODES 65536u

int lfs_imap_init(struct lfs *fs, uint32_t nblk)
{
	fs->imcap = nblk < 16 ? 16 : nblk;
	fs->im = calloc(fs->imcap, sizeof *fs->im);
	fs->imaddr = calloc(fs->imcap, sizeof *fs->imaddr);
	fs->nimblk = nblk;
	fs->nimdirty = 0;
	fs->nimcp = 0;
	fs->imin = NULL;
	fs->nimin = 0;
	fs->imchgcap = 16;
	fs->imchg = malloc(fs->imchgcap * sizeof *fs->imchg);
	fs->nih = 256;               /* doubled as inodes come in (node_new) */
	fs->ih = calloc(fs->nih, sizeof *fs->ih);
	return fs->im && fs->imaddr && fs->imchg && fs->ih ? 0 : -ENOMEM;
}

void lfs_imap_free(struct lfs *fs)
{
	for (uint32_t i = 0; fs->im != NULL && i < fs->imcap; i++)
		free(fs->im[i]);
	free(fs->im);
	free(fs->imaddr);
	free(fs->imchg);
	free(fs->ih);
	free(fs->imin);
	fs->imin = NULL;
	fs->nimin = fs->nimcp = 0;
	fs->im = NULL;
	fs->imaddr = NULL;
	fs->imchg = NULL;
	fs->ih = NULL;
}

/* Block i into memory (lfs_imap_block: not there yet). */
static __attribute__((noinline)) int imap_read(struct lfs *fs, uint32_t i)
{
	struct lfs_imblk *m = calloc(1, sizeof *m);
	if (m == NULL)
		return -ENOMEM;
	if (fs->imaddr[i] != 0) {
		static uint8_t blk[LFS_BSIZE];
		int e = lfs_read_block(fs, fs->imaddr[i], blk);
		if (e == 0 && !lfs_check_block(blk, LFS_IMAP_MAGIC, i)) {
			lfs_damaged(fs, "inode map block fails its check", i);
			e = -EIO;
		}
		if (e < 0) {
			free(m);
			return e;
		}
		memcpy(m->e, blk + sizeof(struct lfs_blkhdr), sizeof m->e);
	}
	/* Entries of this block that the checkpoint record carried (newer
	 * than the block in the log): the next checkpoint carries them
	 * again, or writes the block. */
	uint32_t k = 0;
	for (uint32_t x = 0; x < fs->nimin; x++) {
		const struct lfs_dimap *d = &fs->imin[x];
		if (d->ino / LFS_PER_BLK == i) {
			m->e[d->ino % LFS_PER_BLK] = d->e;
			lfs_imap_cpmark(fs, m, d->ino % LFS_PER_BLK);
		} else {
			fs->imin[k++] = *d;
		}
	}
	fs->nimin = k;
	fs->im[i] = m;
	return 0;
}

int lfs_imap_block(struct lfs *fs, uint32_t i, struct lfs_imblk **out)
{
	if (i >= fs->nimblk)
		return -EINVAL;
	if (fs->im[i] == NULL)
		TRY(imap_read(fs, i));
	*out = fs->im[i];
	return 0;
}

/* Room for block i (a new one past the end). */
int lfs_imap_grow(struct lfs *fs, uint32_t i)
{
	if (i < fs->nimblk)
		return 0;
	if (i >= fs->imcap) {
		uint32_t cap = fs->imcap * 2 > i + 1 ? fs->imcap * 2 : i + 1;
		struct lfs_imblk **im = realloc(fs->im, cap * sizeof *im);
		if (im == NULL)
			return -ENOMEM;
		fs->im = im;
		uint64_t *ad = realloc(fs->imaddr, cap * sizeof *ad);
		if (ad == NULL)
			return -ENOMEM;
		fs->imaddr = ad;
		for (uint32_t j = fs->imcap; j < cap; j++) {
			fs->im[j] = NULL;
			fs->imaddr[j] = 0;
		}
		fs->imcap = cap;
	}
	fs->nimblk = i + 1;
	return 0;
}

struct lfs_imapent *lfs_imap_load(struct lfs *fs, uint32_t ino, int *err)
{
	*err = -ENOENT;
	if (ino == 0 || ino >= fs->max_ino)
		return NULL;
	struct lfs_imblk *m;
	*err = lfs_imap_block(fs, ino / LFS_PER_BLK, &m);
	return *err < 0 ? NULL : &m->e[ino % LFS_PER_BLK];
}

void lfs_imap_note(struct lfs *fs, uint32_t ino)
{
	uint32_t i = ino / LFS_PER_BLK, j = ino % LFS_PER_BLK;
	struct lfs_imblk *m = fs->im[i];
	lfs_imap_cpmark(fs, m, j);
	if (!(m->changed[j / 64] >> (j % 64) & 1))
		fs->pend += sizeof(struct lfs_dimap);
	m->changed[j / 64] |= 1ull << (j % 64);
	if (m->inlist)
		return;
	if (fs->nimchg == fs->imchgcap) {
		uint32_t *v = realloc(fs->imchg, 2 * fs->imchgcap * sizeof *v);
		if (v == NULL)
			return;
		fs->imchg = v;
		fs->imchgcap *= 2;
	}
	m->inlist = 1;
	fs->imchg[fs->nimchg++] = i;
}

/* ---- inodes in memory ---------------------------------------------------------- */

static uint32_t hslot(const struct lfs *fs, uint32_t ino)
{
	return (ino * 2654435761u) & (fs->nih - 1);
}

static void lru_unlink(struct lfs *fs, struct lnode *n)
{
	if (n->lprev)
		n->lprev->lnext = n->lnext;
	else if (fs->lru == n)
		fs->lru = n->lnext;
	if (n->lnext)
		n->lnext->lprev = n->lprev;
	else if (fs->lru_tail == n)
		fs->lru_tail = n->lprev;
	n->lprev = n->lnext = NULL;
}

static void hash_remove(struct lfs *fs, struct lnode *n)
{
	struct lnode **pp = &fs->ih[hslot(fs, n->ino)];
	while (*pp && *pp != n)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = n->hnext;
}

/* Nodes come in slabs and are recycled: one is made for every file
 * created or looked up, and many malloc/free pairs of them cost more than
 * the file system's own work. */
#define NODE_SLAB 64
struct lfs_nslab {
	struct lfs_nslab *next;
	struct lnode n[NODE_SLAB];
};

static void node_free(struct lfs *fs, struct lnode *n)
{
	lfs_maps_free(n);
	lfs_dir_free(n);
	n->hnext = fs->nfree;
	fs->nfree = n;
}

void lfs_node_drop(struct lfs *fs, struct lnode *n)
{
	hash_remove(fs, n);
	lru_unlink(fs, n);
	if (n->indirty) {
		struct lnode **pp = &fs->dirty;
		while (*pp && *pp != n)
			pp = &(*pp)->dnext;
		if (*pp)
			*pp = n->dnext;
	}
	fs->nnodes--;
	node_free(fs, n);
}

/* Drop clean, unheld inodes from the cold end while there are too many. */
static void trim(struct lfs *fs)
{
	while (fs->nnodes > MAX_NODES && fs->lru_tail != NULL) {
		struct lnode *n = fs->lru_tail;
		lfs_node_drop(fs, n);
	}
}

static struct lnode *find(struct lfs *fs, uint32_t ino)
{
	for (struct lnode *n = fs->ih[hslot(fs, ino)]; n; n = n->hnext)
		if (n->ino == ino)
			return n;
	return NULL;
}

/* Twice the chains, once there are as many inodes in memory as chains
 * (without memory for it, chains grow longer: slower, no worse). */
static void hash_grow(struct lfs *fs)
{
	uint32_t nn = fs->nih * 2;
	struct lnode **ih = calloc(nn, sizeof *ih);
	if (ih == NULL)
		return;
	struct lnode **old = fs->ih;
	uint32_t on = fs->nih;
	fs->ih = ih;
	fs->nih = nn;
	for (uint32_t i = 0; i < on; i++)
		for (struct lnode *n = old[i], *nx; n != NULL; n = nx) {
			nx = n->hnext;
			uint32_t h = hslot(fs, n->ino);
			n->hnext = ih[h];
			ih[h] = n;
		}
	free(old);
}

static struct lnode *node_new(struct lfs *fs, uint32_t ino)
{
	if (fs->nnodes >= fs->nih && fs->nih < (1u << 24))
		hash_grow(fs);
	if (fs->nfree == NULL) {
		struct lfs_nslab *s = malloc(sizeof *s);
		if (s == NULL)
			return NULL;
		s->next = fs->slabs;
		fs->slabs = s;
		for (int i = 0; i < NODE_SLAB; i++) {
			s->n[i].hnext = fs->nfree;
			fs->nfree = &s->n[i];
		}
	}
	struct lnode *n = fs->nfree;
	fs->nfree = n->hnext;
	/* All but the inode itself, which the caller fills (field by field:
	 * a memset of the whole node was a tenth of allocating an inode). */
	n->ino = ino;
	n->gen = 0;
	n->dirty = n->mapdirty = n->indirty = n->freed = n->gone = 0;
	n->nref = 0;
	n->ind = n->dind = NULL;
	n->dc = NULL;
	n->dir = NULL;
	n->dnext = n->lprev = n->lnext = NULL;
	uint32_t h = hslot(fs, ino);
	n->hnext = fs->ih[h];
	fs->ih[h] = n;
	fs->nnodes++;
	return n;
}

int lfs_get(struct lfs *fs, uint32_t ino, struct lnode **out)
{
	struct lnode *n = find(fs, ino);
	if (n != NULL) {
		if (n->nref++ == 0)
			lru_unlink(fs, n);
		*out = n;
		return 0;
	}
	int e;
	struct lfs_imapent *m = lfs_imap(fs, ino, &e);
	if (m == NULL)
		return e;
	if (m->loc == 0)
		return -ENOENT;
	uint8_t sec[LFS_SECT];
	TRY(lfs_read(fs, LFS_LOC_LBA(m->loc), 1, sec));
	struct lfs_dinode d;
	memcpy(&d, sec + LFS_LOC_SLOT(m->loc) * LFS_ISIZE, sizeof d);
	if (!lfs_inode_ok(&d, ino) || d.gen != m->gen ||
	    (d.type != LIBFS_T_REG && d.type != LIBFS_T_DIR)) {
		lfs_damaged(fs, "inode fails its check", ino);
		return -EIO;
	}
	trim(fs);
	n = node_new(fs, ino);
	if (n == NULL)
		return -ENOMEM;
	n->gen = m->gen;
	n->d = d;
	n->nref = 1;
	*out = n;
	return 0;
}

void lfs_dirty(struct lfs *fs, struct lnode *n)
{
	if (!n->dirty) {
		n->dirty = 1;
		fs->pend += LFS_ISIZE + sizeof(struct lfs_dimap);
	}
	if (!n->indirty) {
		n->indirty = 1;
		n->dnext = fs->dirty;
		fs->dirty = n;
		lru_unlink(fs, n);
	}
}

int lfs_ialloc(struct lfs *fs, uint32_t type, uint32_t perm, struct lnode **out)
{
	uint32_t ino, gen;
	int e;
	struct lfs_imapent *m;
	if (fs->free_head != 0) {
		ino = fs->free_head;
		m = lfs_imap(fs, ino, &e);
		if (m == NULL)
			return e;
		if (m->loc != 0 || (m->next_free != 0 && m->next_free >= fs->max_ino)) {
			lfs_damaged(fs, "free inode list", ino);
			return -EIO;
		}
		fs->free_head = m->next_free;
		gen = m->gen ? m->gen : 1;
	} else {
		if (fs->max_ino == UINT32_MAX)
			return -ENOSPC;
		ino = fs->max_ino;
		TRY(lfs_imap_grow(fs, ino / LFS_PER_BLK));
		fs->max_ino++;
		m = lfs_imap(fs, ino, &e);
		if (m == NULL) {
			fs->max_ino--;
			return e;
		}
		gen = 1;
	}
	struct lnode *n = find(fs, ino);
	if (n != NULL)                         /* a stale copy of a freed inode */
		lfs_node_drop(fs, n);
	n = node_new(fs, ino);
	if (n == NULL)
		return -ENOMEM;
	m->loc = 0;
	m->gen = gen;
	m->next_free = 0;
	lfs_imap_changed(fs, ino);
	n->gen = gen;
	uint64_t now = lfs_optime(fs);
	n->d = (struct lfs_dinode){
		.ino = ino,
		.gen = gen,
		.type = (uint16_t)type,
		.perm = perm,
		.nlink = type == LIBFS_T_DIR ? 2 : 1,
		.mtime = now,
		.ctime = now,
	};
	n->nref = 1;
	fs->nfiles++;
	lfs_dirty(fs, n);
	*out = n;
	return 0;
}

/* Free the inode: its blocks, its map entry (a new generation). */
static void ifree(struct lfs *fs, struct lnode *n)
{
	int e;
	lfs_free_blocks(fs, n);
	struct lfs_imapent *m = lfs_imap(fs, n->ino, &e);
	if (m != NULL) {
		if (m->loc != 0)
			lfs_seg_use(fs, LFS_LOC_LBA(m->loc), -(int64_t)LFS_ISIZE);
		m->loc = 0;
		m->gen = n->gen + 1;
		m->next_free = fs->free_head;
		fs->free_head = n->ino;
		lfs_imap_changed(fs, n->ino);
	}
	fs->nfiles--;
	lfs_node_drop(fs, n);
}

void lfs_iunlink(struct lfs *fs, struct lnode *n)
{
	n->freed = 1;
}

void lfs_put_last(struct lfs *fs, struct lnode *n)
{
	if (n->freed) {
		ifree(fs, n);
		return;
	}
	if (!n->indirty) {
		/* Clean and unheld: the warm end of the LRU. */
		n->lnext = fs->lru;
		n->lprev = NULL;
		if (fs->lru)
			fs->lru->lprev = n;
		fs->lru = n;
		if (fs->lru_tail == NULL)
			fs->lru_tail = n;
	}
}

int lfs_flush_inodes(struct lfs *fs)
{
	uint8_t *p = NULL;
	uint64_t lba = 0;
	uint32_t slot = LFS_IPERSECT;
	int e = 0;
	for (struct lnode *n = fs->dirty; n != NULL && e == 0; n = n->dnext) {
		if (!n->dirty)
			continue;
		if (slot == LFS_IPERSECT) {
			struct lfs_psent pe = { n->ino, 0, 0, LFS_K_INODE, 1, 0 };
			p = lfs_log_append(fs, &pe, &lba, &e);
			if (p == NULL)
				break;
			memset(p, 0, LFS_SECT);
			slot = 0;
		}
		struct lfs_imapent *m = lfs_imap(fs, n->ino, &e);
		if (m == NULL)
			break;
		n->d.ino = n->ino;
		n->d.gen = n->gen;
		lfs_inode_seal(&n->d);
		memcpy(p + slot * LFS_ISIZE, &n->d, LFS_ISIZE);
		if (m->loc != 0)
			lfs_seg_use(fs, LFS_LOC_LBA(m->loc), -(int64_t)LFS_ISIZE);
		m->loc = LFS_LOC(lba, slot);
		lfs_imap_changed(fs, n->ino);
		n->dirty = 0;
		/* The sector's bytes become live once it is full (or the last). */
		if (++slot == LFS_IPERSECT)
			lfs_seg_use(fs, lba, LFS_IPERSECT * LFS_ISIZE);
	}
	if (slot > 0 && slot < LFS_IPERSECT)
		lfs_seg_use(fs, lba, (int64_t)slot * LFS_ISIZE);
	if (e < 0)
		return e;
	/* Everything of theirs is written: off the dirty list. */
	struct lnode *n = fs->dirty;
	fs->dirty = NULL;
	while (n != NULL) {
		struct lnode *nx = n->dnext;
		n->indirty = 0;
		n->dnext = NULL;
		if (n->nref == 0)
			lfs_put(fs, (n->nref++, n));
		n = nx;
	}
	return 0;
}

void lfs_nodes_free(struct lfs *fs)
{
	for (uint32_t i = 0; fs->ih != NULL && i < fs->nih; i++) {
		struct lnode *n = fs->ih[i];
		while (n != NULL) {
			struct lnode *nx = n->hnext;
			node_free(fs, n);
			n = nx;
		}
		fs->ih[i] = NULL;
	}
	while (fs->slabs != NULL) {
		struct lfs_nslab *s = fs->slabs;
		fs->slabs = s->next;
		free(s);
	}
	fs->nfree = NULL;
	fs->nnodes = 0;
	fs->root = NULL;
	fs->dirty = fs->lru = fs->lru_tail = NULL;
}
