/*
 * csum.c - checksums of fatfs's metadata, kept where no FAT reader looks.
 *
 * The FAT format has no room for checksums: a directory sector is 16
 * entries of 32 bytes, a FAT sector entries end to end.  So they live in
 * an area of the virtual volume past the FAT's last sector (the boot
 * sector's total count stops before it): Linux, dosfstools and mtools see
 * a plain FAT, `exotool fat-export` writes the FAT's sectors only, and a
 * volume of any size pays only for the table sectors written (the volume
 * is allocate-on-write).
 *
 *   area sector 0      the header: magic "FATCSUM1", version, state
 *                      (clean, open), the FAT's sector count, the area's
 *                      size; CRC-32C of the rest at byte 508
 *   area sector 1 + t  slots for volume sectors 62t .. 62t + 61: each a
 *                      CRC-32C of the sector and a mark that it is set;
 *                      at byte 496 the first sector it covers, at 508 the
 *                      CRC-32C of the rest
 *
 * Which sectors: the metadata - everything before the first cluster (boot
 * sector, FSInfo, the FATs, a FAT12/16 root directory) and every cluster
 * of every directory.  A metadata sector is checked when it comes from the
 * disk (vvol_unchecked): its slot's CRC must match, or, with no slot, the
 * sector must be all zeros (never written).  A mismatch is -EIO with a
 * message naming the sector, what it holds and what was wrong, and the
 * volume turns read-only (fat_damaged).
 *
 * Crashes.  A sector and its slot cannot be written at once, so the state
 * says whether they may disagree: a read-write mount sets "open" (durably,
 * before anything else is written) and unmount sets "clean" after the last
 * sync.  Meanwhile every sync writes the slots of the metadata it changes
 * in the same sync.  A mount that finds "open" (power lost, process
 * killed) makes every slot again from what the disk holds (fat_ck_rebuild:
 * the reserved sectors, the FATs, and the directory tree) before trusting
 * them - clearing too the slots a cut sync set for sectors it never wrote
 * into chunks never written before (never_written); read-only it checks
 * nothing.  Damage done while the volume was
 * open and not closed is therefore not caught - the price of keeping FAT's
 * own format.  Found damage keeps the state "open" but sets "damaged",
 * which a mount does not rebuild over: fsck -t fatfs -r repairs, then
 * makes the slots again.
 */
#include <errno.h>
#include <stdio.h>
#include "libos/crc32c.h"
#include "userfs/fatfs/fat.h"

#define CK_SLOTS      62u
#define CK_SET        0x54455343u     /* "CSET": the slot holds a CRC          */
#define CK_VERSION    1u
static const uint8_t ck_magic[8] = { 'F', 'A', 'T', 'C', 'S', 'U', 'M', '1' };

static int all_zero(const uint8_t *p)
{
	for (unsigned i = 0; i < ED_SECTOR; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* ---- the area ------------------------------------------------------------------------ */

uint64_t fat_ck_area_size(uint64_t vol_sectors)
{
	return 1 + (vol_sectors + CK_SLOTS - 1) / CK_SLOTS;
}

static void header(const struct fatfs *fs, uint32_t state, uint8_t *h)
{
	memset(h, 0, ED_SECTOR);
	memcpy(h, ck_magic, 8);
	put32(h + 8, CK_VERSION);
	put32(h + 12, state);
	put64(h + 16, fs->totsec);
	put64(h + 24, fs->ck_nsect);
	put32(h + 508, crc32c(0, h, 508));
}

/* The header, through the cache, in class cls. */
static int set_state(struct fatfs *fs, uint32_t state, int cls)
{
	uint8_t h[ED_SECTOR];
	header(fs, state, h);
	fs->ck_state = state;
	return vvol_write(&fs->vol, fs->ck_area, h, 1, cls);
}

/* Which sector, and what it is, in words (for messages). */
static void what_is(const struct fatfs *fs, uint64_t lba, char *buf, size_t size)
{
	if (lba == 0)
		snprintf(buf, size, "sector 0 (the boot sector)");
	else if (lba == fs->fsinfo)
		snprintf(buf, size, "sector %llu (FSInfo)", (unsigned long long)lba);
	else if (lba < fs->rsvd)
		snprintf(buf, size, "sector %llu (reserved)", (unsigned long long)lba);
	else if (lba < fs->rsvd + (uint64_t)fs->nfats * fs->fatsz)
		snprintf(buf, size, "sector %llu (FAT copy %llu, its sector %llu)", (unsigned long long)lba,
		         (unsigned long long)((lba - fs->rsvd) / fs->fatsz),
		         (unsigned long long)((lba - fs->rsvd) % fs->fatsz));
	else if (lba < fs->datasec)
		snprintf(buf, size, "sector %llu (the root directory)", (unsigned long long)lba);
	else if (lba < fs->totsec)
		snprintf(buf, size, "sector %llu (directory cluster %llu)", (unsigned long long)lba,
		         (unsigned long long)((lba - fs->datasec) / fs->spc + 2));
	else
		snprintf(buf, size, "sector %llu (checksum table)", (unsigned long long)lba);
}

static int damaged(struct fatfs *fs, uint64_t lba, const char *why)
{
	char w[96];
	what_is(fs, lba, w, sizeof w);
	fs->st.ck_bad++;
	if (!fs->broken)
		fat_say("fatfs: damaged volume: %s: %s; now read-only (run fsck -t fatfs)", w, why);
	if (fs->ck_area && fs->ck_state != CK_DAMAGED && !fs->ro)
		fat_ck_mark_damaged(fs);
	fs->broken = 1;                   /* said: fat_damaged only turns it read-only */
	return fat_damaged(fs, "", (uint32_t)lba);
}

/* Why the table sector t, which holds lba's slot, is damaged; NULL if it
 * is not (all zeros: never written, no slot set). */
static const char *table_bad(const uint8_t *t, uint64_t lba)
{
	if (all_zero(t))
		return NULL;
	if (le32(t + 508) != crc32c(0, t, 508))
		return "the checksum table sector does not match its own checksum";
	if (get64(t + 496) != lba / CK_SLOTS * CK_SLOTS)
		return "the checksum table sector belongs elsewhere";
	return NULL;
}

/* The table sector holding lba's slot, pinned and checked: NULL with *err
 * set on failure (a damaged table sector is damage too). */
static uint8_t *table(struct fatfs *fs, uint64_t lba, uint64_t *tl, int fix, int *err)
{
	*tl = fs->ck_area + 1 + lba / CK_SLOTS;
	uint8_t *t = vvol_sector(&fs->vol, *tl, 0, err);
	if (t == NULL)
		return NULL;
	if (vvol_unchecked(&fs->vol, *tl)) {
		const char *why = table_bad(t, lba);
		if (why != NULL && fix) {
			memset(t, 0, ED_SECTOR);  /* made again: every slot follows */
		} else if (why != NULL) {
			vvol_unpin(&fs->vol, *tl);
			*err = damaged(fs, *tl, why);
			return NULL;
		}
		vvol_checked(&fs->vol, *tl);
	}
	return t;
}

/* Set lba's slot to the CRC of p (NULL: clear it), the table sector dirty in cls. */
static int set_slot(struct fatfs *fs, uint64_t lba, const uint8_t *p, int cls, int fix)
{
	uint64_t tl;
	int e;
	uint8_t *t = table(fs, lba, &tl, fix, &e);
	if (t == NULL)
		return e;
	unsigned i = (unsigned)(lba % CK_SLOTS);
	put32(t + 8 * i, p ? crc32c(0, p, ED_SECTOR) : 0);
	put32(t + 8 * i + 4, p ? CK_SET : 0);
	put64(t + 496, lba / CK_SLOTS * CK_SLOTS);
	vvol_dirty(&fs->vol, tl, 1, cls);
	vvol_checked(&fs->vol, tl);
	vvol_unpin(&fs->vol, tl);
	/* Its own CRC once all its slots are set (seal). */
	uint32_t ti = (uint32_t)(lba / CK_SLOTS);
	if (fs->ck_unsealed.n == 0 || fs->ck_unsealed.v[fs->ck_unsealed.n - 1] != ti)
		return fset_add(&fs->ck_unsealed, ti);
	return 0;
}

/* The CRC of every table sector changed since the last seal: before any
 * of them can be written. */
static int seal(struct fatfs *fs)
{
	int e = 0;
	for (uint32_t i = 0; i < fs->ck_unsealed.n && e == 0; i++) {
		uint64_t tl = fs->ck_area + 1 + fs->ck_unsealed.v[i];
		uint8_t *t = vvol_sector(&fs->vol, tl, 0, &e);
		if (t == NULL)
			break;
		put32(t + 508, crc32c(0, t, 508));
		vvol_unpin(&fs->vol, tl);
	}
	fset_clear(&fs->ck_unsealed);
	return e;
}

int fat_ck_check(struct fatfs *fs, uint64_t lba, const uint8_t *p)
{
	if (!fs->ck_trust || !vvol_unchecked(&fs->vol, lba))
		return 0;
	uint64_t tl;
	int e;
	const uint8_t *t = table(fs, lba, &tl, 0, &e);
	if (t == NULL)
		return e;
	unsigned i = (unsigned)(lba % CK_SLOTS);
	uint32_t want = le32(t + 8 * i), set = le32(t + 8 * i + 4);
	vvol_unpin(&fs->vol, tl);
	fs->st.ck_checked++;
	if (set == CK_SET ? crc32c(0, p, ED_SECTOR) != want : !all_zero(p))
		return damaged(fs, lba, set == CK_SET ? "its contents do not match their checksum" :
		                        "it has contents but no checksum was ever written for it");
	vvol_checked(&fs->vol, lba);
	return 0;
}

/* ---- keeping the slots ----------------------------------------------------------------- */

static int in_newdir(const struct fatfs *fs, uint64_t lba)
{
	if (lba < fs->datasec)
		return 0;
	uint32_t c = (uint32_t)((lba - fs->datasec) / fs->spc + 2);
	return fset_has(&fs->newdir, c);
}

struct upd {
	struct fatfs *fs;
	int cls;                          /* the table sectors' class */
};

static int slot_of_dirty(void *arg, uint64_t lba, int cls)
{
	struct upd *u = arg;
	struct fatfs *fs = u->fs;
	if (lba >= fs->totsec || (cls == CL_DATA && lba >= fs->datasec && !in_newdir(fs, lba)))
		return 0;             /* file data, or the table itself */
	int e;
	const uint8_t *p = vvol_sector(&fs->vol, lba, 0, &e);
	if (p == NULL)
		return e;
	e = set_slot(fs, lba, p, u->cls, 0);
	vvol_unpin(&fs->vol, lba);
	return e;
}

int fat_ck_update(struct fatfs *fs, unsigned mask)
{
	if (!fs->ck_area || fs->ro)
		return 0;
	int e = 0;
	if (fs->ck_state != CK_OPEN && fs->ck_state != CK_DAMAGED) {
		/* (A mount sets it: this is for a volume made or rebuilt.) */
		e = set_state(fs, CK_OPEN, CL_DATA);
	}
	/* The table goes out with the first step that writes after this: a
	 * sync that stops on an error leaves no metadata written without its
	 * checksum (a crash is the open state's to cover). */
	struct upd u = { fs, mask & 1u << CL_DATA ? CL_DATA : CL_FREE };
	if (e == 0)
		e = vvol_each_dirty(&fs->vol, mask & ~(1u << CL_DATA), slot_of_dirty, &u);
	/* New directory clusters written out early (fat_relieve) are clean
	 * by now but still want their slots. */
	for (uint32_t i = 0; e == 0 && (mask & 1u << CL_DATA) && i < fs->newdir.n; i++) {
		uint64_t lba = fat_clus_lba(fs, fs->newdir.v[i]);
		for (uint32_t s = 0; e == 0 && s < fs->spc; s++)
			e = slot_of_dirty(&u, lba + s, CL_DIR);
	}
	int f = seal(fs);
	return e < 0 ? e : f;
}

/* ---- every metadata sector: making every slot again, or checking them all ---------------- */

typedef int (*meta_fn)(struct fatfs *fs, uint64_t lba, const uint8_t *p, void *arg);

/* fn on each sector of the directory whose chain starts at c (at most
 * FAT_ENT_MAX entries, as the directory code reads them); subdirectories
 * found go on the list to do. */
static int walk_dir(struct fatfs *fs, uint32_t c, struct fset *todo, struct fset *seen, meta_fn fn,
                    void *arg)
{
	uint32_t ents = 0;
	int e = 0;
	while (e == 0 && fat_valid_clus(fs, c) && ents < FAT_ENT_MAX) {
		if (fset_has(seen, c))
			return 0;                 /* a loop, or shared: fsck's to report */
		if ((e = fset_add(seen, c)) < 0)
			return e;
		uint64_t lba = fat_clus_lba(fs, c);
		for (uint32_t s = 0; e == 0 && s < fs->spc; s++) {
			const uint8_t *p = vvol_sector(&fs->vol, lba + s, VV_RA, &e);
			if (p == NULL)
				return e;
			e = fn(fs, lba + s, p, arg);
			for (unsigned o = 0; o < ED_SECTOR && e == 0; o += DIRENT, ents++) {
				const uint8_t *x = p + o;
				if (x[0] == 0 || x[0] == 0xE5 || x[DIR_ATTR] == ATTR_LFN ||
				    !(x[DIR_ATTR] & ATTR_DIR) || (x[DIR_ATTR] & ATTR_VOLID) || x[0] == '.')
					continue;
				uint32_t sub = le16(x + DIR_FSTCLUSLO) |
				               (fs->type == 32 ? (uint32_t)le16(x + DIR_FSTCLUSHI) << 16 : 0);
				if (fat_valid_clus(fs, sub))
					e = fset_add(todo, sub);
			}
			vvol_unpin(&fs->vol, lba + s);
		}
		uint32_t next;
		if (e == 0 && (e = fat_get(fs, c, &next)) == 0)
			c = next;
	}
	return e;
}

/* Sectors [lba, end) lie in chunks never written: they read as zeros, so
 * no slot of theirs may be set.  One may be all the same: a sync writes
 * the slots of everything it changes in its first step, and one cut short
 * after it (a crash, a process killed) leaves slots for sectors that never
 * went out - the first ever written in their chunk.  fn(p NULL) on each
 * sector whose slot is set (each of a table sector that is itself
 * damaged).  Table sectors never written cost a look at the map per
 * chunk of them. */
static int never_written(struct fatfs *fs, uint64_t lba, uint64_t end, meta_fn fn, void *arg)
{
	uint32_t ch = fs->vol.d.chunk;
	int e = 0;
	while (e == 0 && lba < end) {
		uint64_t tl = fs->ck_area + 1 + lba / CK_SLOTS, phys;
		uint64_t stop = (lba / CK_SLOTS + 1) * CK_SLOTS;
		int m = vvol_mapped(&fs->vol, tl, &phys);
		if (m < 0)
			return m;
		if (m == 0) {
			/* The rest of the table's chunk was never written either. */
			stop = ((tl / ch + 1) * ch - fs->ck_area - 1) * CK_SLOTS;
		} else {
			uint8_t t[ED_SECTOR];
			const uint8_t *tp = vvol_sector(&fs->vol, tl, 0, &e);
			if (tp == NULL)
				return e;
			memcpy(t, tp, ED_SECTOR);         /* (fn changes it) */
			vvol_unpin(&fs->vol, tl);
			int bad = table_bad(t, lba) != NULL;
			for (uint64_t l = lba; e == 0 && l < stop && l < end; l++)
				if (bad || le32(t + 8 * (l % CK_SLOTS) + 4) == CK_SET)
					e = fn(fs, l, NULL, arg);
		}
		lba = stop;
	}
	return e;
}

/* fn on every metadata sector: those before the first cluster (those in
 * chunks never written only if their slot is set: p NULL), then the
 * directory tree. */
static int walk_meta(struct fatfs *fs, meta_fn fn, void *arg)
{
	int trust = fs->ck_trust;
	fs->ck_trust = 0;                 /* fat_get must not check as it goes */
	int e = 0;
	for (uint64_t lba = 0; e == 0 && lba < fs->datasec; lba++) {
		uint64_t phys;
		int m = fs->vol.k ? vvol_mapped(&fs->vol, lba, &phys) : 1;
		if (m < 0) {
			e = m;
		} else if (m == 0) {
			uint64_t next = (lba / fs->vol.d.chunk + 1) * fs->vol.d.chunk;
			e = never_written(fs, lba, next < fs->datasec ? next : fs->datasec, fn, arg);
			lba = next - 1;
		} else {
			const uint8_t *p = vvol_sector(&fs->vol, lba, VV_RA, &e);
			if (p != NULL) {
				e = fn(fs, lba, p, arg);
				vvol_unpin(&fs->vol, lba);
			}
		}
		if (e == 0 && vvol_pressed(&fs->vol, 50) && (e = seal(fs)) == 0)
			e = vvol_sync(&fs->vol, 1u << CL_FREE);
	}
	struct fset todo = { 0 }, seen = { 0 };
	if (e == 0 && fs->type == 32)
		e = fset_add(&todo, fs->rootclus);
	for (uint64_t lba = fs->rootsec; e == 0 && fs->type != 32 && lba < fs->rootsec + fs->rootnsec; lba++) {
		/* The FAT12/16 root's subdirectories. */
		const uint8_t *p = vvol_sector(&fs->vol, lba, VV_RA, &e);
		if (p == NULL)
			break;
		for (unsigned o = 0; o < ED_SECTOR && e == 0; o += DIRENT) {
			const uint8_t *x = p + o;
			if (x[0] != 0 && x[0] != 0xE5 && x[DIR_ATTR] != ATTR_LFN && (x[DIR_ATTR] & ATTR_DIR) &&
			    !(x[DIR_ATTR] & ATTR_VOLID) && x[0] != '.' && fat_valid_clus(fs, le16(x + DIR_FSTCLUSLO)))
				e = fset_add(&todo, le16(x + DIR_FSTCLUSLO));
		}
		vvol_unpin(&fs->vol, lba);
	}
	for (uint32_t i = 0; e == 0 && i < todo.n; i++) {
		e = walk_dir(fs, todo.v[i], &todo, &seen, fn, arg);
		if (e == 0 && vvol_pressed(&fs->vol, 50) && (e = seal(fs)) == 0)
			e = vvol_sync(&fs->vol, 1u << CL_FREE);
	}
	free(todo.v);
	free(seen.v);
	fs->ck_trust = trust;
	int f = seal(fs);
	return e < 0 ? e : f;
}

static int remake(struct fatfs *fs, uint64_t lba, const uint8_t *p, void *arg)
{
	(void)arg;
	int e = set_slot(fs, lba, p == NULL || all_zero(p) ? NULL : p, CL_FREE, 1);
	if (p != NULL)
		vvol_checked(&fs->vol, lba);
	return e;
}

int fat_ck_rebuild(struct fatfs *fs)
{
	if (!fs->ck_area || fs->ro)
		return 0;
	int e = walk_meta(fs, remake, NULL);
	if (e == 0) {
		fs->ck_trust = 1;
		fs->st.ck_rebuilds++;
	}
	return e;
}

struct verify {
	void (*report)(void *arg, const char *line);
	void *arg;
	uint64_t bad;
	uint64_t bad_table;               /* the last table sector said damaged */
};

static int verify(struct fatfs *fs, uint64_t lba, const uint8_t *p, void *arg)
{
	struct verify *vf = arg;
	uint64_t tl = fs->ck_area + 1 + lba / CK_SLOTS;
	int e;
	const uint8_t *t = vvol_sector(&fs->vol, tl, 0, &e);
	if (t == NULL)
		return e;
	const char *why = NULL;
	if (table_bad(t, lba) != NULL) {
		vvol_unpin(&fs->vol, tl);
		if (vf->bad_table != tl) {
			char line[160];
			snprintf(line, sizeof line, "metadata checksum: sector %llu (checksum table, for "
			         "sectors %llu..%llu): damaged", (unsigned long long)tl,
			         (unsigned long long)(lba / CK_SLOTS * CK_SLOTS),
			         (unsigned long long)(lba / CK_SLOTS * CK_SLOTS + CK_SLOTS - 1));
			vf->report(vf->arg, line);
			vf->bad++;
			vf->bad_table = tl;
		}
		return 0;
	}
	unsigned i = (unsigned)(lba % CK_SLOTS);
	int set = le32(t + 8 * i + 4) == CK_SET;     /* (never in a sector of zeros) */
	if (p == NULL)
		why = set ? "it was never written but has a checksum" : NULL;
	else if (set && crc32c(0, p, ED_SECTOR) != le32(t + 8 * i))
		why = "its contents do not match their checksum";
	else if (!set && !all_zero(p))
		why = "it has contents but no checksum";
	vvol_unpin(&fs->vol, tl);
	if (why != NULL) {
		char w[96], line[200];
		what_is(fs, lba, w, sizeof w);
		snprintf(line, sizeof line, "metadata checksum: %s: %s", w, why);
		vf->report(vf->arg, line);
		vf->bad++;
	}
	return 0;
}

int fat_ck_verify(struct fatfs *fs, void (*report)(void *arg, const char *line), void *arg)
{
	if (!fs->ck_area || fs->ck_state == CK_OPEN)
		return 0;                 /* none, or being made again at the next mount */
	struct verify vf = { report, arg, 0, 0 };
	int e = walk_meta(fs, verify, &vf);
	return e < 0 ? e : (int)(vf.bad > 0x7fffffff ? 0x7fffffff : vf.bad);
}

/* ---- mounting and unmounting ---------------------------------------------------------------- */

int fat_ck_open(struct fatfs *fs, int fsck)
{
	fs->ck_area = 0;
	fs->ck_trust = 0;
	if (fs->vol.k == NULL || fs->vol.d.nsectors < fs->totsec + 2)
		return 0;
	uint8_t h[ED_SECTOR];
	int e = vvol_read(&fs->vol, fs->totsec, h, 1, 0);
	if (e < 0)
		return e;
	if (all_zero(h))
		return 0;                         /* made before checksums: none */
	uint32_t state = le32(h + 12);
	if (memcmp(h, ck_magic, 8) != 0 || le32(h + 508) != crc32c(0, h, 508) ||
	    le32(h + 8) != CK_VERSION || get64(h + 16) != fs->totsec ||
	    get64(h + 24) != fs->vol.d.nsectors - fs->totsec || state < CK_CLEAN || state > CK_DAMAGED) {
		fat_say("fatfs: the metadata checksums' header (sector %llu) is damaged: checksums not "
		        "checked (fsck -t fatfs -r makes them again)", (unsigned long long)fs->totsec);
		return 0;
	}
	fs->ck_area = fs->totsec;
	fs->ck_nsect = fs->vol.d.nsectors - fs->totsec;
	fs->ck_state = state;
	if (fsck) {
		/* The checker compares every sector itself (fat_ck_verify), and
		 * makes the checksums again after repairing. */
		return 0;
	}
	if (state == CK_OPEN && fs->sh_joined) {
		/* Open because others have it mounted (share.c), each keeping
		 * the checksums of what it publishes. */
		fs->ck_trust = 1;
		return 0;
	}
	if (state == CK_DAMAGED && !fs->ro) {
		fat_say("fatfs: damage was found on this volume before: mounted read-only (run fsck -t "
		        "fatfs -r)");
		fs->ro = 1;
		fs->vol.readonly = 1;
	}
	if (state == CK_OPEN && fs->ro) {
		fat_say("fatfs: the volume was not closed cleanly: metadata checksums not checked in a "
		        "read-only mount");
		return 0;
	}
	if (state == CK_OPEN) {
		fat_say("fatfs: the volume was not closed cleanly: making its metadata checksums again");
		if ((e = fat_ck_rebuild(fs)) < 0)
			return e;
	}
	fs->ck_trust = 1;
	if (fs->ro)
		return 0;
	/* Open from now on, durably, before anything this mount writes. */
	if ((e = set_state(fs, state == CK_DAMAGED ? CK_DAMAGED : CK_OPEN, CL_DATA)) == 0)
		e = vvol_sync(&fs->vol, VV_ALL);
	return e;
}

int fat_ck_close(struct fatfs *fs)
{
	if (!fs->ck_area || fs->ro || fs->ck_state != CK_OPEN)
		return 0;
	int e = set_state(fs, CK_CLEAN, CL_FREE);
	return e < 0 ? e : vvol_sync(&fs->vol, VV_ALL);
}

int fat_ck_make(struct fatfs *fs)
{
	/* A volume just made or imported, or repaired by fsck: every slot
	 * from what is there, then clean. */
	if (fs->vol.k == NULL || fs->vol.d.nsectors < fs->totsec + 2 || fs->ro)
		return 0;
	fs->ck_area = fs->totsec;
	fs->ck_nsect = fs->vol.d.nsectors - fs->totsec;
	int e = fat_ck_rebuild(fs);
	if (e == 0)
		e = set_state(fs, CK_CLEAN, CL_FREE);
	return e < 0 ? e : vvol_sync(&fs->vol, VV_ALL);
}

void fat_ck_mark_damaged(struct fatfs *fs)
{
	/* Straight to the disk, past the cache: whatever else is dirty must
	 * not go out with it.  Best effort: the damage is reported anyway. */
	uint8_t h[ED_SECTOR];
	header(fs, CK_DAMAGED, h);
	fs->ck_state = CK_DAMAGED;
	struct vvol_place pl;
	uint64_t c = fs->ck_area / fs->vol.d.chunk;
	if (fs->vol.k == NULL || vvol_chunk(&fs->vol, c, 0, &pl) != 1)
		return;
	uint64_t at = pl.phys + (fs->ck_area - c * fs->vol.d.chunk);
	if (kit_io(&fs->kit, pl.leaf, pl.slot, 1, at, h, ED_SECTOR) >= 0)
		(void)kit_barrier(&fs->kit);
}

uint8_t *fat_meta_sector(struct fatfs *fs, uint64_t lba, int flags, int *err)
{
	uint8_t *p = vvol_sector(&fs->vol, lba, flags, err);
	if (p != NULL && (*err = fat_ck_check(fs, lba, p)) < 0) {
		vvol_unpin(&fs->vol, lba);
		return NULL;
	}
	return p;
}
