/*
 * fsck.c - the checker: what fsck.fat checks, on the same volume code the
 * file system runs on, and (repair) the same fixes fsck.fat's automatic
 * mode makes where they are safe.
 *
 *   boot sector   the jump, the signature, the backup copy (FAT32), FSInfo's
 *                 signatures, the label in the boot sector against the one
 *                 in the root directory (fat_boot refused what cannot be used)
 *   FAT           the media byte in entry 0; every copy the same as the
 *                 active one                       repair: copy it over them
 *   chains        every name's chain, claimed cluster by cluster: a chain
 *                 that leaves the volume, runs into a free or bad cluster,
 *                 loops, or runs into another's clusters (cross-linked); a
 *                 file whose chain is longer than its size, or shorter
 *                                                  repair: cut the chain
 *                                                  there, fit the size
 *   lost clusters allocated, but in nobody's chain  repair: free them
 *   entries       "." and ".." of every subdirectory, a directory with a
 *                 size or without a cluster, a start cluster out of range,
 *                 short names with characters DOS forbids, the same short
 *                 name twice in a directory, long names whose parts are out
 *                 of order or whose checksum is not their short entry's
 *                 (orphans)                        repair: drop orphans,
 *                                                  fix sizes, starts, dots
 *   FSInfo        its free count against the FAT   repair: rewrite it
 *
 * Bad short names and duplicates are reported, not renamed.  The walk is
 * iterative (a deep or looping tree cannot overflow the stack) and claims
 * each cluster once, so a damaged volume costs at most a pass over its
 * clusters.  Memory: two bits per cluster.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/fatfs/fat.h"

#define PATHLEN 1024

struct ck {
	struct fatfs *fs;
	int repair;
	void (*say)(void *arg, const char *what);
	void *arg;
	struct fatfs_stats *st;
	uint8_t *owned;           /* clusters claimed by a name                      */
	uint8_t *mine;            /* clusters of the chain being walked              */
	uint32_t *walk;           /* those clusters, in order                        */
	uint32_t nwalk, capwalk;
	int fat_changed;
};

static int bit(const uint8_t *m, uint32_t c) { return m[c >> 3] >> (c & 7) & 1; }
static void setbit(uint8_t *m, uint32_t c) { m[c >> 3] |= (uint8_t)(1u << (c & 7)); }
static void clrbit(uint8_t *m, uint32_t c) { m[c >> 3] &= (uint8_t)~(1u << (c & 7)); }

static void problem(struct ck *k, int fixed, const char *fmt, ...)
{
	char line[PATHLEN + 200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	k->st->problems++;
	k->st->repairable += fixed != 0;
	if (fixed && k->repair) {
		k->st->repaired++;
		strncat(line, " (repaired)", sizeof line - strlen(line) - 1);
	}
	if (k->say)
		k->say(k->arg, line);
}

/* ---- the boot sector ------------------------------------------------------------ */

static int check_boot(struct ck *k)
{
	struct fatfs *fs = k->fs;
	uint8_t b[ED_SECTOR], c[ED_SECTOR];
	int e = vvol_read(&fs->vol, 0, b, 1, 0);
	if (e < 0)
		return e;
	if (!(b[0] == 0xEB && b[2] == 0x90) && b[0] != 0xE9)
		problem(k, 0, "boot sector: no jump instruction at its start (%02x %02x %02x)", b[0],
		        b[1], b[2]);
	if (b[BS_SIG] != 0x55 || b[BS_SIG + 1] != 0xAA)
		problem(k, 0, "boot sector: no 0x55 0xAA signature");
	if (fs->type == 32) {
		if (fs->bkboot != 0 && fs->bkboot != 0xFFFF && fs->bkboot < fs->rsvd) {
			if ((e = vvol_read(&fs->vol, fs->bkboot, c, 1, 0)) < 0)
				return e;
			if (memcmp(b, c, ED_SECTOR) != 0) {
				problem(k, 1, "boot sector: its backup (sector %u) differs", fs->bkboot);
				if (k->repair && (e = vvol_write(&fs->vol, fs->bkboot, b, 1, CL_FAT)) < 0)
					return e;
			}
		}
		uint32_t fi = le16(b + BPB32_FSINFO);
		if (fi != 0 && fi != 0xFFFF && fs->fsinfo == 0)
			problem(k, 0, "FSInfo sector %u: bad signatures", fi);
	}
	return 0;
}

/* ---- the FATs --------------------------------------------------------------------- */

static int check_copies(struct ck *k)
{
	struct fatfs *fs = k->fs;
	uint32_t media;
	int e = fat_get(fs, 0, &media);
	if (e < 0)
		return e;
	if ((media & 0xFF) != fs->media)
		problem(k, 0, "FAT: entry 0 (%#x) does not hold the media byte %#x", media, fs->media);
	if (fs->nfats < 2)
		return 0;
	const uint32_t piece = 128;
	uint8_t *a = malloc(piece * ED_SECTOR), *b = malloc(piece * ED_SECTOR);
	if (a == NULL || b == NULL) {
		free(a);
		free(b);
		return -ENOMEM;
	}
	uint64_t base = fs->rsvd + (uint64_t)fs->active * fs->fatsz;
	for (uint32_t copy = 0; copy < fs->nfats && e == 0; copy++) {
		if ((int)copy == fs->active)
			continue;
		uint64_t other = fs->rsvd + (uint64_t)copy * fs->fatsz;
		int differ = 0;
		for (uint32_t s = 0; s < fs->fatsz && e == 0; s += piece) {
			uint32_t n = fs->fatsz - s < piece ? fs->fatsz - s : piece;
			/* Two stretches the volume never wrote are the same zeros. */
			uint64_t pa, pb;
			if (fs->vol.k && vvol_mapped(&fs->vol, base + s, &pa) == 0 &&
			    vvol_mapped(&fs->vol, base + s + n - 1, &pa) == 0 &&
			    vvol_mapped(&fs->vol, other + s, &pb) == 0 &&
			    vvol_mapped(&fs->vol, other + s + n - 1, &pb) == 0 &&
			    vvol_dirty_sectors(&fs->vol, VV_ALL) == 0)
				continue;
			if ((e = vvol_read(&fs->vol, base + s, a, n, 0)) < 0 ||
			    (e = vvol_read(&fs->vol, other + s, b, n, 0)) < 0)
				break;
			if (memcmp(a, b, (size_t)n * ED_SECTOR) != 0) {
				differ = 1;
				if (k->repair)
					e = vvol_write(&fs->vol, other + s, a, n, CL_FAT);
			}
		}
		if (differ)
			problem(k, 1, "FAT: copy %u differs from copy %d", copy, fs->active);
	}
	free(a);
	free(b);
	return e;
}

/* ---- chains ---------------------------------------------------------------------------- */

static int walk_push(struct ck *k, uint32_t c)
{
	if (k->nwalk == k->capwalk) {
		uint32_t cap = k->capwalk ? k->capwalk * 2 : 1024;
		uint32_t *n = fat_grow(k->walk, k->nwalk, cap, sizeof *n);
		if (n == NULL)
			return -ENOMEM;
		k->walk = n;
		k->capwalk = cap;
	}
	k->walk[k->nwalk++] = c;
	setbit(k->mine, c);
	return 0;
}

static void walk_done(struct ck *k)
{
	for (uint32_t i = 0; i < k->nwalk; i++)
		clrbit(k->mine, k->walk[i]);
	k->nwalk = 0;
}

/* Claim first's chain for path; k->walk gets its clusters.  *cut is set
 * when the chain had to end early: the caller then fixes the entry that
 * names it (repair) - the FAT side is fixed here.  size: a file's size in
 * bytes (the chain is cut to what it needs), or -1 for a directory. */
static int claim(struct ck *k, const char *path, uint32_t first, int64_t size, int *cut)
{
	struct fatfs *fs = k->fs;
	*cut = 0;
	uint32_t c = first, prev = 0;
	uint64_t need = size < 0 ? UINT64_MAX : ((uint64_t)size + fs->csize - 1) / fs->csize;
	while (c != 0) {
		const char *why = NULL;
		if (!fat_valid_clus(fs, c))
			why = "points past the end of the volume";
		else if (bit(k->mine, c))
			why = "loops";
		else if (bit(k->owned, c))
			why = "is cross-linked with another file's chain";
		else if (k->nwalk >= need)
			why = "is longer than the file's size";
		uint32_t v = 0;
		if (why == NULL) {
			int e = fat_get(fs, c, &v);
			if (e < 0)
				return e;
			if (v == 0)
				why = "runs into a free cluster";
			else if (v == fs->bad)
				why = "runs into a bad cluster";
		}
		if (why != NULL) {
			problem(k, 1, "%s: its chain %s at cluster %u (after %u cluster%s)", path, why, c,
			        k->nwalk, k->nwalk == 1 ? "" : "s");
			*cut = 1;
			if (k->repair && prev != 0) {
				int e = fat_set(fs, prev, fs->type == 12 ? 0xFFF : fs->type == 16 ? 0xFFFF :
				                FAT32_MASK, CL_FAT);
				if (e < 0)
					return e;
				k->fat_changed = 1;
			}
			return 0;
		}
		int e = walk_push(k, c);
		if (e < 0)
			return e;
		setbit(k->owned, c);
		if (fat_is_eoc(fs, v))
			return 0;
		prev = c;
		c = v;
	}
	return 0;
}

/* ---- directories -------------------------------------------------------------------------- */

/* A directory to look at: where its slots are, and its parent's cluster. */
struct job {
	uint32_t first;           /* 0: the FAT12/16 root region                   */
	uint32_t parent;          /* the cluster ".." must name (0: the root)      */
	int root;
	char *path;
	uint32_t *clus;           /* its clusters, as claimed                      */
	uint32_t nclus;
};

struct stack {
	struct job *v;
	uint32_t n, cap;
};

/* A directory to check later, with the clusters its claim found (k->walk). */
static int push(struct stack *s, const struct ck *k, uint32_t first, uint32_t parent, int root,
                const char *path)
{
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 32;
		struct job *n = fat_grow(s->v, s->n, cap, sizeof *n);
		if (n == NULL)
			return -ENOMEM;
		s->v = n;
		s->cap = cap;
	}
	char *p = malloc(strlen(path) + 1);
	uint32_t *c = k->nwalk ? malloc(k->nwalk * sizeof *c) : NULL;
	if (p == NULL || (k->nwalk && c == NULL)) {
		free(p);
		free(c);
		return -ENOMEM;
	}
	strcpy(p, path);
	if (c)
		memcpy(c, k->walk, k->nwalk * sizeof *c);
	s->v[s->n++] = (struct job){ first, parent, root, p, c, k->nwalk };
	return 0;
}

/* The slots of the directory being checked: its clusters (from k->walk,
 * copied) or the root region. */
struct dslots {
	uint32_t *clus;
	uint32_t nclus;
	uint64_t region, nslots;
};

static int slot_lba(struct fatfs *fs, const struct dslots *ds, uint32_t s, uint64_t *lba,
                    uint32_t *off)
{
	uint64_t byte = (uint64_t)s * DIRENT;
	*off = (uint32_t)(byte % ED_SECTOR);
	if (ds->clus == NULL) {
		*lba = ds->region + byte / ED_SECTOR;
		return 0;
	}
	uint64_t ci = byte / fs->csize;
	if (ci >= ds->nclus)
		return -EINVAL;
	*lba = fat_clus_lba(fs, ds->clus[ci]) + byte % fs->csize / ED_SECTOR;
	return 0;
}

/* Change a slot's bytes (repair). */
static int fix_slot(struct ck *k, const struct dslots *ds, uint32_t s, const uint8_t *ent)
{
	uint64_t lba;
	uint32_t off;
	int e = slot_lba(k->fs, ds, s, &lba, &off);
	if (e < 0)
		return e;
	uint8_t *p = vvol_sector(&k->fs->vol, lba, 0, &e);
	if (p == NULL)
		return e;
	memcpy(p + off, ent, DIRENT);
	vvol_dirty(&k->fs->vol, lba, 1, CL_DIR);
	vvol_unpin(&k->fs->vol, lba);
	return 0;
}

/* Short names seen in one directory (duplicates). */
struct names {
	uint8_t (*v)[11];
	uint32_t n, cap;
	int32_t *hash;
	int32_t *next;
	uint32_t nh;
};

static uint32_t sfn_h(const uint8_t *s)
{
	uint32_t h = 2166136261u;
	for (int i = 0; i < 11; i++)
		h = (h ^ s[i]) * 16777619u;
	return h;
}

/* 1 if sfn was seen already, else remembers it. */
static int seen(struct names *nm, const uint8_t *sfn)
{
	if (nm->nh == 0 || nm->n * 2 >= nm->nh) {
		uint32_t nh = nm->nh ? nm->nh * 2 : 64;
		int32_t *h = malloc(nh * sizeof *h);
		if (h == NULL)
			return 0;
		for (uint32_t i = 0; i < nh; i++)
			h[i] = -1;
		free(nm->hash);
		nm->hash = h;
		nm->nh = nh;
		for (uint32_t i = 0; i < nm->n; i++) {
			uint32_t b = sfn_h(nm->v[i]) & (nh - 1);
			nm->next[i] = h[b];
			h[b] = (int32_t)i;
		}
	}
	uint32_t b = sfn_h(sfn) & (nm->nh - 1);
	for (int32_t i = nm->hash[b]; i >= 0; i = nm->next[i])
		if (memcmp(nm->v[i], sfn, 11) == 0)
			return 1;
	if (nm->n == nm->cap) {
		uint32_t cap = nm->cap ? nm->cap * 2 : 64;
		void *v = fat_grow(nm->v, nm->n, cap, sizeof *nm->v);
		int32_t *nx = v ? fat_grow(nm->next, nm->n, cap, sizeof *nx) : NULL;
		if (v)
			nm->v = v;
		if (nx)
			nm->next = nx;
		if (v == NULL || nx == NULL)
			return 0;
		nm->cap = cap;
	}
	memcpy(nm->v[nm->n], sfn, 11);
	nm->next[nm->n] = nm->hash[b];
	nm->hash[b] = (int32_t)nm->n++;
	return 0;
}

static void join(char *out, const char *dir, const char *name)
{
	snprintf(out, PATHLEN, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name);
}

/* Long-name parts in progress: the slots they are in, for dropping them. */
struct lparts {
	uint32_t first, n;        /* slots [first, first + n)                   */
	int expect;               /* the number the next part must have (0: none) */
	uint8_t sum;
	uint16_t u[20 * LFN_CHARS];
	int total;
};

/* Free slots [from, to] (an entry and its long-name parts; repair). */
static int drop_slots(struct ck *k, const struct dslots *ds, uint32_t from, uint32_t to)
{
	int e = 0;
	for (uint32_t s = from; k->repair && e == 0 && s <= to; s++) {
		uint8_t ent[DIRENT];
		memset(ent, 0, sizeof ent);
		ent[0] = DIR_FREE;
		e = fix_slot(k, ds, s, ent);
	}
	return e;
}

static int drop_orphans(struct ck *k, const struct dslots *ds, const char *dir, struct lparts *lp)
{
	if (lp->n == 0)
		return 0;
	problem(k, 1, "%s: %u orphaned long-name part%s (slot %u)", dir, lp->n, lp->n == 1 ? "" : "s",
	        lp->first);
	int e = drop_slots(k, ds, lp->first, lp->first + lp->n - 1);
	lp->n = 0;
	lp->expect = 0;
	return e;
}

static int check_dir(struct ck *k, struct stack *stk, const struct job *j)
{
	struct fatfs *fs = k->fs;
	struct dslots ds = { NULL, 0, 0, 0 };
	int e = 0;
	if (j->first == 0) {
		ds.region = fs->rootsec;
		ds.nslots = fs->rootents;
	} else {
		/* The clusters its name's claim found: its own, no further. */
		ds.clus = j->clus;
		ds.nclus = j->nclus;
		ds.nslots = (uint64_t)ds.nclus * (fs->csize / DIRENT);
		if (ds.nslots > FAT_ENT_MAX)
			ds.nslots = FAT_ENT_MAX;
	}
	struct names nm = { 0 };
	struct lparts lp = { 0 };
	char path[PATHLEN], name[LFN_MAX * 3 + 1];
	for (uint64_t s = 0; e == 0 && s < ds.nslots; s++) {
		uint64_t lba;
		uint32_t off;
		if ((e = slot_lba(fs, &ds, (uint32_t)s, &lba, &off)) < 0)
			break;
		uint8_t ent[DIRENT];
		const uint8_t *p = vvol_sector(&fs->vol, lba, VV_RA, &e);
		if (p == NULL)
			break;
		memcpy(ent, p + off, DIRENT);
		vvol_unpin(&fs->vol, lba);
		/* The first two slots of a subdirectory: "." and "..". */
		if (!j->root && s < 2) {
			const char *want = s == 0 ? ".          " : "..         ";
			uint32_t start = s == 0 ? j->first : j->parent;
			if (memcmp(ent, want, 11) != 0 || !(ent[DIR_ATTR] & ATTR_DIR) ||
			    dir_first(ent) != start) {
				problem(k, 1, "%s: expected a '%s' entry naming cluster %u in slot %u", j->path,
				        s == 0 ? "." : "..", start, (unsigned)s);
				memset(ent, 0, sizeof ent);
				memcpy(ent, want, 11);
				ent[DIR_ATTR] = ATTR_DIR;
				dir_set_first(ent, start);
				if (k->repair)
					e = fix_slot(k, &ds, (uint32_t)s, ent);
			}
			continue;
		}
		if (ent[0] == 0) {
			e = drop_orphans(k, &ds, j->path, &lp);
			break;
		}
		if (ent[0] == DIR_FREE) {
			e = drop_orphans(k, &ds, j->path, &lp);
			continue;
		}
		if ((ent[DIR_ATTR] & ATTR_LFN_MASK) == ATTR_LFN) {
			int ord = ent[LDIR_ORD] & 0x1F;
			if (ent[LDIR_ORD] & LFN_LAST) {
				if ((e = drop_orphans(k, &ds, j->path, &lp)) < 0)
					break;
				lp.first = (uint32_t)s;
				lp.expect = ord;
				lp.total = ord;
				lp.sum = ent[LDIR_CHKSUM];
			}
			if (lp.expect == 0 || ord != lp.expect || ord == 0 || ord > 20 ||
			    ent[LDIR_CHKSUM] != lp.sum) {
				if (lp.n == 0)
					lp.first = (uint32_t)s;
				lp.n++;
				if ((e = drop_orphans(k, &ds, j->path, &lp)) < 0)
					break;
				continue;
			}
			uint16_t *u = lp.u + (ord - 1) * LFN_CHARS;
			for (int i = 0; i < 5; i++)
				u[i] = le16(ent + LDIR_NAME1 + 2 * i);
			for (int i = 0; i < 6; i++)
				u[5 + i] = le16(ent + LDIR_NAME2 + 2 * i);
			for (int i = 0; i < 2; i++)
				u[11 + i] = le16(ent + LDIR_NAME3 + 2 * i);
			lp.n++;
			lp.expect--;
			continue;
		}
		/* A short entry: the long name before it is its own, or orphaned. */
		int haslfn = lp.n > 0 && lp.expect == 0 && lp.sum == fat_sfn_sum(ent);
		if (lp.n > 0 && !haslfn && (e = drop_orphans(k, &ds, j->path, &lp)) < 0)
			break;
		if (haslfn) {
			int n = 0;
			while (n < lp.total * LFN_CHARS && lp.u[n] != 0)
				n++;
			fat_ucs2_name(lp.u, n, name);
		} else {
			fat_sfn_show(ent, ent[DIR_NTRES], name);
		}
		/* Its slots, long-name parts included (dropping it drops them). */
		uint32_t first_slot = haslfn ? lp.first : (uint32_t)s;
		lp.n = 0;
		lp.expect = 0;
		if (ent[DIR_ATTR] & ATTR_VOLID) {
			if (!j->root)
				problem(k, 0, "%s: a volume label in a subdirectory (slot %u)", j->path, (unsigned)s);
			continue;
		}
		join(path, j->path, name);
		if (!fat_sfn_ok(ent))
			problem(k, 0, "%s: bad short name", path);
		if (memcmp(ent, ".          ", 11) == 0 || memcmp(ent, "..         ", 11) == 0) {
			problem(k, 0, "%s: a dot entry in slot %u", j->path, (unsigned)s);
			continue;
		}
		if (seen(&nm, ent))
			problem(k, 0, "%s: the short name is used twice in the directory", path);
		uint32_t first = dir_first(ent);
		uint32_t size = le32(ent + DIR_FILESIZE);
		int isdir = ent[DIR_ATTR] & ATTR_DIR, changed = 0;
		if (isdir && size != 0) {
			problem(k, 1, "%s: a directory with a size (%u)", path, size);
			put32(ent + DIR_FILESIZE, 0);
			changed = 1;
		}
		if (first == 1 || (first != 0 && !fat_valid_clus(fs, first))) {
			problem(k, 1, "%s: its first cluster %u is outside the volume", path, first);
			dir_set_first(ent, 0);
			if (!isdir)
				put32(ent + DIR_FILESIZE, 0);
			first = 0;
			size = 0;
			changed = 1;
		}
		if (isdir && (first == 0 || first == j->first || first == j->parent ||
		              (fs->type == 32 && first == fs->rootclus))) {
			problem(k, 1, "%s: a directory without clusters of its own (%u): dropped", path, first);
			e = drop_slots(k, &ds, first_slot, (uint32_t)s);
			continue;
		}
		int cut = 0;
		if (first != 0 && (e = claim(k, path, first, isdir ? -1 : (int64_t)size, &cut)) < 0)
			break;
		uint32_t have = k->nwalk;
		if (cut && have == 0) {
			/* Not one cluster of its own: it starts nowhere now. */
			dir_set_first(ent, 0);
			first = 0;
			changed = 1;
			if (isdir) {
				ent[0] = DIR_FREE;
				changed = 0;
				if ((e = drop_slots(k, &ds, first_slot, (uint32_t)s)) < 0)
					break;
			}
		}
		if (!isdir && (uint64_t)size > (uint64_t)have * fs->csize) {
			problem(k, 1, "%s: size %u bytes, but its chain holds %llu", path, size,
			        (unsigned long long)have * fs->csize);
			put32(ent + DIR_FILESIZE, have * fs->csize);
			changed = 1;
		}
		if (changed && k->repair && (e = fix_slot(k, &ds, (uint32_t)s, ent)) < 0)
			break;
		if (ent[0] != DIR_FREE && isdir) {
			k->st->dirs++;
			e = push(stk, k, first, j->root ? 0 : j->first, 0, path);
		} else if (ent[0] != DIR_FREE) {
			k->st->files++;
			k->st->bytes += le32(ent + DIR_FILESIZE);
		}
		walk_done(k);
	}
	free(nm.v);
	free(nm.hash);
	free(nm.next);
	return e;
}

/* ---- the labels, lost clusters and the free count -------------------------------------------------- */

static int check_label(struct ck *k)
{
	struct fatfs *fs = k->fs;
	uint8_t b[ED_SECTOR];
	int e = vvol_read(&fs->vol, 0, b, 1, 0);
	if (e < 0)
		return e;
	const uint8_t *boot = b + (fs->type == 32 ? BS32_VOLLAB : BS16_VOLLAB);
	if (b[fs->type == 32 ? BS32_BOOTSIG : BS16_BOOTSIG] != 0x29)
		return 0;
	/* The root's label entry, if any. */
	uint8_t root[11];
	int found = 0;
	struct fdir *d = fs->root;
	for (uint32_t s = 0; s < d->nslots && !found; s++) {
		const uint8_t *p = fat_dir_entry(fs, d, s, &e);
		if (p == NULL)
			return e;
		uint8_t first = p[0], attr = p[DIR_ATTR];
		if (first != 0 && first != DIR_FREE && (attr & ATTR_LFN_MASK) != ATTR_LFN &&
		    (attr & ATTR_VOLID)) {
			memcpy(root, p, 11);
			found = 1;
		}
		fat_dir_done(fs, d, s, 0);
		if (first == 0)
			break;
	}
	int noname = memcmp(boot, "NO NAME    ", 11) == 0;
	if (!found && !noname)
		problem(k, 0, "the boot sector's label '%.11s' is not in the root directory", boot);
	else if (found && memcmp(root, boot, 11) != 0 && !noname)
		problem(k, 0, "the labels differ: '%.11s' in the root directory, '%.11s' in the boot "
		        "sector", root, boot);
	return 0;
}

static int check_lost(struct ck *k)
{
	struct fatfs *fs = k->fs;
	uint64_t lost = 0, nfree = 0;
	for (uint32_t c = 2; c <= fs->nclusters + 1; c++) {
		uint32_t v;
		int e = fat_get(fs, c, &v);
		if (e < 0)
			return e;
		if (v == 0) {
			nfree++;
		} else if (v != fs->bad && !bit(k->owned, c)) {
			lost++;
			if (k->repair && !fs->keep_lost) {
				if ((e = fat_set(fs, c, 0, CL_FAT)) < 0)
					return e;
				nfree++;
				k->fat_changed = 1;
			}
		}
	}
	if (lost)
		problem(k, !fs->keep_lost, "%llu cluster%s allocated in the FAT but in no file's chain (lost)",
		        (unsigned long long)lost, lost == 1 ? "" : "s");
	k->st->free = nfree;
	k->st->clusters = fs->nclusters;
	if (fs->fsinfo != 0) {
		uint8_t s[ED_SECTOR];
		int e = vvol_read(&fs->vol, fs->fsinfo, s, 1, 0);
		if (e < 0)
			return e;
		uint32_t fc = le32(s + FSI_FREE_COUNT);
		if (fc != nfree) {
			problem(k, 1, "FSInfo: free cluster count %u, really %llu", fc,
			        (unsigned long long)nfree);
			if (k->repair) {
				put32(s + FSI_FREE_COUNT, (uint32_t)nfree);
				if ((e = vvol_write(&fs->vol, fs->fsinfo, s, 1, CL_FREE)) < 0)
					return e;
			}
		}
	}
	fs->nfree = (int64_t)nfree;
	fs->info_dirty = 0;
	return 0;
}

static void ck_report(void *arg, const char *line)
{
	problem(arg, 1, "%s", line);
}

int fat_fsck_vol(struct fatfs *fs, int repair, void (*say)(void *arg, const char *what), void *arg,
                 struct fatfs_stats *st)
{
	memset(st, 0, sizeof *st);
	struct ck k = { fs, repair, say, arg, st, NULL, NULL, NULL, 0, 0, 0 };
	size_t bytes = ((size_t)fs->nclusters + 2 + 7) / 8;
	k.owned = calloc(1, bytes);
	k.mine = calloc(1, bytes);
	struct stack stk = { 0 };
	int e = k.owned && k.mine ? 0 : -ENOMEM;
	if (e == 0)
		e = check_boot(&k);
	/* The metadata against its checksums first; then nothing is checked
	 * as it is read (the checker reads damage on purpose). */
	if (e == 0 && (e = fat_ck_verify(fs, ck_report, &k)) > 0)
		e = 0;
	int trust = fs->ck_trust;
	fs->ck_trust = 0;
	if (e == 0)
		e = check_copies(&k);
	int cut;
	if (e == 0 && fs->type == 32)
		e = claim(&k, "/", fs->rootclus, -1, &cut);
	if (e == 0)
		e = push(&stk, &k, fs->type == 32 ? fs->rootclus : 0, 0, 1, "/");
	walk_done(&k);
	while (e == 0 && stk.n > 0) {
		struct job j = stk.v[--stk.n];
		e = check_dir(&k, &stk, &j);
		free(j.path);
		free(j.clus);
	}
	while (stk.n > 0) {
		free(stk.v[stk.n - 1].path);
		free(stk.v[--stk.n].clus);
	}
	free(stk.v);
	if (e == 0)
		e = check_label(&k);
	if (e == 0)
		e = check_lost(&k);
	/* Repaired: the checksums are made again from what is there now. */
	if (e == 0 && repair && fs->ck_area && !fs->ro && (e = fat_ck_rebuild(fs)) == 0)
		fs->ck_state = CK_OPEN;   /* unmount marks it clean */
	fs->ck_trust = trust;
	free(k.owned);
	free(k.mine);
	free(k.walk);
	return e;
}

static void quiet(void *arg, const char *what)
{
	(void)arg;
	(void)what;
}

int fatfs_fsck(const char *opts, void (*say)(void *arg, const char *what), void *arg,
               struct fatfs_stats *st)
{
	char v[8];
	int repair = libfs_opt(opts, "repair", v, sizeof v) == 1;
	void *p;
	/* Mounted read-only unless repairing; never with the check option. */
	char o[1024];
	snprintf(o, sizeof o, "%s%sckfsck%s", opts, opts[0] ? "," : "", repair ? "" : ",ro");
	int e = fatfs_ops.mount(o, &p);
	if (e < 0)
		return e;
	struct fatfs *fs = p;
	/* The mount holds the lock until the unmount (share.c): others wait
	 * while the volume is checked.  Repairs would change it under the
	 * caches of those who have it mounted: not while they do. */
	if (repair && fat_share_users(fs) > 1) {
		fat_say("fatfs: fsck: other programs have this volume mounted: not repairing");
		e = -EBUSY;
	} else {
		e = fat_fsck_vol(fs, repair, say ? say : quiet, arg, st);
	}
	int u = fatfs_ops.unmount(fs);
	return e < 0 ? e : u;
}

int fatfs_fsck_image(uint8_t *img, uint64_t nsectors, int repair,
                     void (*say)(void *arg, const char *what), void *arg,
                     struct fatfs_stats *st)
{
	void *p;
	int e = fatfs_mount_image(img, nsectors, repair ? "" : "ro", &p);
	if (e < 0)
		return e;
	e = fat_fsck_vol(p, repair, say ? say : quiet, arg, st);
	int u = fatfs_ops.unmount(p);
	return e < 0 ? e : u;
}
