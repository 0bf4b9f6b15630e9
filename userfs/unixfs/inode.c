/*
 * inode.c - in-memory inodes.  An inode is an exonode (ufs_format.h); the
 * in-memory copy holds its metadata twice - as it is now, and as the
 * exonode says (what may become durable) - plus its extents and, for an
 * immediate file, its bytes.  Loading one costs one exonode map (the
 * kernel renders the exonode's entries and data into a page we read
 * without further system calls), plus one per map node of a large file.
 *
 * The table keeps inodes after their last user goes, as an inode cache,
 * until it holds UFS_ICACHE of them; then clean unused ones are let go.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/clock.h"
#include "userfs/unixfs/ufs.h"

#define UFS_ICACHE 512

uint64_t ufs_now(struct ufs *fs)
{
	uint64_t t = libos_time_ns();
	/* Never backwards, and distinct, so ordering by time works. */
	if (t <= fs->clock)
		t = fs->clock + 1;
	fs->clock = t;
	return t;
}

uint32_t ufs_newgen(struct ufs *fs)
{
	/* Distinct from the generation an earlier inode in the same slot had,
	 * with overwhelming probability: a stale directory entry then fails
	 * the generation check instead of naming the new file. */
	uint64_t x = ufs_now(fs) ^ fs->sb.fsid;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x ? (uint32_t)x : 1;
}

struct uinode *ufs_ifind(struct ufs *fs, uint64_t ino)
{
	for (struct uinode *ip = fs->itab[ino % UFS_IHASH]; ip; ip = ip->hnext)
		if (ip->ino == ino)
			return ip;
	return NULL;
}

static void itab_remove(struct ufs *fs, struct uinode *ip)
{
	struct uinode **pp = &fs->itab[ip->ino % UFS_IHASH];
	while (*pp && *pp != ip)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = ip->hnext;
}

static void dirty_remove(struct ufs *fs, struct uinode *ip)
{
	struct uinode **pp = &fs->dirty;
	while (*pp && *pp != ip)
		pp = &(*pp)->dnext;
	if (*pp)
		*pp = ip->dnext;
	ip->dirty = 0;
}

static void idestroy(struct ufs *fs, struct uinode *ip)
{
	fs->resv -= ip->resv < fs->resv ? ip->resv : fs->resv;
	itab_remove(fs, ip);
	if (ip->dirty)
		dirty_remove(fs, ip);
	while (ip->memnames) {
		struct umemname *m = ip->memnames;
		ip->memnames = m->next;
		free(m);
	}
	ufs_dir_forget_index(ip);
	free(ip->ext);
	free(ip->mem);
	free(ip);
	fs->ninodes--;
}

void ufs_idirty(struct ufs *fs, struct uinode *ip)
{
	if (ip->dirty || ip->persist == LIBFS_P_MEMORY)
		return;
	ip->dirty = 1;
	ip->dnext = fs->dirty;
	fs->dirty = ip;
}

static struct uinode *inew(struct ufs *fs, uint64_t sector, uint16_t slot)
{
	struct uinode *ip = calloc(1, sizeof *ip);
	if (ip == NULL)
		return NULL;
	ip->ino = ufs_ino(sector, slot);
	ip->sector = sector;
	ip->slot = slot;
	ip->node[UN_INODE] = (struct unode){ sector, slot, 0, 1 };
	ip->hnext = fs->itab[ip->ino % UFS_IHASH];
	fs->itab[ip->ino % UFS_IHASH] = ip;
	fs->ninodes++;
	return ip;
}

/* Let unused clean inodes go when the table is large. */
static void itrim(struct ufs *fs)
{
	if (fs->ninodes <= UFS_ICACHE)
		return;
	for (uint32_t h = 0; h < UFS_IHASH && fs->ninodes > UFS_ICACHE / 2; h++) {
		struct uinode *ip = fs->itab[h];
		while (ip) {
			struct uinode *next = ip->hnext;
			if (ip->refs == 0 && !ip->dirty && !ip->unlinked && ip != fs->root &&
			    ip->persist != LIBFS_P_MEMORY && bc_count(&fs->bc, ip->ino, 0, UINT64_MAX, 1) == 0) {
				bc_drop(&fs->bc, ip->ino, 0);
				idestroy(fs, ip);
			}
			ip = next;
		}
	}
}

/* Read metadata, immediate bytes and extents from the exonode. */
static int iload(struct ufs *fs, struct uinode *ip, uint32_t gen)
{
	uint8_t *page = malloc(4096);
	if (page == NULL)
		return -ENOMEM;
	int64_t r = ufs_xn_snapshot(fs, ip->sector, ip->slot, page);
	if (r < 0) {
		free(page);
		return r == ED_E_NOMEM || r == ED_E_NOMAP ? -ENOMEM : -EIO;
	}
	const struct ed_xnmap_hdr *h = (const void *)page;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	int have_meta = 0, have_imm = 0;
	uint32_t immlen = 0;
	int err = 0;
	if (h->length != UFS_INODE_BYTES)
		err = -EIO;
	for (uint32_t i = 0; err == 0 && i < h->nent; i++) {
		if (ent[i].type != ED_ENT_DATA)
			continue;
		if (ent[i].a + ent[i].len > 4096) {
			err = -EIO;
		} else if (ent[i].idx == UFS_E_META && ent[i].len == sizeof(struct ufs_dinode)) {
			memcpy(&ip->d, page + ent[i].a, sizeof ip->d);
			have_meta = 1;
		} else if (ent[i].idx == UFS_E_IMM && ent[i].len <= UFS_IMM_MAX) {
			memcpy(ip->imm, page + ent[i].a, ent[i].len);
			immlen = ent[i].len;
			have_imm = 1;
		} else {
			err = -EIO;
		}
	}
	const struct ufs_dinode *d = &ip->d;
	if (err == 0 && (!have_meta || d->magic != UFS_DINODE_MAGIC ||
	                 (d->type != UFS_T_REG && d->type != UFS_T_DIR) ||
	                 d->persist > LIBFS_P_WRITETHROUGH || (gen != 0 && d->gen != gen) ||
	                 (d->type == UFS_T_DIR && d->size % UFS_DIRCHUNK != 0) ||
	                 d->size > (uint64_t)INT64_MAX))
		err = -EIO;
	if (err == 0 && (d->flags & UFS_DF_IMMEDIATE) &&
	    (d->size > UFS_IMM_MAX || (d->size > 0 && (!have_imm || immlen < d->size))))
		err = -EIO;
	if (err == 0 && !(d->flags & UFS_DF_IMMEDIATE) && have_imm)
		err = -EIO;
	if (err == 0)
		err = ufs_map_load(fs, ip, page);
	free(page);
	if (err < 0)
		return err;
	/* Immediate files keep no extents. */
	if ((d->flags & UFS_DF_IMMEDIATE) && ip->next > 0)
		return -EIO;
	ip->dd = ip->d;
	ip->persist = d->persist;
	ip->loaded = 1;
	/* Extents past the last block the size covers can only be left by a
	 * crash (data written, the larger size never made durable).  What they
	 * hold is not the file's: let them go before it can grow over them. */
	uint64_t keep = (d->size + UFS_BSIZE - 1) / UFS_BSIZE * UFS_BSECT;
	if (!fs->readonly && !(d->flags & UFS_DF_IMMEDIATE) && ip->mapped > keep)
		return ufs_map_shrink(fs, ip, keep);
	return 0;
}

int ufs_iget(struct ufs *fs, uint64_t ino, uint32_t gen, struct uinode **ipp)
{
	struct uinode *ip = ufs_ifind(fs, ino);
	if (ip != NULL) {
		if (gen != 0 && ip->d.gen != gen)
			return -EIO;
		ip->refs++;
		*ipp = ip;
		return 0;
	}
	uint32_t slot = ufs_ino_slot(ino);
	uint64_t sector = ufs_ino_sector(ino);
	if (slot >= UFS_IPB || sector >= fs->fm.nsectors)
		return -EIO;
	itrim(fs);
	ip = inew(fs, sector, (uint16_t)slot);
	if (ip == NULL)
		return -ENOMEM;
	int err = iload(fs, ip, gen);
	if (err < 0) {
		idestroy(fs, ip);
		return err;
	}
	ip->refs = 1;
	*ipp = ip;
	return 0;
}

void ufs_iput(struct ufs *fs, struct uinode *ip)
{
	if (ip->refs > 0)
		ip->refs--;
	if (ip->refs > 0 || !ip->unlinked)
		return;
	if (ip->persist == LIBFS_P_MEMORY) {
		/* Never written: free it now. */
		ufs_ifree(fs, ip);
		return;
	}
	/* Its name is gone from the directory data, which may not be durable
	 * yet: the exonode is freed once it is (sync.c). */
	ufs_doom(fs, ip);
}

int ufs_icreate(struct ufs *fs, struct uinode *dir, int type, uint32_t perm, struct uinode **ipp)
{
	uint64_t sector;
	uint16_t slot;
	uint64_t near = dir ? dir->sector : fs->sb_sector;
	int err = ufs_alloc_inode(fs, near, 0, &sector, &slot);
	if (err < 0)
		return err;
	struct uinode *ip = inew(fs, sector, slot);
	if (ip == NULL) {
		ufs_xn_dealloc(fs, sector, slot);
		return -ENOMEM;
	}
	struct ufs_dinode *d = &ip->d;
	d->magic = UFS_DINODE_MAGIC;
	d->type = (uint8_t)type;
	d->persist = LIBFS_P_WRITEBACK;
	d->flags = UFS_DF_IMMEDIATE;
	d->gen = ufs_newgen(fs);
	d->perm = perm & 07777;
	d->mtime = d->ctime = ufs_now(fs);
	d->parent = dir ? dir->ino : ip->ino;
	d->nlink = type == UFS_T_DIR ? 2 : 1;
	/* An empty file with this metadata is safe to become durable at once. */
	int64_t r = ufs_xn_add_data(fs, sector, slot, UFS_E_META, d, sizeof *d);
	if (r < 0) {
		ufs_xn_dealloc(fs, sector, slot);
		idestroy(fs, ip);
		return ufs_err(r);
	}
	ip->dd = *d;
	ip->persist = LIBFS_P_WRITEBACK;
	ip->loaded = 1;
	ip->isnew = 1;
	ip->refs = 1;
	ufs_idirty(fs, ip);
	*ipp = ip;
	return 0;
}

int ufs_ifree(struct ufs *fs, struct uinode *ip)
{
	int err = 0;
	if (ip->persist != LIBFS_P_MEMORY)
		err = ufs_map_shrink(fs, ip, 0);
	if (err == 0) {
		int64_t r = ufs_xn_dealloc(fs, ip->sector, ip->slot);
		if (r < 0 && r != ED_E_SLOT && r != ED_E_NOTBOUND)
			err = ufs_err(r);
	}
	if (err < 0)
		return err;
	bc_drop(&fs->bc, ip->ino, 0);
	/* A freed slot of a normal block is where the next inode can go. */
	if (ufs_is_memblk(fs, ip->sector))
		ufs_memblk_put(fs, ip->sector);
	else
		fs->iblk_hint = ip->sector;
	idestroy(fs, ip);
	return 0;
}

void ufs_idrop_all(struct ufs *fs)
{
	for (uint32_t h = 0; h < UFS_IHASH; h++)
		while (fs->itab[h])
			idestroy(fs, fs->itab[h]);
	fs->dirty = NULL;
	fs->root = NULL;
}
