/*
 * dir.c - directories: arrays of 32-byte slots in the root region (FAT12/16)
 * or in a cluster chain, each slot a short entry, a long-name part, a
 * deleted entry (0xE5) or the end (0x00: nothing follows).
 *
 * The first time a directory is searched its slots are read once into an
 * index in memory - every live name, long and short, hashed - so a lookup
 * costs a hash probe, not a scan, and making a unique ~N short name is
 * cheap even with thousands of similar names.  The index is kept for the
 * directories used most recently (DIR_KEEP of them, plus any in use).
 * Listing (fat_dir_next) reads the slots themselves, so it needs no index
 * and sees exactly what is on the volume.
 *
 * Long names are only believed whole: parts in order, numbered down to 1,
 * each with the checksum of the short entry that follows.  Anything else
 * is an orphan and ignored (the short name is shown), as Windows does;
 * fsck reports and removes orphans.
 *
 * Writes: a directory's sectors are class CL_DIR, except in clusters made
 * since the last sync (a new directory, or one that grew), which are
 * CL_DATA: nothing points at them yet, so they go out with the data,
 * before the FAT and the names that will link them (sync.c).  A new
 * cluster is zeros throughout, so whatever the slots after the end held
 * before can never be mistaken for entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/fatfs/fat.h"

#define DIR_KEEP 1024            /* directories whose index is kept unused */
#define STALE    0xFFFFFFFFu     /* the first cluster of a directory that is gone */
#define SLOTS_PER_SECTOR (ED_SECTOR / DIRENT)

uint64_t fat_ino(const struct fdir *d, uint32_t slot)
{
	return ((uint64_t)(d->root ? 0 : d->first) << 16 | slot) + 2;
}

/* The most clusters a directory's chain may have (FAT_ENT_MAX slots). */
static uint32_t dir_limit(const struct fatfs *fs)
{
	return (uint32_t)((uint64_t)FAT_ENT_MAX * DIRENT / fs->csize) + 1;
}

/* ---- the list of known directories ----------------------------------------------- */

static void free_index(struct fdir *d)
{
	for (uint32_t i = 0; i < d->ne; i++)
		free(d->e[i].name);
	free(d->e);
	free(d->bucket);
	d->e = NULL;
	d->bucket = NULL;
	d->ne = d->cap = d->live = d->nbucket = 0;
	d->indexed = 0;
}

static void dir_free(struct fatfs *fs, struct fdir *d)
{
	if (d->prev)
		d->prev->next = d->next;
	else
		fs->dirs = d->next;
	if (d->next)
		d->next->prev = d->prev;
	free_index(d);
	fat_chain_free(&d->ch);
	fs->ndirs--;
	free(d);
}

/* Forget directories nobody uses beyond the DIR_KEEP most recent. */
static void trim(struct fatfs *fs)
{
	uint32_t kept = 0;
	for (struct fdir *d = fs->dirs, *next; d; d = next) {
		next = d->next;
		if (d->refs > 0 || d == fs->root)
			continue;
		if (++kept > DIR_KEEP)
			dir_free(fs, d);
	}
}

static void to_front(struct fatfs *fs, struct fdir *d)
{
	if (fs->dirs == d)
		return;
	if (d->prev)
		d->prev->next = d->next;
	if (d->next)
		d->next->prev = d->prev;
	d->prev = NULL;
	d->next = fs->dirs;
	if (fs->dirs)
		fs->dirs->prev = d;
	fs->dirs = d;
}

static struct fdir *dir_new(struct fatfs *fs)
{
	struct fdir *d = calloc(1, sizeof *d);
	if (d == NULL)
		return NULL;
	d->next = fs->dirs;
	if (fs->dirs)
		fs->dirs->prev = d;
	fs->dirs = d;
	fs->ndirs++;
	return d;
}

int fat_dir_root(struct fatfs *fs)
{
	struct fdir *d = dir_new(fs);
	if (d == NULL)
		return -ENOMEM;
	d->root = 1;
	d->refs = 1;
	d->ino = 1;
	fs->root = d;
	if (fs->type == 32) {
		d->first = fs->rootclus;
		int e = fat_chain_load(fs, &d->ch, d->first, dir_limit(fs));
		if (e < 0)
			return e;
		d->nslots = d->ch.len * (fs->csize / DIRENT);
	} else {
		d->nslots = fs->rootents;
	}
	if (d->nslots > FAT_ENT_MAX)
		d->nslots = FAT_ENT_MAX;
	return 0;
}

int fat_dir_get(struct fatfs *fs, uint32_t first, uint64_t ino, struct fdir **out)
{
	if (first == 0 || (fs->type == 32 && first == fs->rootclus)) {
		fs->root->refs++;
		*out = fs->root;
		return 0;
	}
	for (struct fdir *d = fs->dirs; d; d = d->next)
		if (!d->root && d->first == first) {
			d->refs++;
			if (ino)
				d->ino = ino;
			to_front(fs, d);
			*out = d;
			return 0;
		}
	if (!fat_valid_clus(fs, first))
		return fat_damaged(fs, "a directory starts outside the volume, at cluster", first);
	struct fdir *d = dir_new(fs);
	if (d == NULL)
		return -ENOMEM;
	d->first = first;
	d->ino = ino;
	int e = fat_chain_load(fs, &d->ch, first, dir_limit(fs));
	if (e < 0) {
		dir_free(fs, d);
		return e;
	}
	uint64_t n = (uint64_t)d->ch.len * (fs->csize / DIRENT);
	d->nslots = n > FAT_ENT_MAX ? FAT_ENT_MAX : (uint32_t)n;
	d->refs = 1;
	trim(fs);
	*out = d;
	return 0;
}

void fat_dir_put(struct fatfs *fs, struct fdir *d)
{
	if (d != NULL && d->refs > 0)
		d->refs--;
	(void)fs;
}

void fat_dirs_free(struct fatfs *fs)
{
	while (fs->dirs)
		dir_free(fs, fs->dirs);
	fs->root = NULL;
}

/* A directory whose clusters are about to be freed must not be found
 * again under its first cluster. */
static void forget(struct fatfs *fs, uint32_t first)
{
	for (struct fdir *d = fs->dirs; d; d = d->next)
		if (!d->root && d->first == first) {
			if (d->refs == 0)
				dir_free(fs, d);
			else
				d->first = STALE;         /* nothing will match it */
			return;
		}
}

/* ---- slots ---------------------------------------------------------------------------- */

int fat_dir_slot(struct fatfs *fs, struct fdir *d, uint32_t s, uint64_t *lba, uint32_t *off)
{
	uint64_t byte = (uint64_t)s * DIRENT;
	*off = (uint32_t)(byte % ED_SECTOR);
	if (d->root && fs->type != 32) {
		if (s >= fs->rootents)
			return -EINVAL;
		*lba = fs->rootsec + byte / ED_SECTOR;
		return 0;
	}
	uint32_t c = fat_chain_at(&d->ch, (uint32_t)(byte / fs->csize), NULL);
	if (c == 0)
		return -EINVAL;
	*lba = fat_clus_lba(fs, c) + byte % fs->csize / ED_SECTOR;
	return 0;
}

uint8_t *fat_dir_entry(struct fatfs *fs, struct fdir *d, uint32_t s, int *err)
{
	uint64_t lba;
	uint32_t off;
	*err = fat_dir_slot(fs, d, s, &lba, &off);
	if (*err < 0)
		return NULL;
	uint8_t *p = fat_meta_sector(fs, lba, VV_RA, err);
	return p ? p + off : NULL;
}

/* The class of a write to slot s of d. */
static int slot_class(struct fatfs *fs, struct fdir *d, uint32_t s)
{
	if (d->root && fs->type != 32)
		return CL_DIR;
	uint32_t c = fat_chain_at(&d->ch, (uint32_t)((uint64_t)s * DIRENT / fs->csize), NULL);
	return fset_has(&fs->newdir, c) ? CL_DATA : CL_DIR;
}

void fat_dir_done(struct fatfs *fs, struct fdir *d, uint32_t s, int changed)
{
	uint64_t lba;
	uint32_t off;
	if (fat_dir_slot(fs, d, s, &lba, &off) < 0)
		return;
	if (changed)
		vvol_dirty(&fs->vol, lba, 1, slot_class(fs, d, s));
	vvol_unpin(&fs->vol, lba);
}

/* ---- reading slots: long names and short entries ---------------------------------------------- */

/* A long name being gathered, slot by slot. */
struct lfn {
	uint16_t u[20 * LFN_CHARS];
	int parts;                /* parts announced by the last-part flag (0: none) */
	int next;                 /* the number the next part must have             */
	uint8_t sum;
	uint32_t first;           /* slot of the first part                         */
};

static void lfn_part(struct lfn *l, const uint8_t *p, uint32_t slot)
{
	int ord = p[LDIR_ORD] & 0x1F;
	if (ord > 20) {
		l->parts = 0;             /* 20 parts hold 260 characters: no more */
		return;
	}
	if (p[LDIR_ORD] & LFN_LAST) {
		l->parts = ord;
		l->next = ord;
		l->sum = p[LDIR_CHKSUM];
		l->first = slot;
	}
	if (l->parts == 0 || ord == 0 || ord != l->next || p[LDIR_CHKSUM] != l->sum ||
	    p[LDIR_TYPE] != 0 || le16(p + LDIR_FSTCLUSLO) != 0) {
		l->parts = 0;             /* out of order: an orphan */
		return;
	}
	uint16_t *u = l->u + (ord - 1) * LFN_CHARS;
	for (int i = 0; i < 5; i++)
		u[i] = le16(p + LDIR_NAME1 + 2 * i);
	for (int i = 0; i < 6; i++)
		u[5 + i] = le16(p + LDIR_NAME2 + 2 * i);
	for (int i = 0; i < 2; i++)
		u[11 + i] = le16(p + LDIR_NAME3 + 2 * i);
	l->next--;
}

/* The long name that ends at a short entry, if it is whole and its; else 0. */
static int lfn_done(struct lfn *l, const uint8_t *sfn, char *out)
{
	int ok = l->parts > 0 && l->next == 0 && fat_sfn_sum(sfn) == l->sum;
	int n = 0;
	if (ok) {
		while (n < l->parts * LFN_CHARS && l->u[n] != 0)
			n++;
		if (n == 0 || n > LFN_MAX)
			ok = 0;
		else
			fat_ucs2_name(l->u, n, out);
	}
	int parts = l->parts;
	l->parts = 0;
	return ok ? parts : 0;
}

/* ---- the index -------------------------------------------------------------------------------- */

static uint32_t sfn_hash(const uint8_t sfn[11])
{
	uint32_t h = 2166136261u;
	for (int i = 0; i < 11; i++)
		h = (h ^ sfn[i]) * 16777619u;
	return h;
}

static void link_ent(struct fdir *d, int32_t i)
{
	struct fdent *e = &d->e[i];
	uint32_t bl = e->hl & (d->nbucket - 1), bs = e->hs & (d->nbucket - 1);
	e->nl = d->bucket[2 * bl];
	d->bucket[2 * bl] = i;
	e->ns = d->bucket[2 * bs + 1];
	d->bucket[2 * bs + 1] = i;
}

static void unlink_ent(struct fdir *d, int32_t i)
{
	struct fdent *e = &d->e[i];
	int32_t *p = &d->bucket[2 * (e->hl & (d->nbucket - 1))];
	while (*p >= 0 && *p != i)
		p = &d->e[*p].nl;
	if (*p == i)
		*p = e->nl;
	p = &d->bucket[2 * (e->hs & (d->nbucket - 1)) + 1];
	while (*p >= 0 && *p != i)
		p = &d->e[*p].ns;
	if (*p == i)
		*p = e->ns;
}

static int rehash(struct fdir *d, uint32_t want)
{
	uint32_t nb = 16;
	while (nb < want * 2)
		nb <<= 1;
	int32_t *b = malloc(2 * nb * sizeof *b);
	if (b == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < 2 * nb; i++)
		b[i] = -1;
	free(d->bucket);
	d->bucket = b;
	d->nbucket = nb;
	for (uint32_t i = 0; i < d->ne; i++)
		if (d->e[i].name)
			link_ent(d, (int32_t)i);
	return 0;
}

static int add_ent(struct fdir *d, uint32_t slot, uint8_t nlfn, uint8_t attr, const uint8_t *sfn,
                   const char *name)
{
	if (d->ne == d->cap) {
		uint32_t cap = d->cap ? d->cap * 2 : 16;
		struct fdent *ne = fat_grow(d->e, d->ne, cap, sizeof *ne);
		if (ne == NULL)
			return -ENOMEM;
		d->e = ne;
		d->cap = cap;
	}
	if (d->ne + 1 > d->nbucket && rehash(d, d->ne + 1) < 0)
		return -ENOMEM;
	struct fdent *e = &d->e[d->ne];
	e->name = malloc(strlen(name) + 1);
	if (e->name == NULL)
		return -ENOMEM;
	strcpy(e->name, name);
	e->slot = slot;
	e->nlfn = nlfn;
	e->attr = attr;
	memcpy(e->sfn, sfn, 11);
	e->hl = fat_name_hash(name);
	e->hs = sfn_hash(sfn);
	link_ent(d, (int32_t)d->ne);
	d->ne++;
	d->live++;
	return (int)(d->ne - 1);
}

static int is_dot(const uint8_t *p)
{
	return p[0] == '.' && (memcmp(p, ".          ", 11) == 0 || memcmp(p, "..         ", 11) == 0);
}

static int build_index(struct fatfs *fs, struct fdir *d)
{
	if (d->indexed)
		return 0;
	free_index(d);
	if (rehash(d, 16) < 0)
		return -ENOMEM;
	struct lfn l = { .parts = 0 };
	char name[LFN_MAX * 3 + 1];
	d->end = d->nslots;
	d->holes = 0;
	d->hole_at = UINT32_MAX;
	int at_end = 0, e = 0;
	/* A sector at a time: one look-up in the cache for its 16 slots. */
	for (uint32_t s = 0; s < d->nslots && !at_end && e == 0;) {
		uint32_t s0 = s;
		const uint8_t *p = fat_dir_entry(fs, d, s, &e);
		if (p == NULL)
			return e;
		for (uint32_t k = s % SLOTS_PER_SECTOR; k < SLOTS_PER_SECTOR && s < d->nslots && e == 0;
		     k++, s++, p += DIRENT) {
			const uint8_t *ent = p;
			if (ent[0] == 0) {
				d->end = s;
				at_end = 1;
				break;
			}
			if (ent[0] == DIR_FREE) {
				if (d->holes++ == 0)
					d->hole_at = s;
				l.parts = 0;
				continue;
			}
			if ((ent[DIR_ATTR] & ATTR_LFN_MASK) == ATTR_LFN) {
				lfn_part(&l, ent, s);
				continue;
			}
			if ((ent[DIR_ATTR] & ATTR_VOLID) || is_dot(ent)) {
				l.parts = 0;
				continue;
			}
			int parts = lfn_done(&l, ent, name);
			if (parts == 0)
				fat_sfn_show(ent, ent[DIR_NTRES], name);
			int i = add_ent(d, s, (uint8_t)parts, ent[DIR_ATTR], ent, name);
			if (i < 0)
				e = i;
		}
		fat_dir_done(fs, d, s0, 0);
	}
	if (e < 0)
		return e;
	d->indexed = 1;
	return 0;
}

int fat_dir_find(struct fatfs *fs, struct fdir *d, const char *name)
{
	int e = build_index(fs, d);
	if (e < 0)
		return e;
	uint32_t h = fat_name_hash(name);
	for (int32_t i = d->bucket[2 * (h & (d->nbucket - 1))]; i >= 0; i = d->e[i].nl)
		if (d->e[i].hl == h && fat_name_eq(d->e[i].name, name))
			return i;
	/* The short name of an entry with a long one ("PROGRA~1"). */
	uint8_t sfn[11], nt;
	if (fat_sfn_fits(name, sfn, &nt)) {
		h = sfn_hash(sfn);
		for (int32_t i = d->bucket[2 * (h & (d->nbucket - 1)) + 1]; i >= 0; i = d->e[i].ns)
			if (memcmp(d->e[i].sfn, sfn, 11) == 0)
				return i;
	}
	return -ENOENT;
}

static int sfn_taken(const struct fdir *d, const uint8_t sfn[11])
{
	uint32_t h = sfn_hash(sfn);
	for (int32_t i = d->bucket[2 * (h & (d->nbucket - 1)) + 1]; i >= 0; i = d->e[i].ns)
		if (memcmp(d->e[i].sfn, sfn, 11) == 0)
			return 1;
	return 0;
}

int fat_dir_read(struct fatfs *fs, struct fdir *d, int idx, uint8_t *sfn32)
{
	int e;
	const uint8_t *p = fat_dir_entry(fs, d, d->e[idx].slot, &e);
	if (p == NULL)
		return e;
	memcpy(sfn32, p, DIRENT);
	fat_dir_done(fs, d, d->e[idx].slot, 0);
	return 0;
}

/* ---- adding and removing ---------------------------------------------------------------------- */

/* A short name for a long one, unique in d. */
static int make_sfn(struct fdir *d, const uint16_t *u, int n, const char *name, uint8_t sfn[11])
{
	uint8_t basis[11];
	fat_sfn_basis(u, n, basis);
	/* The basis itself, if nothing was lost making it. */
	char shown[40];
	fat_sfn_show(basis, 0, shown);
	if (fat_name_eq(shown, name) && !sfn_taken(d, basis)) {
		memcpy(sfn, basis, 11);
		return 0;
	}
	for (uint32_t k = 1; k <= 4; k++) {
		fat_sfn_tail(basis, k, sfn);
		if (!sfn_taken(d, sfn))
			return 0;
	}
	/* Many alike: two letters of the basis, four hex digits of a hash of
	 * the name, then ~N, as Windows does. */
	uint32_t h = fat_name_hash(name);
	static const char hex[] = "0123456789ABCDEF";
	for (uint32_t k = 0; k < 1000000; k++) {
		uint8_t b2[11];
		memcpy(b2, basis, 11);
		uint32_t x = (h + k / 9) & 0xFFFF;
		for (int i = 0; i < 4; i++)
			b2[2 + i] = (uint8_t)hex[x >> (12 - 4 * i) & 15];
		if (b2[0] == ' ')
			b2[0] = '_';
		if (b2[1] == ' ')
			b2[1] = '_';
		b2[6] = b2[7] = ' ';
		fat_sfn_tail(b2, 1 + k % 9, sfn);
		if (!sfn_taken(d, sfn))
			return 0;
	}
	return -ENOSPC;
}

/* Make room for n slots at the end: grow the chain by a cluster (zeros,
 * and new: class CL_DATA). */
static int grow_dir(struct fatfs *fs, struct fdir *d, uint32_t n)
{
	while (d->end + n > d->nslots) {
		if ((d->root && fs->type != 32) || d->nslots + fs->csize / DIRENT > FAT_ENT_MAX)
			return -ENOSPC;
		uint32_t last = fat_chain_at(&d->ch, d->ch.len - 1, NULL);
		int e = fat_chain_grow(fs, &d->ch, 1, last + 1);
		if (e < 0)
			return e;
		uint32_t c = fat_chain_at(&d->ch, d->ch.len - 1, NULL);
		if ((e = fset_add(&fs->newdir, c)) == 0)
			e = vvol_write(&fs->vol, fat_clus_lba(fs, c), NULL, fs->spc, CL_DATA);
		if (e < 0)
			return e;
		d->nslots += fs->csize / DIRENT;
	}
	return 0;
}

/* The first run of n free slots: among deleted ones, else at the end. */
static int find_room(struct fatfs *fs, struct fdir *d, uint32_t n, uint32_t *at)
{
	if (d->holes >= n) {
		/* From the first slot that may be free (every one below it is
		 * in use): refilling a directory emptied by deletes is then not
		 * a scan from its start for every name. */
		uint32_t run = 0, first = UINT32_MAX;
		for (uint32_t s = d->hole_at; s < d->end; s++) {
			int e;
			const uint8_t *p = fat_dir_entry(fs, d, s, &e);
			if (p == NULL)
				return e;
			int free_slot = p[0] == DIR_FREE;
			fat_dir_done(fs, d, s, 0);
			if (free_slot && first == UINT32_MAX)
				first = s;
			run = free_slot ? run + 1 : 0;
			if (run == n) {
				*at = s + 1 - n;
				d->hole_at = first == *at ? s + 1 : first;
				return 0;
			}
		}
		d->hole_at = first;
	}
	int e = grow_dir(fs, d, n);
	if (e < 0)
		return e;
	*at = d->end;
	return 0;
}

static int put_slot(struct fatfs *fs, struct fdir *d, uint32_t s, const uint8_t *ent)
{
	int e;
	uint8_t *p = fat_dir_entry(fs, d, s, &e);
	if (p == NULL)
		return e;
	memcpy(p, ent, DIRENT);
	fat_dir_done(fs, d, s, 1);
	return 0;
}

int fat_dir_add(struct fatfs *fs, struct fdir *d, const char *name, const uint8_t *proto,
                int *idx)
{
	uint16_t u[LFN_MAX + 1];
	if (!d->root && d->first == STALE)
		return -ENOENT;               /* removed (by another process, say) */
	int n = fat_name_ucs2(name, u);
	if (n < 0)
		return n;
	int e = build_index(fs, d);
	if (e < 0)
		return e;
	uint8_t ent[DIRENT], sfn[11], nt = 0;
	uint32_t nlfn = 0;
	if (!fat_sfn_fits(name, sfn, &nt) || sfn_taken(d, sfn)) {
		nt = 0;
		if ((e = make_sfn(d, u, n, name, sfn)) < 0)
			return e;
		nlfn = ((uint32_t)n + LFN_CHARS - 1) / LFN_CHARS;
	}
	uint32_t at = 0;
	if ((e = find_room(fs, d, nlfn + 1, &at)) < 0)
		return e;
	/* The long-name parts, last part first, then the short entry. */
	uint8_t sum = fat_sfn_sum(sfn);
	for (uint32_t k = 0; k < nlfn; k++) {
		uint32_t ord = nlfn - k;
		memset(ent, 0, sizeof ent);
		ent[LDIR_ORD] = (uint8_t)(ord | (k == 0 ? LFN_LAST : 0));
		ent[LDIR_ATTR] = ATTR_LFN;
		ent[LDIR_CHKSUM] = sum;
		for (int i = 0; i < LFN_CHARS; i++) {
			int j = (int)(ord - 1) * LFN_CHARS + i;
			uint16_t c = j < n ? u[j] : j == n ? 0 : 0xFFFF;
			int o = i < 5 ? LDIR_NAME1 + 2 * i : i < 11 ? LDIR_NAME2 + 2 * (i - 5) :
			        LDIR_NAME3 + 2 * (i - 11);
			put16(ent + o, c);
		}
		if ((e = put_slot(fs, d, at + k, ent)) < 0)
			return e;
	}
	memcpy(ent, proto, DIRENT);
	memcpy(ent + DIR_NAME, sfn, 11);
	if (ent[0] == 0xE5)
		ent[0] = DIR_KANJI;
	ent[DIR_NTRES] = nt;
	uint32_t slot = at + nlfn;
	if ((e = put_slot(fs, d, slot, ent)) < 0)
		return e;
	if (at >= d->end) {
		d->end = slot + 1;
		/* Whatever the slot after holds, it must read as the end. */
		if (d->end < d->nslots) {
			uint8_t *p = fat_dir_entry(fs, d, d->end, &e);
			if (p == NULL)
				return e;
			int changed = p[0] != 0;
			p[0] = 0;
			fat_dir_done(fs, d, d->end, changed);
		}
	} else {
		d->holes -= nlfn + 1;
	}
	int i = add_ent(d, slot, (uint8_t)nlfn, ent[DIR_ATTR], sfn, name);
	if (i < 0)
		return i;
	*idx = i;
	return 0;
}

int fat_dir_remove(struct fatfs *fs, struct fdir *d, int idx)
{
	struct fdent *x = &d->e[idx];
	uint32_t s0 = x->slot - x->nlfn;
	for (uint32_t s = s0; s <= x->slot; s++) {
		int e;
		uint8_t *p = fat_dir_entry(fs, d, s, &e);
		if (p == NULL)
			return e;
		p[0] = DIR_FREE;
		fat_dir_done(fs, d, s, 1);
	}
	d->holes += x->nlfn + 1u;
	if (s0 < d->hole_at)
		d->hole_at = s0;
	unlink_ent(d, idx);
	free(x->name);
	x->name = NULL;
	x->slot = UINT32_MAX;
	d->live--;
	/* Mostly dead: read it afresh next time. */
	if (d->ne > 64 && d->live < d->ne / 4)
		free_index(d);
	return 0;
}

int fat_dir_empty(struct fatfs *fs, struct fdir *d)
{
	int e = build_index(fs, d);
	return e < 0 ? e : d->live == 0;
}

int fat_dir_next(struct fatfs *fs, struct fdir *d, uint64_t *cookie, char *name, uint8_t *sfn32,
                 uint32_t *slot)
{
	struct lfn l = { .parts = 0 };
	for (uint64_t s = *cookie; s < d->nslots; s++) {
		int e;
		const uint8_t *p = fat_dir_entry(fs, d, (uint32_t)s, &e);
		if (p == NULL)
			return e;
		uint8_t ent[DIRENT];
		memcpy(ent, p, DIRENT);
		fat_dir_done(fs, d, (uint32_t)s, 0);
		if (ent[0] == 0)
			break;
		if (ent[0] == DIR_FREE) {
			l.parts = 0;
			continue;
		}
		if ((ent[DIR_ATTR] & ATTR_LFN_MASK) == ATTR_LFN) {
			lfn_part(&l, ent, (uint32_t)s);
			continue;
		}
		if ((ent[DIR_ATTR] & ATTR_VOLID) || is_dot(ent)) {
			l.parts = 0;
			continue;
		}
		if (lfn_done(&l, ent, name) == 0)
			fat_sfn_show(ent, ent[DIR_NTRES], name);
		memcpy(sfn32, ent, DIRENT);
		*slot = (uint32_t)s;
		*cookie = s + 1;
		return 1;
	}
	*cookie = d->nslots;
	return 0;
}

int fat_dir_make(struct fatfs *fs, struct fdir *parent, uint32_t *first)
{
	struct fchain ch = { 0 };
	uint32_t near = parent->root ? 0 : parent->first;
	int e = fat_chain_grow(fs, &ch, 1, near);
	uint32_t c = ch.first;
	fat_chain_free(&ch);
	if (e < 0)
		return e;
	if ((e = fset_add(&fs->newdir, c)) < 0)
		return e;
	uint64_t lba = fat_clus_lba(fs, c);
	if ((e = vvol_write(&fs->vol, lba, NULL, fs->spc, CL_DATA)) < 0)
		return e;
	uint16_t date, time;
	uint8_t tenth;
	fat_now(&date, &time, &tenth);
	uint8_t *p = vvol_sector(&fs->vol, lba, 0, &e);
	if (p == NULL)
		return e;
	for (int k = 0; k < 2; k++) {
		uint8_t *x = p + k * DIRENT;
		memcpy(x + DIR_NAME, k ? "..         " : ".          ", 11);
		x[DIR_ATTR] = ATTR_DIR;
		x[DIR_CRTTIMETENTH] = tenth;
		put16(x + DIR_CRTTIME, time);
		put16(x + DIR_CRTDATE, date);
		put16(x + DIR_LSTACCDATE, date);
		put16(x + DIR_WRTTIME, time);
		put16(x + DIR_WRTDATE, date);
		dir_set_first(x, k ? near : c);
	}
	vvol_dirty(&fs->vol, lba, 1, CL_DATA);
	vvol_unpin(&fs->vol, lba);
	*first = c;
	return 0;
}

/* ---- paths ---------------------------------------------------------------------------------------- */

int fat_walk(struct fatfs *fs, const char *path, struct fdir **dir, int *idx, const char **last)
{
	struct fdir *d = fs->root;
	d->refs++;
	const char *p = path;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char comp[LIBFS_NAME_MAX + 1];
		if (n == 0 || n > LIBFS_NAME_MAX) {
			fat_dir_put(fs, d);
			return n == 0 ? -ENOENT : -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = 0;
		int i = fat_dir_find(fs, d, comp);
		if (slash == NULL) {
			if (i < 0 && i != -ENOENT) {
				fat_dir_put(fs, d);
				return i;
			}
			*dir = d;
			*idx = i < 0 ? -1 : i;
			*last = p;
			return 0;
		}
		if (i < 0) {
			fat_dir_put(fs, d);
			return i;
		}
		if (!(d->e[i].attr & ATTR_DIR)) {
			fat_dir_put(fs, d);
			return -ENOTDIR;
		}
		uint8_t ent[DIRENT];
		int e = fat_dir_read(fs, d, i, ent);
		struct fdir *child = NULL;
		uint64_t ino = fat_ino(d, d->e[i].slot);
		if (e == 0)
			e = fat_dir_get(fs, dir_first(ent), ino, &child);
		fat_dir_put(fs, d);
		if (e < 0)
			return e;
		d = child;
		p = slash + 1;
	}
}

/* ---- another process changed the volume (share.c) ------------------------------------- */

int fat_dir_index(struct fatfs *fs, struct fdir *d)
{
	return build_index(fs, d);
}

int fat_dirs_catch_up(struct fatfs *fs, int (*changed)(struct fatfs *, struct fdir *, void *),
                      void *arg)
{
	int e = 0;
	for (struct fdir *d = fs->dirs, *next; d && e == 0; d = next) {
		next = d->next;
		if (!changed(fs, d, arg))
			continue;
		if (d->refs == 0 && d != fs->root)
			dir_free(fs, d);
		else
			e = fat_dir_reload(fs, d);
	}
	return e;
}

/* d is gone: empty, and found under no cluster. */
static void make_stale(struct fdir *d)
{
	free_index(d);
	fat_chain_free(&d->ch);
	d->first = STALE;
	d->nslots = 0;
}

int fat_dir_reload(struct fatfs *fs, struct fdir *d)
{
	free_index(d);
	if (d->root && fs->type != 32)
		return 0;                     /* a fixed region */
	if (!d->root && d->first == STALE)
		return 0;
	if (!d->root) {
		/* Still a directory?  Its first cluster in use, holding "." that
		 * names it.  (Read before its chain, which may now be any
		 * file's, or free: neither is damage.) */
		uint32_t v;
		int e = fat_get(fs, d->first, &v);
		if (e < 0)
			return e;
		if (v == 0 || v == fs->bad) {
			make_stale(d);
			return 0;
		}
		/* (Not checked against its checksum: it may be file data now.) */
		uint8_t p[ED_SECTOR];
		if ((e = vvol_read(&fs->vol, fat_clus_lba(fs, d->first), p, 1, 0)) < 0)
			return e;
		int dot = is_dot(p) && p[1] == ' ' && (p[DIR_ATTR] & ATTR_DIR) && dir_first(p) == d->first;
		if (!dot) {
			make_stale(d);
			return 0;
		}
	}
	fat_chain_free(&d->ch);
	int e = fat_chain_load(fs, &d->ch, d->first, dir_limit(fs));
	if (e < 0)
		return e;
	uint64_t n = (uint64_t)d->ch.len * (fs->csize / DIRENT);
	d->nslots = n > FAT_ENT_MAX ? FAT_ENT_MAX : (uint32_t)n;
	return 0;
}

/* Called by ops.c when a directory's entry is removed: its clusters go. */
void fat_dir_forget(struct fatfs *fs, uint32_t first)
{
	forget(fs, first);
}
