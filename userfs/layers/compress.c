/*
 * compress.c - the compression layer: each 4 KiB block of a file is
 * compressed on its own (libos/stack/lz.h), so reads and writes anywhere in
 * a file touch only the blocks they cover (docs/stacking.md has the format).
 *
 *   mount /z compress over=/data
 *
 * A file below is a 4 KiB header (magic, logical size, bytes lost to
 * rewrites, and the places of up to 504 index pages), index pages of 256
 * block entries, and the blocks' bytes.  A block's entry has two slots;
 * each names a version of the block (where its bytes are, how many, how
 * much room they have, whether they are stored as they are), its
 * generation and a CRC-32C of the slot and the bytes.  A read takes the
 * newest slot whose bytes check.  A write puts the new version in the slot
 * that does not hold the block's last acknowledged version, so a power cut
 * in the middle of it leaves that version whole (docs/stacking.md, "Power
 * cuts").  A block of zeros is a hole: no bytes at all.  Names are not
 * touched.
 *
 * Like every layer here it keeps nothing between calls that the layer
 * below can change: each call reads what it needs of the header and index
 * from the layer below (whose cache holds them), so the file read through
 * this layer and directly below are always the same bytes, whichever side
 * changed them last.  What it keeps is its own knowledge of which blocks
 * it rewrote since they were last made durable (struct ztable: one per
 * file system below, shared by this program's compress mounts over it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/crc32c.h"
#include "libos/stack/lz.h"
#include "libos/stack/stack.h"

#define ZB       4096                    /* logical block                       */
#define ZHDR     4096                    /* header                              */
#define ZPAGES   504                     /* index pages the header can name     */
#define ZPER     256                     /* block entries per index page        */
#define ZSLOT    16                      /* bytes per slot, two per entry       */
#define ZENT     (2 * ZSLOT)
#define ZPAGE    (ZPER * ZENT)           /* an index page: 8 KiB                */
#define ZBATCH   16                      /* blocks per step                     */
#define ZRAW     1                       /* slot flag: stored as it is          */
#define ZROOM    512                     /* room is given in multiples of this  */
#define ZMAXBLK  ((uint64_t)ZPAGES * ZPER)
#define ZTRACK   512                     /* the table of rewritten blocks       */
#define ZTRACKED (ZTRACK * 3 / 4)        /* full: a sync empties it             */

static const char magic[8] = "EXCOMP2";
static const char magic1[8] = "EXCOMP1";  /* one slot per block: refused        */


/* One version of a block.  gen 0: the slot was never written (all zero). */
struct zslot {
	uint32_t off;                        /* where its bytes are, in ZROOM units */
	uint16_t len;                        /* stored bytes; 0: a hole             */
	uint8_t flags;                       /* ZRAW                                */
	uint8_t room;                        /* its room, in ZROOM units            */
	uint32_t gen, sum;
};

/* A block this mount rewrote (put a version in a slot whose other slot
 * held a durable one) since its file was last made durable: ino + 1 (0: a
 * free place) and the block. */
struct ztrack {
	uint64_t ino, blk;
};

/* The table of rewritten blocks of one file system below, shared by every
 * compress mount over it in this program: two mounts of one directory (or
 * of two) writing the same file must each know what the other rewrote,
 * or one would take the other's newest version for durable and write
 * over the durable one.  A sync below empties it for all of them. */
struct ztable {
	void *below;                         /* the libFS state it is for           */
	int refs;                            /* compress mounts over it             */
	int nt;
	int settled;                         /* made all below durable: see settle  */
	struct ztable *next;
	struct ztrack t[ZTRACK];             /* open addressing                     */
};
static struct ztable *tables;

struct zmount {
	struct stack_mount s;
	uint8_t *io;                         /* ZBATCH * ZB of stored bytes         */
	uint8_t *pt;                         /* ZBATCH * ZB of plaintext            */
	uint8_t *one;                        /* ZB: one slot's bytes                */
	int atomic;                          /* below: files change all at once     */
	struct ztable *tab;                  /* shared with the other mounts over it */
};

struct zfile {
	struct stack_file sf;
	int isdir;
	int osync;                           /* opened LIBFS_O_SYNC                 */
	uint64_t ino;                        /* its number below at the last call   */
};

/* What one call knows of its file. */
struct zcall {
	struct zmount *z;
	struct zfile *f;
	uint64_t lsize;                      /* the file below: its size            */
	uint64_t end;                        /* where new bytes go (ZROOM-aligned)  */
	uint64_t size;                       /* the logical size                    */
	uint64_t ino;
	int wt;                              /* writes are durable when they return */
	uint64_t lost;                       /* room given up by this call          */
	int watch;                           /* the call makes the file longer:     */
	int stale;                           /* it met bytes past the size (a cut   *
	                                      * truncation's): see grow_durable     */
};

/* ---- the layer below ------------------------------------------------------------ */

static int lread(struct zcall *c, void *buf, size_t n, uint64_t off)
{
	long r = c->z->s.below.ops->read(c->z->s.below.fs, c->f->sf.lower, buf, n, off);
	return r < 0 ? (int)r : (size_t)r == n ? 0 : -EIO;
}

static int lwrite(struct zcall *c, const void *buf, size_t n, uint64_t off)
{
	long r = c->z->s.below.ops->write(c->z->s.below.fs, c->f->sf.lower, buf, n, off);
	if (r >= 0 && off + (uint64_t)r > c->lsize)
		c->lsize = off + (uint64_t)r;
	return r < 0 ? (int)r : (size_t)r == n ? 0 : -EIO;
}

static int get_u64(struct zcall *c, uint64_t at, uint64_t *v)
{
	uint8_t b[8];
	int r = lread(c, b, 8, at);
	*v = stack_get_le64(b);
	return r;
}

static int set_u64(struct zcall *c, uint64_t at, uint64_t v)
{
	uint8_t b[8];
	stack_put_le64(b, v);
	return lwrite(c, b, 8, at);
}

static void rekey(struct zmount *z, uint64_t from, uint64_t to);

/* Start a call on file f: the sizes (logical 0 for a file without a
 * header yet), the file's number below, whether it is written through. */
static int zbegin(struct zmount *z, struct zfile *f, struct zcall *c)
{
	struct libfs_stat st;
	*c = (struct zcall){ .z = z, .f = f };
	int r = z->s.below.ops->fstat(z->s.below.fs, f->sf.lower, &st);
	if (r < 0)
		return r;
	c->lsize = st.size;
	c->end = (st.size + ZROOM - 1) / ZROOM * ZROOM;
	c->ino = st.ino;
	if (st.ino != f->ino)
		rekey(z, f->ino, st.ino);      /* renamed directly below (fatfs)     */
	f->ino = st.ino;
	c->wt = f->osync || st.persist == LIBFS_P_WRITETHROUGH;
	if (st.size == 0)
		return 0;
	if (st.size < ZHDR)
		return -EBADMSG;
	return get_u64(c, 8, &c->size);
}

static int new_header(struct zcall *c)
{
	uint8_t *h = calloc(1, ZHDR);
	if (h == NULL)
		return -ENOMEM;
	memcpy(h, magic, 8);
	int r = lwrite(c, h, ZHDR, 0);
	free(h);
	if (c->end < ZHDR)
		c->end = ZHDR;
	return r;
}

/* ---- what is durable ---------------------------------------------------------------- */

/* The table of blocks rewritten since they were durable.  A block not in
 * it has its newest version durable: written before its file's last fsync
 * or the mount's last sync, by another mount (which synced before it let
 * go), or before a power cut.  That must be exact: see put_blocks. */
static uint64_t track_hash(uint64_t ino, uint64_t blk)
{
	return ((ino * 0x9e3779b97f4a7c15ull) ^ (blk * 0xff51afd7ed558ccdull)) >> 40;
}

static int tracked(struct zmount *z, uint64_t ino, uint64_t blk)
{
	if (z->tab->nt == 0)
		return 0;
	for (uint64_t h = track_hash(ino, blk) % ZTRACK; z->tab->t[h].ino != 0; h = (h + 1) % ZTRACK)
		if (z->tab->t[h].ino == ino + 1 && z->tab->t[h].blk == blk)
			return 1;
	return 0;
}

static int sync_below(struct zmount *z)
{
	int r = z->s.below.ops->sync ? z->s.below.ops->sync(z->s.below.fs) : stack_sync_files(&z->s);
	if (r == 0) {
		memset(z->tab->t, 0, sizeof z->tab->t);
		z->tab->nt = 0;
	}
	return r;
}

/* Block blk of file ino goes into the table, before its new version is
 * written.  The table never fills here: put_blocks makes room for its
 * whole batch first (a sync in the middle of a batch would let the batch's
 * earlier blocks leave the table while their new versions are not yet
 * written, and their next rewrite would go over the durable version). */
static void track(struct zmount *z, uint64_t ino, uint64_t blk)
{
	uint64_t h = track_hash(ino, blk) % ZTRACK;
	while (z->tab->t[h].ino != 0)
		h = (h + 1) % ZTRACK;
	z->tab->t[h] = (struct ztrack){ ino + 1, blk };
	z->tab->nt++;
}

/* Keep only the entries `keep` says to (the table probes linearly, so it
 * is rebuilt rather than holed). */
static void retrack(struct zmount *z, int (*keep)(const struct ztrack *, uint64_t, uint64_t, uint64_t),
                    uint64_t ino, uint64_t b, uint64_t n)
{
	if (z->tab->nt == 0)
		return;
	struct ztrack kept[ZTRACKED];
	int k = 0;
	for (int i = 0; i < ZTRACK; i++)
		if (z->tab->t[i].ino != 0 && keep(&z->tab->t[i], ino, b, n))
			kept[k++] = z->tab->t[i];
	memset(z->tab->t, 0, sizeof z->tab->t);
	z->tab->nt = 0;
	for (int i = 0; i < k; i++)
		track(z, kept[i].ino - 1, kept[i].blk);
}

static int other_file(const struct ztrack *t, uint64_t ino, uint64_t b, uint64_t n)
{
	(void)b, (void)n;
	return t->ino != ino + 1;
}

static int outside(const struct ztrack *t, uint64_t ino, uint64_t b, uint64_t n)
{
	return t->ino != ino + 1 || t->blk < b || t->blk >= b + n;
}

/* A file system below may number a file by where its name is (fatfs), so
 * a rename directly below it - not through this layer, which syncs first -
 * changes the number of a file this mount has open: its blocks in the
 * table go with it, or a rewrite would take their newest versions for
 * durable.  (A closed file has none there: see z_close.) */
static void rekey(struct zmount *z, uint64_t from, uint64_t to)
{
	if (z->tab->nt == 0)
		return;
	struct ztrack kept[ZTRACKED];
	int k = 0;
	for (int i = 0; i < ZTRACK; i++)
		if (z->tab->t[i].ino != 0)
			kept[k++] = z->tab->t[i];
	memset(z->tab->t, 0, sizeof z->tab->t);
	z->tab->nt = 0;
	for (int i = 0; i < k; i++)
		track(z, kept[i].ino == from + 1 ? to : kept[i].ino - 1, kept[i].blk);
}

/* File ino was made durable: forget its blocks. */
static void forget(struct zmount *z, uint64_t ino)
{
	retrack(z, other_file, ino, 0, 0);
}

/* ---- the index ------------------------------------------------------------------------ */

/* Where index page p is, allocating it (zeroed, at the end) if `make`;
 * 0 when it does not exist.  A page that would reach past the end of the
 * file below was named by a write a power cut left half done (the name
 * made durable, the page not): nothing durable is in it, so it does not
 * exist (and a new one is made in its place). */
static int page_at(struct zcall *c, uint64_t p, int make, uint64_t *off)
{
	int r = get_u64(c, 64 + 8 * p, off);
	if (r == 0 && *off != 0 && (*off < ZHDR || *off + ZPAGE > c->lsize))
		*off = 0;
	if (r < 0 || *off != 0 || !make)
		return r;
	uint8_t *zero = calloc(1, ZPAGE);
	if (zero == NULL)
		return -ENOMEM;
	*off = c->end;
	r = lwrite(c, zero, ZPAGE, *off);
	free(zero);
	if (r == 0)
		r = set_u64(c, 64 + 8 * p, *off);
	c->end += ZPAGE;
	return r;
}

static void slot_put(uint8_t *b, const struct zslot *s)
{
	b[0] = (uint8_t)s->off; b[1] = (uint8_t)(s->off >> 8);
	b[2] = (uint8_t)(s->off >> 16); b[3] = (uint8_t)(s->off >> 24);
	b[4] = (uint8_t)s->len; b[5] = (uint8_t)(s->len >> 8);
	b[6] = s->flags;
	b[7] = s->room;
	for (int i = 0; i < 4; i++) {
		b[8 + i] = (uint8_t)(s->gen >> 8 * i);
		b[12 + i] = (uint8_t)(s->sum >> 8 * i);
	}
}

static uint32_t get32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Entries of blocks [b, b + n), all in one page; damaged ones (fields
 * that cannot be) are refused before anything trusts them. */
static int get_ents(struct zcall *c, uint64_t b, uint64_t n, struct zslot (*e)[2])
{
	uint64_t pg;
	int r = page_at(c, b / ZPER, 0, &pg);
	if (r < 0)
		return r;
	if (pg == 0) {
		memset(e, 0, n * sizeof *e);
		return 0;
	}
	uint8_t raw[ZBATCH * ZENT];
	r = lread(c, raw, n * ZENT, pg + b % ZPER * ZENT);
	for (uint64_t i = 0; r == 0 && i < n; i++)
		for (int k = 0; k < 2; k++) {
			const uint8_t *q = raw + i * ZENT + k * ZSLOT;
			struct zslot *s = &e[i][k];
			s->off = get32(q);
			s->len = (uint16_t)(q[4] | q[5] << 8);
			s->flags = q[6];
			s->room = q[7];
			s->gen = get32(q + 8);
			s->sum = get32(q + 12);
			if ((s->gen == 0 && (s->off | s->len | s->flags | s->room | s->sum) != 0) ||
			    s->len > (uint32_t)s->room * ZROOM || s->room > ZB / ZROOM || (s->flags & ~ZRAW) ||
			    ((s->flags & ZRAW) && s->len != ZB) ||
			    (s->room != 0 && (uint64_t)s->off * ZROOM < ZHDR))
				r = -EBADMSG;
		}
	return r;
}

static int put_ents(struct zcall *c, uint64_t b, uint64_t n, struct zslot (*e)[2])
{
	uint64_t pg;
	int r = page_at(c, b / ZPER, 1, &pg);
	if (r < 0)
		return r;
	uint8_t raw[ZBATCH * ZENT];
	for (uint64_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++)
			slot_put(raw + i * ZENT + k * ZSLOT, &e[i][k]);
	return lwrite(c, raw, n * ZENT, pg + b % ZPER * ZENT);
}

/* ---- blocks ------------------------------------------------------------------- */

/* The check value of a version of block b: its slot (but the value) and
 * its stored bytes, so a slot naming other bytes, another block's or
 * another generation's, does not check. */
static uint32_t slot_sum(uint64_t b, const struct zslot *s, const uint8_t *bytes)
{
	uint8_t h[8 + ZSLOT];
	stack_put_le64(h, b);
	slot_put(h + 8, s);
	uint32_t c = crc32c(0, h, 8 + 12);
	return crc32c(c, bytes, s->len);
}

static int newer(const struct zslot *e)          /* the slot with the larger generation */
{
	return e[1].gen > e[0].gen;
}

/* Is slot s of block b a whole version, its stored bytes at `bytes`
 * (NULL: read them here)?  ZS_OK; ZS_NONE: never written, or its bytes
 * reach past the end of the file below (a write a cut stopped before the
 * file grew: it never was durable); ZS_TORN: its bytes do not check. */
enum { ZS_OK, ZS_NONE, ZS_TORN };
static int slot_state(struct zcall *c, uint64_t b, const struct zslot *s, const uint8_t *bytes)
{
	if (s->gen == 0)
		return ZS_NONE;
	if (s->len != 0 && (uint64_t)s->off * ZROOM + s->len > c->lsize)
		return ZS_NONE;
	if (s->len != 0 && bytes == NULL) {
		int r = lread(c, c->z->one, s->len, (uint64_t)s->off * ZROOM);
		if (r < 0)
			return r;
		bytes = c->z->one;
	}
	return slot_sum(b, s, bytes) == s->sum ? ZS_OK : ZS_TORN;
}

/* Plaintext of a whole version into pt. */
static int unpack(const struct zslot *s, const uint8_t *bytes, uint8_t *pt)
{
	if (s->len == 0)
		memset(pt, 0, ZB);
	else if (s->flags & ZRAW)
		memcpy(pt, bytes, ZB);
	else if (lz_decompress(bytes, s->len, pt, ZB) != 0)
		return -EBADMSG;         /* it checked: written so by a broken writer */
	return 0;
}

/* Block b from the older slot, when the newer one (state st) failed:
 * the older if whole; zeros if neither was ever durable; else EBADMSG. */
static int older(struct zcall *c, uint64_t b, const struct zslot *e, int st, uint8_t *pt)
{
	const struct zslot *o = &e[!newer(e)];
	int so = slot_state(c, b, o, NULL);
	if (so < 0)
		return so;
	if (so == ZS_OK)
		return unpack(o, c->z->one, pt);
	if (so == ZS_NONE && st == ZS_NONE) {
		memset(pt, 0, ZB);
		return 0;
	}
	return -EBADMSG;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (; n > 0 && ((uintptr_t)p & 7) != 0; p++, n--)
		if (*p != 0)
			return 0;
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, __builtin_assume_aligned(p, 8), 8);
		if (w != 0)
			return 0;
	}
	for (; n > 0; p++, n--)
		if (*p != 0)
			return 0;
	return 1;
}

/* Plaintext of blocks [b, b + n) (one page's worth at most) into pt; the
 * bytes at and past the logical size read as zeros (a truncation cut
 * short may have left the blocks there as they were). */
static int get_blocks(struct zcall *c, uint64_t b, uint64_t n, uint8_t *pt)
{
	struct zslot e[ZBATCH][2];
	int r = get_ents(c, b, n, e);
	for (uint64_t i = 0; r == 0 && i < n; ) {
		const struct zslot *s = &e[i][newer(e[i])];
		if (s->len == 0 || (uint64_t)s->off * ZROOM + s->len > c->lsize) {
			int st = slot_state(c, b + i, s, NULL);
			if (st == ZS_OK)
				r = unpack(s, NULL, pt + i * ZB);
			else if (st >= 0)
				r = older(c, b + i, e[i], st, pt + i * ZB);
			else
				r = st;
			i++;
			continue;
		}
		/* Neighbours stored one after the other come in one read. */
		uint64_t j = i + 1;
		while (j < n) {
			const struct zslot *t = &e[j][newer(e[j])], *p = &e[j - 1][newer(e[j - 1])];
			if (t->len == 0 || t->off != p->off + p->room ||
			    (uint64_t)t->off * ZROOM + t->len > c->lsize)
				break;
			j++;
		}
		const struct zslot *l = &e[j - 1][newer(e[j - 1])];
		uint64_t span = ((uint64_t)l->off - s->off) * ZROOM + l->len;
		r = lread(c, c->z->io, span, (uint64_t)s->off * ZROOM);
		for (uint64_t k = i; r == 0 && k < j; k++) {
			const struct zslot *t = &e[k][newer(e[k])];
			const uint8_t *src = c->z->io + ((uint64_t)t->off - s->off) * ZROOM;
			if (slot_state(c, b + k, t, src) == ZS_OK)
				r = unpack(t, src, pt + k * ZB);
			else
				r = older(c, b + k, e[k], ZS_TORN, pt + k * ZB);
		}
		i = j;
	}
	for (uint64_t i = 0; r == 0 && i < n; i++) {
		uint64_t at = (b + i) * ZB;
		if (at + ZB > c->size) {
			uint8_t *p = pt + i * ZB + (at >= c->size ? 0 : c->size - at);
			size_t k = at >= c->size ? ZB : (size_t)(at + ZB - c->size);
			if (c->watch && (e[i][0].len | e[i][1].len) != 0 && !all_zero(p, k))
				c->stale = 1;
			memset(p, 0, k);
		}
	}
	return r;
}

static int zero_block(const uint8_t *p)
{
	for (size_t i = 0; i < ZB; i++)
		if (p[i])
			return 0;
	return 1;
}

/* A block not in the table has its newest version durable only if no
 * program that died (a fault: no sync, no unmount) left it in the disk's
 * volatile cache: the next program reads it from there and would take it
 * for durable, and write over the one version that is.  So the first time
 * this program is about to take a version it did not write for durable,
 * everything below is made durable first (once per file system below). */
static int settle(struct zcall *c, const struct zslot (*e)[2], uint64_t b, uint64_t n)
{
	struct zmount *z = c->z;
	if (z->tab->settled || z->atomic || c->wt)
		return 0;
	uint64_t i = 0;
	while (i < n && (e[i][newer(e[i])].gen == 0 || tracked(z, c->ino, b + i)))
		i++;
	if (i == n)
		return 0;
	int r = stack_settle(&z->s, c->f->sf.lower, magic, sizeof magic, 0);
	if (r == 0)
		z->tab->settled = 1;
	return r;
}

/* Store plaintext blocks [b, b + n) (one page's worth at most).  Each new
 * version goes to one slot and leaves the other as it is:
 *   - a block whose newest version is durable (not in the table): to the
 *     other slot; the block goes into the table;
 *   - a block in the table: over its newest version, which nothing
 *     acknowledged, while the other slot holds the durable one (it was put
 *     there that way) - unless the other slot is empty, when it goes there;
 *   - a block whose newest slot does not check (a write a cut stopped):
 *     over it.
 * A cut leaves the slot written torn or whole, the other whole.  A slot
 * keeps its room when the new bytes fit and the slot checked (so the room
 * is its own); else they go to new room at the end of the file below. */
static int put_blocks(struct zcall *c, uint64_t b, uint64_t n, const uint8_t *pt)
{
	struct zmount *z = c->z;
	struct zslot e[ZBATCH][2];
	uint64_t append_at = c->end, appended = 0;
	int r = get_ents(c, b, n, e);
	/* Room in the table for the whole batch, made before any block of it
	 * is decided (see track). */
	if (r == 0 && !z->atomic && !c->wt && z->tab->nt + n > ZTRACKED)
		r = sync_below(z);
	if (r == 0)
		r = settle(c, e, b, n);
	uint8_t *cz = malloc(ZB);
	if (cz == NULL)
		return -ENOMEM;
	for (uint64_t i = 0; r == 0 && i < n; i++) {
		uint64_t blk = b + i;
		const uint8_t *p = pt + i * ZB;
		int cur = newer(e[i]), t, own = 0, add = 0;
		if (blk * ZB >= c->size && e[i][cur].len != 0)
			c->stale = 1;                  /* bytes past the end: see grow_durable */
		if (e[i][cur].gen == 0) {
			t = 0;                          /* never written                */
		} else if (z->atomic || tracked(z, c->ino, blk)) {
			/* Nothing acknowledged the newest (or below, files change
			 * whole): over it, unless the other slot is free. */
			t = !z->atomic && e[i][!cur].gen == 0 ? !cur : cur;
			own = t == cur;
		} else {
			int st = slot_state(c, blk, &e[i][cur], NULL);
			if (st < 0) {
				r = st;
				break;
			}
			t = st == ZS_OK ? !cur : cur;
			add = st == ZS_OK && !c->wt;
		}
		if (add)
			track(z, c->ino, blk);
		struct zslot *s = &e[i][t];
		if (!own && s->gen != 0 && s->room != 0) {
			int st = slot_state(c, blk, s, NULL);
			if (st < 0) {
				r = st;
				break;
			}
			own = st == ZS_OK;
		}
		if (!own || s->gen == 0)
			s->room = 0;
		uint32_t gen = (e[i][0].gen > e[i][1].gen ? e[i][0].gen : e[i][1].gen) + 1;
		size_t len = 0;
		const uint8_t *src = NULL;
		uint8_t flags = 0;
		if (!zero_block(p)) {
			len = lz_compress(p, ZB, cz, ZB);
			src = len ? cz : p;
			if (len == 0) {
				len = ZB;
				flags = ZRAW;
			}
		}
		s->gen = gen;
		s->len = (uint16_t)len;
		s->flags = flags;
		if (len > (size_t)s->room * ZROOM) {
			c->lost += (uint64_t)s->room * ZROOM;
			s->off = (uint32_t)((append_at + appended) / ZROOM);
			s->room = (uint8_t)((len + ZROOM - 1) / ZROOM);
			memcpy(z->io + appended, src, len);
			appended += (uint64_t)s->room * ZROOM;
		} else if (len > 0) {
			r = lwrite(c, src, len, (uint64_t)s->off * ZROOM);
		}
		if (s->room == 0)
			s->off = 0;
		s->sum = 0;
		s->sum = slot_sum(blk, s, src);
	}
	free(cz);
	/* The bytes before the entries that name them (not ordered below:
	 * the check values find what a cut left out). */
	if (r == 0 && appended > 0)
		r = lwrite(c, z->io, appended, append_at);
	c->end += appended;
	if (r == 0)
		r = put_ents(c, b, n, e);
	/* Written through: these versions are durable now, so a block the
	 * table held must leave it, or its next rewrite would go over them. */
	if (r == 0 && c->wt)
		retrack(z, outside, c->ino, b, n);
	return r;
}

/* How many blocks from b one step may take: up to ZBATCH, within a page. */
static uint64_t step(uint64_t b, uint64_t want)
{
	uint64_t n = want < ZBATCH ? want : ZBATCH;
	if (n > ZPER - b % ZPER)
		n = ZPER - b % ZPER;
	return n;
}

/* Does block b (its entry e) read as zeros, whatever a cut leaves of what
 * is not durable: never written, or its newest version is a hole that
 * checks (a hole not yet durable is as good as the one a rewrite would
 * write: that one would go over it, in the same slot). */
static int is_hole(struct zcall *c, uint64_t b, const struct zslot *e)
{
	const struct zslot *s = &e[newer(e)];
	return s->gen == 0 || (s->len == 0 && slot_state(c, b, s, NULL) == ZS_OK);
}

/* Blocks [from, to) read as zeros from now on: each that is not a hole
 * gets a hole version.  The blocks of an index page that does not exist
 * were never written and cost nothing, so cutting a large sparse file
 * short writes only where it had bytes. */
static int make_holes(struct zcall *c, uint64_t from, uint64_t to)
{
	int r = 0;
	for (uint64_t b = from; r == 0 && b < to; ) {
		uint64_t pg;
		r = page_at(c, b / ZPER, 0, &pg);
		if (r == 0 && pg == 0) {
			b = (b / ZPER + 1) * ZPER;
			continue;
		}
		uint64_t nb = step(b, to - b);
		struct zslot e[ZBATCH][2];
		if (r == 0)
			r = get_ents(c, b, nb, e);
		for (uint64_t i = 0; r == 0 && i < nb; ) {
			if (is_hole(c, b + i, e[i])) {
				i++;
				continue;
			}
			uint64_t j = i + 1;
			while (j < nb && !is_hole(c, b + j, e[j]))
				j++;
			memset(c->z->pt, 0, (j - i) * ZB);
			r = put_blocks(c, b + i, j - i, c->z->pt);
			i = j;
		}
		b += nb;
	}
	return r;
}

/* The file grows from c->size to `to`: the blocks wholly between read as
 * zeros, which they may not below when a truncation was cut short; make
 * holes of those that are not, and store the block holding the old end
 * again with zeros past it if it has other bytes there. */
static int clear_gap(struct zcall *c, uint64_t to)
{
	int r = 0;
	uint64_t bp = c->size / ZB;
	if (c->size % ZB != 0 && bp < to / ZB) {
		int was = c->stale;
		c->watch = 1;
		c->stale = 0;
		r = get_blocks(c, bp, 1, c->z->pt);
		if (r == 0 && c->stale)
			r = put_blocks(c, bp, 1, c->z->pt);
		c->stale |= was;
	}
	return r < 0 ? r : make_holes(c, (c->size + ZB - 1) / ZB, to / ZB);
}

/* Before a call makes the file longer: if it met bytes past the old size
 * (c->stale), they are there because a truncation a cut stopped made its
 * size durable and not all of its holes (or zeros past its last byte), or
 * a write failed before its size; this call has overwritten them, but a
 * second cut could make the larger size durable and not what overwrote
 * them, and show the bytes cut off.  So what the call wrote is made
 * durable first (the file's fsync below; its blocks leave the table, as
 * at z_fsync).  A file no cut or failure touched has only holes and zeros
 * past its size, and never pays for this. */
static int grow_durable(struct zcall *c)
{
	struct zmount *z = c->z;
	if (!c->stale)
		return 0;
	if (z->s.below.ops->fsync == NULL)
		return sync_below(z);
	int r = z->s.below.ops->fsync(z->s.below.fs, c->f->sf.lower);
	if (r == 0)
		forget(z, c->ino);
	return r;
}

static int end_call(struct zcall *c, int r)
{
	if (r == 0 && c->lost > 0) {
		uint64_t g;
		r = get_u64(c, 16, &g);
		if (r == 0)
			r = set_u64(c, 16, g + c->lost);
	}
	return r;
}

/* ---- operations ------------------------------------------------------------------ */

static long z_read(void *fs, void *file, void *buf, size_t n, uint64_t off)
{
	struct zcall c;
	int r = zbegin(fs, file, &c);
	if (r < 0)
		return r;
	if (off >= c.size)
		return 0;
	if (n > c.size - off)
		n = (size_t)(c.size - off);
	size_t done = 0;
	while (done < n) {
		uint64_t pos = off + done, b = pos / ZB;
		uint64_t nb = step(b, (pos % ZB + (n - done) + ZB - 1) / ZB);
		r = get_blocks(&c, b, nb, c.z->pt);
		if (r < 0)
			return r;
		size_t k = (size_t)(nb * ZB - pos % ZB);
		if (k > n - done)
			k = n - done;
		memcpy((uint8_t *)buf + done, c.z->pt + pos % ZB, k);
		done += k;
	}
	return (long)done;
}

static long z_write(void *fs, void *file, const void *buf, size_t n, uint64_t off)
{
	struct zcall c;
	int r = zbegin(fs, file, &c);
	if (r == 0 && c.lsize == 0)
		r = new_header(&c);
	if (r < 0)
		return r;
	if (n == 0)
		return 0;
	if ((off + n + ZB - 1) / ZB > ZMAXBLK)
		return -EFBIG;
	c.watch = off + n > c.size;
	if (off > c.size)
		r = clear_gap(&c, off);
	size_t done = 0;
	while (r == 0 && done < n) {
		uint64_t pos = off + done, b = pos / ZB;
		uint64_t nb = step(b, (pos % ZB + (n - done) + ZB - 1) / ZB);
		size_t k = (size_t)(nb * ZB - pos % ZB);
		if (k > n - done)
			k = n - done;
		/* The first and last blocks keep what the write does not cover
		 * (past the end: zeros). */
		if (pos % ZB != 0 || (pos + k) % ZB != 0)
			r = get_blocks(&c, b, nb, c.z->pt);
		if (r == 0) {
			memcpy(c.z->pt + pos % ZB, (const uint8_t *)buf + done, k);
			r = put_blocks(&c, b, nb, c.z->pt);
		}
		done += r == 0 ? k : 0;
	}
	if (r == 0 && off + n > c.size)
		r = grow_durable(&c);
	if (r == 0 && off + n > c.size)
		r = set_u64(&c, 8, off + n);
	r = end_call(&c, r);
	return r < 0 ? r : (long)done;
}

static int z_truncate(void *fs, void *file, uint64_t len)
{
	struct zmount *z = fs;
	struct zfile *f = file;
	struct zcall c;
	int r = zbegin(z, f, &c);
	if (r < 0)
		return r;
	if (len == 0) {
		if (c.lsize == 0)
			return 0;
		/* Everything goes, the room lost to rewrites too. */
		r = z->s.below.ops->truncate(z->s.below.fs, f->sf.lower, 0);
		c.lsize = c.end = 0;
		return r < 0 ? r : new_header(&c);
	}
	if (len > ZMAXBLK * ZB)
		return -EFBIG;
	if (c.lsize == 0)
		r = new_header(&c);
	/* Shorter: the blocks wholly past the new end become holes and the new
	 * last block is stored again with zeros past it, before the size.
	 * Reads stop at the size anyway, but when the file grows again a cut
	 * may make the larger size durable and not the blocks of that write:
	 * the versions before them must be zeros there, as the file was. */
	if (r == 0 && len < c.size)
		r = make_holes(&c, (len + ZB - 1) / ZB, (c.size + ZB - 1) / ZB);
	if (r == 0 && len < c.size && len % ZB != 0) {
		r = get_blocks(&c, len / ZB, 1, z->pt);
		if (r == 0) {
			memset(z->pt + len % ZB, 0, ZB - len % ZB);
			r = put_blocks(&c, len / ZB, 1, z->pt);
		}
	}
	if (r == 0 && len > c.size)
		r = clear_gap(&c, (len + ZB - 1) / ZB * ZB);
	if (r == 0 && len > c.size)
		r = grow_durable(&c);
	if (r == 0)
		r = set_u64(&c, 8, len);
	return end_call(&c, r);
}

static int z_open(void *fs, const char *path, int flags, uint32_t perm, void **file)
{
	struct zmount *z = fs;
	struct zfile *f = *file;
	int r = stack_paths(&z->s, path, NULL);
	if (r == 0)
		r = stack_open_lower(&z->s, z->s.p[0], flags & ~LIBFS_O_TRUNC, perm, &f->sf);
	if (r < 0)
		return r;
	f->osync = (flags & LIBFS_O_SYNC) != 0;
	struct libfs_stat st;
	r = z->s.below.ops->fstat(z->s.below.fs, f->sf.lower, &st);
	f->isdir = r == 0 && st.type == LIBFS_T_DIR;
	f->ino = r == 0 ? st.ino : 0;
	if (r == 0 && !f->isdir && st.size > 0) {
		char m[8];
		struct zcall c = { .z = z, .f = f, .lsize = st.size };
		r = lread(&c, m, 8, 0);
		if (r == 0 && st.size >= ZHDR && memcmp(m, magic1, 8) == 0) {
			/* One slot per block: a cut could tear its blocks. */
			fprintf(stderr, "compress: %s: format EXCOMP1 (one slot per block) is no longer "
			        "read; copy the file out with a build that has it (9204bf8 or older)\n", path);
			r = -EBADMSG;
		} else if (r == 0 && (st.size < ZHDR || memcmp(m, magic, 8) != 0)) {
			r = -EBADMSG;                  /* not a file this layer wrote */
		}
	}
	if (r == 0 && !f->isdir && (flags & LIBFS_O_TRUNC))
		r = z_truncate(fs, f, 0);
	if (r < 0)
		stack_close(fs, f);
	return r;
}

static int z_fstat(void *fs, void *file, struct libfs_stat *st)
{
	struct zmount *z = fs;
	struct zfile *f = file;
	int r = z->s.below.ops->fstat(z->s.below.fs, f->sf.lower, st);
	if (r == 0 && st->type == LIBFS_T_REG) {
		struct zcall c;
		r = zbegin(z, f, &c);
		st->size = c.size;
	}
	return r;
}

static int z_stat(void *fs, const char *path, struct libfs_stat *st)
{
	struct zmount *z = fs;
	int r = stack_paths(&z->s, path, NULL);
	if (r == 0)
		r = z->s.below.ops->stat(z->s.below.fs, z->s.p[0], st);
	if (r < 0 || st->type != LIBFS_T_REG)
		return r;
	/* The size is in the file's header: open it below to read it. */
	struct zfile f = { 0 };
	r = stack_open_lower(&z->s, z->s.p[0], LIBFS_O_READ, 0, &f.sf);
	if (r < 0)
		return r;
	struct zcall c;
	r = zbegin(z, &f, &c);
	st->size = c.size;
	int e = stack_close(fs, &f);
	return r < 0 ? r : e;
}

/* Durable: the file's blocks leave the table (an fsync of the file below,
 * or a sync where the file system has no fsync). */
static int z_fsync(void *fs, void *file)
{
	struct zmount *z = fs;
	struct zfile *f = file;
	struct libfs_stat st;
	if (!z->s.below.ops->fsync)
		return sync_below(z);
	int r = z->s.below.ops->fsync(z->s.below.fs, f->sf.lower);
	if (r != 0 || f->isdir)
		return r;
	/* The file's blocks must leave the table now that their versions are
	 * acknowledged; if the file cannot be named, empty it all. */
	if (z->s.below.ops->fstat(z->s.below.fs, f->sf.lower, &st) != 0)
		return sync_below(z);
	forget(z, st.ino);
	return 0;
}

/* A file closed with blocks in the table is made durable first: once it
 * is closed, a rename directly below could give it another number, or give
 * its number to another file, and the table would lie about both. */
static int z_close(void *fs, void *file)
{
	struct zmount *z = fs;
	struct zfile *f = file;
	int r = 0;
	for (int i = 0; z->tab->nt > 0 && !f->isdir && i < ZTRACK; i++)
		if (z->tab->t[i].ino == f->ino + 1) {
			r = z_fsync(fs, file);
			break;
		}
	int e = stack_close(fs, file);
	return r < 0 ? r : e;
}

static int z_sync(void *fs)
{
	return sync_below(fs);
}

/* A rename may give the file another number below (fatfs numbers files by
 * where their names are): the table must not follow a number that changed,
 * so it is emptied first. */
static int z_rename(void *fs, const char *from, const char *to)
{
	struct zmount *z = fs;
	int r = z->tab->nt > 0 ? sync_below(z) : 0;
	return r < 0 ? r : stack_bypass_rename(fs, from, to);
}

static void z_free(struct zmount *z)
{
	free(z->io);
	free(z->pt);
	free(z->one);
	if (z->tab != NULL && --z->tab->refs == 0) {
		struct ztable **pp = &tables;
		while (*pp != z->tab)
			pp = &(*pp)->next;
		*pp = z->tab->next;
		free(z->tab);
	}
	z->tab = NULL;
}

static int z_mount(const char *opts, void **fs)
{
	int r = stack_mount(opts, sizeof(struct zmount), fs);
	if (r < 0)
		return r;
	struct zmount *z = *fs;
	z->io = malloc(ZBATCH * ZB);
	z->pt = malloc(ZBATCH * ZB);
	z->one = malloc(ZB);
	for (z->tab = tables; z->tab != NULL && z->tab->below != z->s.below.fs; z->tab = z->tab->next)
		;
	if (z->tab == NULL && (z->tab = calloc(1, sizeof *z->tab)) != NULL) {
		z->tab->below = z->s.below.fs;
		z->tab->next = tables;
		tables = z->tab;
	}
	if (z->tab != NULL)
		z->tab->refs++;
	if (z->io == NULL || z->pt == NULL || z->one == NULL || z->tab == NULL) {
		z_free(z);
		stack_unmount(z);
		return -ENOMEM;
	}
	z->atomic = (z->s.features & LIBFS_F_ATOMIC) != 0;
	/* At worst nothing compresses: the header and a page per MiB ride on
	 * the bytes. */
	uint64_t max = ZMAXBLK * ZB, below = z->s.file_max;
	if (below != 0 && below > ZHDR + ZB)
		max = (below - ZHDR) / (ZPER * ZB + ZPAGE) * (ZPER * ZB) +
		      ((below - ZHDR) % (ZPER * ZB + ZPAGE) > ZPAGE + ZB ?
		       (below - ZHDR) % (ZPER * ZB + ZPAGE) - ZPAGE - ZB : 0);
	else if (below != 0)
		max = 0;
	z->s.file_max = max < ZMAXBLK * ZB ? max : ZMAXBLK * ZB;
	return 0;
}


/* The table is this mount's: what it names is made durable before it
 * goes (a later mount takes every newest version for durable). */
static int z_unmount(void *fs)
{
	int r = sync_below(fs);
	z_free(fs);
	int e = stack_unmount(fs);
	return r < 0 ? r : e;
}

static void z_abandon(void *fs)
{
	z_free(fs);
	stack_abandon(fs);
}

STACK_LAYER_BEGIN
const struct libfs_ops compress_ops = {
	STACK_BYPASS,
	.name = "compress",
	.file_max = ZMAXBLK * ZB,
	.mount = z_mount,
	.unmount = z_unmount,
	.abandon = z_abandon,
	.open = z_open,
	.read = z_read,
	.write = z_write,
	.truncate = z_truncate,
	.fsync = z_fsync,
	.close = z_close,
	.sync = z_sync,
	.rename = z_rename,
	.stat = z_stat,
	.fstat = z_fstat,
	.file_size = sizeof(struct zfile),
};
STACK_LAYER_END
