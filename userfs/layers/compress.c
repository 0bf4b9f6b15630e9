/*
 * compress.c - the compression layer: each 4 KiB block of a file is
 * compressed on its own (libos/stack/lz.h), so reads and writes anywhere in
 * a file touch only the blocks they cover (docs/stacking.md has the format).
 *
 *   mount /z compress over=/data
 *
 * A file below is a 4 KiB header (magic, logical size, bytes lost to
 * rewrites, and the places of up to 504 index pages), index pages of 256
 * entries (where a block's bytes are, how many, how much room they have,
 * whether they are stored as they are because they did not compress), and
 * the blocks' bytes.  A block of zeros is a hole: no bytes at all.  A block
 * rewritten goes back in its room when it fits, else to the end of the
 * file; the room it left is counted, and given back when the file is
 * truncated to nothing.  Names are not touched.
 *
 * Like every layer here it keeps nothing between calls: each call reads
 * what it needs of the header and index from the layer below (whose cache
 * holds them), so the file read through this layer and directly below are
 * always the same bytes, whichever side changed them last.
 */
#include <stdlib.h>
#include <string.h>
#include "libos/stack/lz.h"
#include "libos/stack/stack.h"

#define ZB       4096                    /* logical block                       */
#define ZHDR     4096                    /* header                              */
#define ZPAGES   504                     /* index pages the header can name     */
#define ZPER     256                     /* entries per index page              */
#define ZENT     16                      /* bytes per entry                     */
#define ZBATCH   16                      /* blocks per step                     */
#define ZRAW     0x80000000u             /* entry len flag: stored as it is     */
#define ZROOM    512                     /* room is given in multiples of this  */
#define ZMAXBLK  ((uint64_t)ZPAGES * ZPER)

static const char magic[8] = "EXCOMP1";

struct zent {
	uint64_t off;
	uint32_t len;                        /* stored bytes | ZRAW; 0: a hole      */
	uint32_t room;
};

struct zmount {
	struct stack_mount s;
	uint8_t *io;                         /* ZBATCH * ZB of stored bytes         */
	uint8_t *pt;                         /* ZBATCH * ZB of plaintext            */
};

struct zfile {
	struct stack_file sf;
	int isdir;
};

/* ---- the layer below ------------------------------------------------------------ */

static int lread(struct zmount *z, struct zfile *f, void *buf, size_t n, uint64_t off)
{
	long r = z->s.below.ops->read(z->s.below.fs, f->sf.lower, buf, n, off);
	return r < 0 ? (int)r : (size_t)r == n ? 0 : -EIO;
}

static int lwrite(struct zmount *z, struct zfile *f, const void *buf, size_t n, uint64_t off)
{
	long r = z->s.below.ops->write(z->s.below.fs, f->sf.lower, buf, n, off);
	return r < 0 ? (int)r : (size_t)r == n ? 0 : -EIO;
}

static int lsize(struct zmount *z, struct zfile *f, uint64_t *size)
{
	struct libfs_stat st;
	int r = z->s.below.ops->fstat(z->s.below.fs, f->sf.lower, &st);
	*size = st.size;
	return r;
}

static int get_u64(struct zmount *z, struct zfile *f, uint64_t at, uint64_t *v)
{
	uint8_t b[8];
	int r = lread(z, f, b, 8, at);
	*v = stack_get_le64(b);
	return r;
}

static int set_u64(struct zmount *z, struct zfile *f, uint64_t at, uint64_t v)
{
	uint8_t b[8];
	stack_put_le64(b, v);
	return lwrite(z, f, b, 8, at);
}

/* The logical size (header offset 8); 0 for a file without a header yet. */
static int zsize(struct zmount *z, struct zfile *f, uint64_t *size)
{
	uint64_t l;
	int r = lsize(z, f, &l);
	if (r < 0 || l == 0) {
		*size = 0;
		return r;
	}
	if (l < ZHDR)
		return -EBADMSG;
	return get_u64(z, f, 8, size);
}

static int new_header(struct zmount *z, struct zfile *f)
{
	uint8_t *h = calloc(1, ZHDR);
	if (h == NULL)
		return -ENOMEM;
	memcpy(h, magic, 8);
	int r = lwrite(z, f, h, ZHDR, 0);
	free(h);
	return r;
}

/* Where index page p is, allocating it (zeroed, at the end) if `make`;
 * 0 when it does not exist. */
static int page_at(struct zmount *z, struct zfile *f, uint64_t p, int make, uint64_t *end,
                   uint64_t *off)
{
	int r = get_u64(z, f, 64 + 8 * p, off);
	if (r < 0 || *off != 0 || !make)
		return r;
	uint8_t *zero = calloc(1, ZPER * ZENT);
	if (zero == NULL)
		return -ENOMEM;
	*off = *end;
	r = lwrite(z, f, zero, ZPER * ZENT, *off);
	free(zero);
	if (r == 0)
		r = set_u64(z, f, 64 + 8 * p, *off);
	*end += ZPER * ZENT;
	return r;
}

/* Entries of blocks [b, b + n), all in one page. */
static int get_ents(struct zmount *z, struct zfile *f, uint64_t b, uint64_t n, struct zent *e)
{
	uint64_t pg, dummy = 0;
	int r = page_at(z, f, b / ZPER, 0, &dummy, &pg);
	if (r < 0)
		return r;
	if (pg == 0) {
		memset(e, 0, n * sizeof *e);
		return 0;
	}
	uint8_t raw[ZBATCH * ZENT];
	r = lread(z, f, raw, n * ZENT, pg + b % ZPER * ZENT);
	for (uint64_t i = 0; r == 0 && i < n; i++) {
		e[i].off = stack_get_le64(raw + i * ZENT);
		e[i].len = (uint32_t)stack_get_le64(raw + i * ZENT + 8);
		e[i].room = (uint32_t)(stack_get_le64(raw + i * ZENT + 8) >> 32);
		/* Damaged entries are refused before anything trusts them. */
		if ((e[i].len & ~ZRAW) > e[i].room || e[i].room > ZB || e[i].room % ZROOM != 0 ||
		    (e[i].len == 0) != (e[i].room == 0) || (e[i].len != 0 && e[i].off < ZHDR))
			r = -EBADMSG;
	}
	return r;
}

static int put_ents(struct zmount *z, struct zfile *f, uint64_t b, uint64_t n, const struct zent *e,
                    uint64_t *end)
{
	uint64_t pg;
	int r = page_at(z, f, b / ZPER, 1, end, &pg);
	if (r < 0)
		return r;
	uint8_t raw[ZBATCH * ZENT];
	for (uint64_t i = 0; i < n; i++) {
		stack_put_le64(raw + i * ZENT, e[i].off);
		stack_put_le64(raw + i * ZENT + 8, (uint64_t)e[i].room << 32 | e[i].len);
	}
	return lwrite(z, f, raw, n * ZENT, pg + b % ZPER * ZENT);
}

/* ---- blocks ------------------------------------------------------------------- */

/* Plaintext of blocks [b, b + n) (one page's worth at most) into pt. */
static int get_blocks(struct zmount *z, struct zfile *f, uint64_t b, uint64_t n, uint8_t *pt)
{
	struct zent e[ZBATCH];
	int r = get_ents(z, f, b, n, e);
	for (uint64_t i = 0; r == 0 && i < n; ) {
		if (e[i].len == 0) {
			memset(pt + i * ZB, 0, ZB);
			i++;
			continue;
		}
		/* Neighbours stored one after the other come in one read. */
		uint64_t j = i + 1;
		while (j < n && e[j].len != 0 && e[j].off == e[j - 1].off + e[j - 1].room)
			j++;
		uint64_t span = e[j - 1].off + (e[j - 1].len & ~ZRAW) - e[i].off;
		r = lread(z, f, z->io, span, e[i].off);
		for (uint64_t k = i; r == 0 && k < j; k++) {
			const uint8_t *src = z->io + (e[k].off - e[i].off);
			uint32_t len = e[k].len & ~ZRAW;
			if (e[k].len & ZRAW)
				r = len == ZB ? (memcpy(pt + k * ZB, src, ZB), 0) : -EBADMSG;
			else
				r = lz_decompress(src, len, pt + k * ZB, ZB) == 0 ? 0 : -EBADMSG;
		}
		i = j;
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

/* Store plaintext blocks [b, b + n) (one page's worth at most): each in
 * its old room when it fits, else appended at *end. */
static int put_blocks(struct zmount *z, struct zfile *f, uint64_t b, uint64_t n, const uint8_t *pt,
                      uint64_t *end)
{
	struct zent e[ZBATCH];
	uint64_t lost = 0, append_at = *end, appended = 0;
	int r = get_ents(z, f, b, n, e);
	uint8_t *c = malloc(ZB);
	if (c == NULL)
		return -ENOMEM;
	for (uint64_t i = 0; r == 0 && i < n; i++) {
		const uint8_t *p = pt + i * ZB;
		if (zero_block(p)) {
			lost += e[i].room;
			e[i] = (struct zent){ 0 };
			continue;
		}
		size_t len = lz_compress(p, ZB, c, ZB);
		const uint8_t *src = len ? c : p;
		uint32_t flag = len ? 0 : ZRAW;
		if (len == 0)
			len = ZB;
		if (len <= e[i].room) {
			r = lwrite(z, f, src, len, e[i].off);
		} else {
			lost += e[i].room;
			e[i].off = append_at + appended;
			e[i].room = (uint32_t)((len + ZROOM - 1) / ZROOM * ZROOM);
			memcpy(z->io + appended, src, len);
			appended += e[i].room;
		}
		e[i].len = (uint32_t)len | flag;
	}
	free(c);
	/* Data before the entries that name it. */
	if (r == 0 && appended > 0)
		r = lwrite(z, f, z->io, appended, append_at);
	*end += appended;
	if (r == 0)
		r = put_ents(z, f, b, n, e, end);
	if (r == 0 && lost > 0) {
		uint64_t g;
		r = get_u64(z, f, 16, &g);
		if (r == 0)
			r = set_u64(z, f, 16, g + lost);
	}
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

/* ---- operations ------------------------------------------------------------------ */

static long z_read(void *fs, void *file, void *buf, size_t n, uint64_t off)
{
	struct zmount *z = fs;
	struct zfile *f = file;
	uint64_t size;
	int r = zsize(z, f, &size);
	if (r < 0)
		return r;
	if (off >= size)
		return 0;
	if (n > size - off)
		n = (size_t)(size - off);
	size_t done = 0;
	while (done < n) {
		uint64_t pos = off + done, b = pos / ZB;
		uint64_t nb = step(b, (pos % ZB + (n - done) + ZB - 1) / ZB);
		r = get_blocks(z, f, b, nb, z->pt);
		if (r < 0)
			return r;
		size_t k = (size_t)(nb * ZB - pos % ZB);
		if (k > n - done)
			k = n - done;
		memcpy((uint8_t *)buf + done, z->pt + pos % ZB, k);
		done += k;
	}
	return (long)done;
}

static long z_write(void *fs, void *file, const void *buf, size_t n, uint64_t off)
{
	struct zmount *z = fs;
	struct zfile *f = file;
	uint64_t size, end;
	int r = zsize(z, f, &size);
	if (r == 0)
		r = lsize(z, f, &end);
	if (r == 0 && end == 0) {
		r = new_header(z, f);
		end = ZHDR;
	}
	if (r < 0)
		return r;
	if (n == 0)
		return 0;
	if ((off + n + ZB - 1) / ZB > ZMAXBLK)
		return -EFBIG;
	end = (end + ZROOM - 1) / ZROOM * ZROOM;
	size_t done = 0;
	while (done < n) {
		uint64_t pos = off + done, b = pos / ZB;
		uint64_t nb = step(b, (pos % ZB + (n - done) + ZB - 1) / ZB);
		size_t k = (size_t)(nb * ZB - pos % ZB);
		if (k > n - done)
			k = n - done;
		/* The first and last blocks keep what the write does not cover
		 * (beyond the end that is zeros: a block's tail past the size is
		 * always zero). */
		if (pos % ZB != 0 || (pos + k) % ZB != 0) {
			r = get_blocks(z, f, b, nb, z->pt);
			if (r < 0)
				return r;
		}
		memcpy(z->pt + pos % ZB, (const uint8_t *)buf + done, k);
		r = put_blocks(z, f, b, nb, z->pt, &end);
		if (r < 0)
			return r;
		done += k;
	}
	if (off + n > size)
		r = set_u64(z, f, 8, off + n);
	return r < 0 ? r : (long)done;
}

static int z_truncate(void *fs, void *file, uint64_t len)
{
	struct zmount *z = fs;
	struct zfile *f = file;
	uint64_t size, end;
	int r = zsize(z, f, &size);
	if (r == 0)
		r = lsize(z, f, &end);
	if (r < 0)
		return r;
	if (end == 0) {
		if (len == 0)
			return 0;
		r = new_header(z, f);
		end = ZHDR;
	}
	if (len == 0) {
		/* Everything goes, the room lost to rewrites too. */
		r = z->s.below.ops->truncate(z->s.below.fs, f->sf.lower, 0);
		return r < 0 ? r : new_header(z, f);
	}
	if (len > ZMAXBLK * ZB)
		return -EFBIG;
	end = (end + ZROOM - 1) / ZROOM * ZROOM;
	for (uint64_t b = (len + ZB - 1) / ZB; r == 0 && b * ZB < size; ) {
		/* Blocks wholly past the new end become holes. */
		uint64_t nb = step(b, (size - b * ZB + ZB - 1) / ZB);
		memset(z->pt, 0, nb * ZB);
		r = put_blocks(z, f, b, nb, z->pt, &end);
		b += nb;
	}
	if (r == 0 && len < size && len % ZB != 0) {
		/* The new last block's tail is zeroed, so growing again reads zeros. */
		uint64_t b = len / ZB;
		r = get_blocks(z, f, b, 1, z->pt);
		if (r == 0) {
			memset(z->pt + len % ZB, 0, ZB - len % ZB);
			r = put_blocks(z, f, b, 1, z->pt, &end);
		}
	}
	return r < 0 ? r : set_u64(z, f, 8, len);
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
	struct libfs_stat st;
	r = z->s.below.ops->fstat(z->s.below.fs, f->sf.lower, &st);
	f->isdir = r == 0 && st.type == LIBFS_T_DIR;
	if (r == 0 && !f->isdir && st.size > 0) {
		char m[8];
		r = lread(z, f, m, 8, 0);
		if (r == 0 && (st.size < ZHDR || memcmp(m, magic, 8) != 0))
			r = -EBADMSG;                  /* not a file this layer wrote */
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
	if (r == 0 && st->type == LIBFS_T_REG)
		r = zsize(z, f, &st->size);
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
	r = zsize(z, &f, &st->size);
	int e = stack_close(fs, &f);
	return r < 0 ? r : e;
}

static int z_mount(const char *opts, void **fs)
{
	int r = stack_mount(opts, sizeof(struct zmount), fs);
	if (r < 0)
		return r;
	struct zmount *z = *fs;
	z->io = malloc(ZBATCH * ZB);
	z->pt = malloc(ZBATCH * ZB);
	if (z->io == NULL || z->pt == NULL) {
		free(z->io);
		free(z->pt);
		stack_unmount(z);
		return -ENOMEM;
	}
	/* At worst nothing compresses: the header and a page per MiB ride on
	 * the bytes. */
	uint64_t max = ZMAXBLK * ZB, below = z->s.file_max;
	if (below != 0 && below > ZHDR + ZB)
		max = (below - ZHDR) / (ZPER * ZB + ZPER * ZENT) * (ZPER * ZB) +
		      ((below - ZHDR) % (ZPER * ZB + ZPER * ZENT) > ZPER * ZENT + ZB ?
		       (below - ZHDR) % (ZPER * ZB + ZPER * ZENT) - ZPER * ZENT - ZB : 0);
	else if (below != 0)
		max = 0;
	z->s.file_max = max < ZMAXBLK * ZB ? max : ZMAXBLK * ZB;
	return 0;
}

static void z_free(struct zmount *z)
{
	free(z->io);
	free(z->pt);
}

static int z_unmount(void *fs)
{
	z_free(fs);
	return stack_unmount(fs);
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
	.stat = z_stat,
	.fstat = z_fstat,
	.file_size = sizeof(struct zfile),
};
STACK_LAYER_END
