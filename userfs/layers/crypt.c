/*
 * crypt.c - the encryption layer: file contents and names encrypted and
 * authenticated, over any mount (docs/stacking.md has the format).
 *
 *   mount /secret crypt over=/data,key=SECRET
 *
 * Keys: the mount's secret goes through HKDF-SHA-256 (RFC 5869) to a
 * master key; each file's key is derived from it and the file's 16-byte
 * id, so equal files encrypt differently and a block moved from one file
 * to another does not authenticate.  Contents: ChaCha20-Poly1305
 * (RFC 8439) per 4 KiB block, each block stored as nonce, ciphertext, tag,
 * its index, the file's id and whether it is the file's last block bound
 * in as associated data (so blocks cannot be swapped, moved between files,
 * or cut off the end).  Nonces are never reused: each is the mount's epoch
 * (counted up and made durable in the directory's .crypt file at every
 * mount, before any write) and a counter.  Names: each component is
 * encrypted deterministically (so it can be looked up) in the manner of
 * SIV - a 12-byte HMAC of the name is both the ChaCha20 nonce and the
 * authenticator - and written in unpadded base64url.
 *
 * Anything that does not authenticate is refused with -EBADMSG; a wrong
 * key is refused at mount with -EACCES.  No layer state outlives a call
 * except each open file's key (which never changes), so the layer is as
 * coherent as the one below.  What it cannot see: the whole directory
 * rolled back to an older copy, and a file cut to zero blocks.
 */
#include <stdlib.h>
#include <string.h>
#include "libos/stack/crypto.h"
#include "libos/stack/stack.h"

#define CB        4096                   /* plaintext bytes per block          */
#define OV2       (12 + 16)              /* formats 1, 2: a slot's nonce, tag  */
#define OV3       (12 + 8 + 16)          /* format 3: nonce, generation, tag   */
#define SLOT3     (CB + OV3)
#define CHDR      32                     /* file header: magic, id, rounds     */
#define CBATCH    16                     /* blocks per call to the layer below */
#define CDUR      32                     /* files whose fsync this mount recalls */
#define META      ".crypt"               /* not base64url: never a file's name */
#define METALEN   80                     /* .crypt: magic, check, epoch, rounds, MAC */
#define SIVLEN    12
#define ROUNDS    12                     /* ChaCha rounds for new files (cipher=) */

struct crypt {
	struct stack_mount s;
	uint8_t master[32], name_key[32], name_mac[32];
	uint32_t epoch;
	uint64_t counter;
	int rounds;                          /* of the files this mount makes       */
	char pbuf[2][LIBFS_PATH_MAX];        /* translated paths                    */
	uint8_t *io;                         /* CBATCH stored blocks (both slots)   */
	uint8_t *pt;                         /* CBATCH plaintext blocks             */
	/* What this mount knows is durable (see durable()): every slot it
	 * sealed before `synced` (the start of its last sync), and of the files
	 * in dur[], every slot sealed before the start of their last fsync. */
	uint64_t synced;
	struct { uint8_t id[16]; uint64_t upto; } dur[CDUR];
	int ndur;
};

struct crypt_file {
	struct stack_file sf;
	int isdir;
	int fmt;                             /* 3; 1 and 2 are the older formats   */
	int rounds;                          /* 20 for a format 1 file             */
	int osync;                           /* opened LIBFS_O_SYNC                */
	uint8_t id[16];
	uint8_t key[32];
};

/* A value never produced before for this directory: epoch, then counter. */
static void fresh(struct crypt *c, uint8_t out[12])
{
	stack_put_le64(out + 4, c->counter++);
	out[0] = (uint8_t)c->epoch;
	out[1] = (uint8_t)(c->epoch >> 8);
	out[2] = (uint8_t)(c->epoch >> 16);
	out[3] = (uint8_t)(c->epoch >> 24);
}

/* ---- names ---------------------------------------------------------------------- */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static size_t b64_len(size_t n)
{
	return (n * 4 + 2) / 3;
}

static void b64_encode(const uint8_t *in, size_t n, char *out)
{
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < n; i++) {
		acc = acc << 8 | in[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			*out++ = B64[(acc >> bits) & 63];
		}
	}
	if (bits > 0)
		*out++ = B64[(acc << (6 - bits)) & 63];
	*out = 0;
}

/* Bytes decoded, or -1 if s is not unpadded base64url. */
static long b64_decode(const char *s, size_t len, uint8_t *out)
{
	uint32_t acc = 0;
	int bits = 0;
	long n = 0;
	for (size_t i = 0; i < len; i++) {
		const char *p = memchr(B64, s[i], 64);
		if (p == NULL || s[i] == 0)
			return -1;
		acc = acc << 6 | (uint32_t)(p - B64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (uint8_t)(acc >> bits);
		}
	}
	return n;
}

static void name_siv(struct crypt *c, const char *name, size_t n, uint8_t siv[32])
{
	hmac256(c->name_mac, 32, name, n, siv);
}

/* Encrypt one component of n bytes into out (NUL-terminated). */
static int name_seal(struct crypt *c, const char *name, size_t n, char *out, size_t room)
{
	uint8_t buf[SIVLEN + LIBFS_NAME_MAX], siv[32];
	if (n > c->s.name_max || b64_len(SIVLEN + n) + 1 > room)
		return -ENAMETOOLONG;
	name_siv(c, name, n, siv);
	memcpy(buf, siv, SIVLEN);
	chacha20_xor(c->name_key, siv, 0, (const uint8_t *)name, buf + SIVLEN, n);
	b64_encode(buf, SIVLEN + n, out);
	return 0;
}

/* Decrypt a stored name; 0, -ENOENT for a name that is not ours (the
 * .crypt file, anything not base64url), -EBADMSG for one that decodes but
 * does not authenticate. */
static int name_open(struct crypt *c, const char *stored, char *out)
{
	uint8_t buf[LIBFS_NAME_MAX + 1], siv[32];
	size_t len = strlen(stored);
	if (len > LIBFS_NAME_MAX)
		return -ENOENT;
	long n = b64_decode(stored, len, buf);
	if (n < SIVLEN + 1 || b64_len((size_t)n) != len)
		return -ENOENT;
	size_t pn = (size_t)n - SIVLEN;
	chacha20_xor(c->name_key, buf, 0, buf + SIVLEN, (uint8_t *)out, pn);
	out[pn] = 0;
	name_siv(c, out, pn, siv);
	if (!crypto_equal(siv, buf, SIVLEN) || memchr(out, 0, pn) != NULL || memchr(out, '/', pn))
		return -EBADMSG;
	return 0;
}

/* A path inside the layer, every component encrypted, under the covered
 * directory: into c->pbuf[i]. */
static int cpath(struct crypt *c, int i, const char *path, const char **out)
{
	char *o = c->pbuf[i];
	size_t len = c->s.sublen, room = LIBFS_PATH_MAX;
	memcpy(o, c->s.below.path, len);
	const char *p = path;
	while (*p) {
		size_t n = strcspn(p, "/");
		if (len > 0)
			o[len++] = '/';
		if (len >= room)
			return -ENAMETOOLONG;
		int r = name_seal(c, p, n, o + len, room - len);
		if (r < 0)
			return r;
		len += strlen(o + len);
		p += n;
		if (*p == '/')
			p++;
	}
	o[len] = 0;
	*out = o;
	return 0;
}

/* ---- contents ----------------------------------------------------------------- */

/* Where a file's blocks are below (docs/stacking.md, "crypt"): after the
 * header, block b's *pair* at CHDR + b * pair.  Format 3 has two slots per
 * block, each nonce, generation, ciphertext, tag, the second at `slot`
 * from the first; formats 1 and 2 one slot (nonce, ciphertext, tag).  The
 * last block, of len bytes, ends at its last slot's ciphertext and tag:
 * its pair takes tail(len) bytes, so the size below gives the size above. */
static uint32_t l_over(int fmt)  { return fmt == 3 ? OV3 : OV2; }
static uint32_t l_slot(int fmt)  { return CB + l_over(fmt); }
static uint32_t l_pair(int fmt)  { return fmt == 3 ? 2 * SLOT3 : l_slot(fmt); }
static uint32_t l_tail(int fmt, uint64_t len)
{
	return l_pair(fmt) - l_slot(fmt) + (uint32_t)len + l_over(fmt);
}

/* Logical size from the layer below's size; -EBADMSG when no whole
 * number of blocks fits it. */
static int64_t plain_size(int fmt, uint64_t lower)
{
	if (lower == 0)
		return 0;                             /* created, no header yet */
	if (lower < CHDR)
		return -EBADMSG;
	uint64_t l = lower - CHDR, full = l / l_pair(fmt), rem = l % l_pair(fmt);
	if (rem != 0 && rem <= l_tail(fmt, 0))
		return -EBADMSG;
	return (int64_t)(full * CB + (rem ? rem - l_tail(fmt, 0) : 0));
}

static uint64_t stored_size(int fmt, uint64_t size)
{
	uint64_t full = size / CB, rem = size % CB;
	return CHDR + full * l_pair(fmt) + (rem ? l_tail(fmt, rem) : 0);
}

/* The associated data of block b: the file's id, b, whether it is the
 * last block, and (format 3) the slot's generation.  Its length. */
static size_t block_aad(const struct crypt_file *f, uint64_t b, int last, uint64_t gen,
                        uint8_t aad[33])
{
	memcpy(aad, f->id, 16);
	stack_put_le64(aad + 16, b);
	aad[24] = (uint8_t)last;
	if (f->fmt != 3)
		return 25;
	stack_put_le64(aad + 25, gen);
	return 33;
}

/* Seal plaintext block b (len bytes) into the slot at st. */
static void seal(struct crypt *c, struct crypt_file *f, uint64_t b, int last, uint64_t gen,
                 const uint8_t *pt, size_t len, uint8_t *st)
{
	uint8_t aad[33];
	size_t alen = block_aad(f, b, last, gen, aad);
	uint8_t *ct = st + l_over(f->fmt) - 16;
	fresh(c, st);
	if (f->fmt == 3)
		stack_put_le64(st + 12, gen);
	chacha_aead_seal(f->rounds, f->key, st, aad, alen, pt, len, ct, ct + len);
}

/* Open the slot at st into pt, or only check it when pt is NULL. */
static int unseal(struct crypt_file *f, uint64_t b, int last, const uint8_t *st, size_t len,
                  uint8_t *pt)
{
	uint8_t aad[33];
	size_t alen = block_aad(f, b, last, f->fmt == 3 ? stack_get_le64(st + 12) : 0, aad);
	const uint8_t *ct = st + l_over(f->fmt) - 16;
	int r = pt ? chacha_aead_open(f->rounds, f->key, st, aad, alen, ct, len, ct + len, pt)
	           : chacha_aead_check(f->rounds, f->key, st, aad, alen, ct, len, ct + len);
	return r == 0 ? 0 : -EBADMSG;
}

/* Block k of a file of `size` bytes, its pair at p: which slot holds its
 * newest version that authenticates, or -1 for none; that version opened
 * into pt (pt NULL: only checked).  *gen: the larger generation the two
 * slots state (authenticated or not), which a new version must pass.
 * The slot with the larger stated generation is tried first: after a cut
 * it may be the one torn, and then the other is the newest. */
static int pick(struct crypt_file *f, uint64_t k, int64_t size, const uint8_t *p, uint8_t *pt,
                uint64_t *gen)
{
	uint64_t last = ((uint64_t)size - 1) / CB;
	size_t len = k == last && size % CB ? (size_t)(size % CB) : CB;
	if (f->fmt != 3) {
		*gen = 0;
		return unseal(f, k, k == last, p, len, pt) == 0 ? 0 : -1;
	}
	uint64_t g[2] = { stack_get_le64(p + 12), stack_get_le64(p + SLOT3 + 12) };
	int first = g[1] > g[0];
	*gen = g[first];
	for (int i = 0; i < 2; i++)
		if (unseal(f, k, k == last, p + (first ^ i) * SLOT3, len, pt) == 0)
			return first ^ i;
	return -1;
}

/* Is the slot whose nonce is n durable?  A slot another mount sealed is
 * (a mount's slots are durable when it lets go: unmount, exit, a sharing
 * hand-over sync first); one of this mount's if a sync, or an fsync of its
 * file, began after it was sealed.  This must be exact both ways: a slot
 * taken for durable that is not could be overwritten with the only durable
 * version in the other; a durable one taken for not durable is overwritten
 * in place. */
static int durable(struct crypt *c, const struct crypt_file *f, const uint8_t *n)
{
	uint32_t ep = (uint32_t)n[0] | (uint32_t)n[1] << 8 | (uint32_t)n[2] << 16 | (uint32_t)n[3] << 24;
	uint64_t ctr = stack_get_le64(n + 4);
	if (ep != c->epoch || ctr < c->synced)
		return 1;
	for (int i = 0; i < c->ndur; i++)
		if (memcmp(c->dur[i].id, f->id, 16) == 0)
			return ctr < c->dur[i].upto;
	return 0;
}

static int sync_below(struct crypt *c)
{
	return c->s.below.ops->sync ? c->s.below.ops->sync(c->s.below.fs) : stack_sync_files(&c->s);
}

/* Everything sealed so far is durable once the layer below is synced: the
 * table of per-file marks starts empty again. */
static int sync_all(struct crypt *c)
{
	uint64_t now = c->counter;
	int r = sync_below(c);
	if (r == 0) {
		c->synced = now;
		c->ndur = 0;
	}
	return r;
}

/* Every slot of file id sealed before `upto` is durable.  When the table
 * is full, a sync of the layer below makes everything durable instead. */
static int note_durable(struct crypt *c, const uint8_t id[16], uint64_t upto)
{
	int k = 0;
	for (int i = 0; i < c->ndur; i++) {
		if (memcmp(c->dur[i].id, id, 16) == 0) {
			if (c->dur[i].upto < upto)
				c->dur[i].upto = upto;
			return 0;
		}
		if (c->dur[i].upto > c->synced)
			c->dur[k++] = c->dur[i];
	}
	c->ndur = k;
	if (k < CDUR) {
		memcpy(c->dur[k].id, id, 16);
		c->dur[k].upto = upto;
		c->ndur++;
		return 0;
	}
	return sync_all(c);
}

/* Size from the layer below; *wt: its writes are durable when they return. */
static int lower_size(struct crypt *c, struct crypt_file *f, int64_t *size, int *wt)
{
	struct libfs_stat st;
	int r = c->s.below.ops->fstat(c->s.below.fs, f->sf.lower, &st);
	if (r < 0)
		return r;
	if (wt != NULL)
		*wt = f->osync || st.persist == LIBFS_P_WRITETHROUGH;
	*size = plain_size(f->fmt, st.size);
	return *size < 0 ? (int)*size : 0;
}

/* Read the stored pairs of blocks [b, b + nb) of a file of `size` bytes
 * into c->io (the part of the last past the file's end zeroed). */
static int get_raw(struct crypt *c, struct crypt_file *f, uint64_t b, uint64_t nb, int64_t size)
{
	uint64_t pair = l_pair(f->fmt), at = CHDR + b * pair;
	uint64_t end = stored_size(f->fmt, (uint64_t)size);
	uint64_t want = at + nb * pair < end ? nb * pair : end - at;
	long r = c->s.below.ops->read(c->s.below.fs, f->sf.lower, c->io, want, at);
	if (r < 0)
		return (int)r;
	if ((uint64_t)r != want)
		return -EBADMSG;
	memset(c->io + want, 0, nb * pair - want);
	return 0;
}

/* Read and check blocks [b, b + nb) of a file of `size` bytes into pt. */
static int get_blocks(struct crypt *c, struct crypt_file *f, uint64_t b, uint64_t nb, int64_t size,
                      uint8_t *pt)
{
	int r = get_raw(c, f, b, nb, size);
	uint64_t gen;
	for (uint64_t i = 0; r == 0 && i < nb; i++)
		if (pick(f, b + i, size, c->io + i * l_pair(f->fmt), pt + i * CB, &gen) < 0)
			r = -EBADMSG;
	return r;
}

static long crypt_read(void *fs, void *file, void *buf, size_t n, uint64_t off)
{
	struct crypt *c = fs;
	struct crypt_file *f = file;
	int64_t size;
	int r = lower_size(c, f, &size, NULL);
	if (r < 0)
		return r;
	if (off >= (uint64_t)size)
		return 0;
	if (n > (uint64_t)size - off)
		n = (size_t)((uint64_t)size - off);
	size_t done = 0;
	while (done < n) {
		uint64_t pos = off + done, b = pos / CB, want = n - done;
		uint64_t nb = ((pos % CB) + want + CB - 1) / CB;
		if (nb > CBATCH)
			nb = CBATCH;
		/* Whole blocks the caller wants all of (the file's short last
		 * one included) are opened straight into its buffer. */
		int direct = pos % CB == 0 && (nb * CB <= want || pos + want == (uint64_t)size);
		uint8_t *dst = direct ? (uint8_t *)buf + done : c->pt;
		r = get_blocks(c, f, b, nb, size, dst);
		if (r < 0)
			break;
		size_t k = (size_t)(nb * CB - pos % CB);
		if (k > want)
			k = (size_t)want;
		if (!direct)
			memcpy((uint8_t *)buf + done, c->pt + pos % CB, k);
		done += k;
	}
	return r < 0 ? r : (long)done;
}

/* Store new versions of blocks [b, b + nb) of a file that was `size`
 * bytes long and will be `newsize`, their plaintext at src (the blocks
 * that existed already have their pairs in c->io, from get_raw; cur[i] and
 * gen[i] from pick).  Format 3 puts each in one slot and keeps the other
 * as it is below (the bytes rewritten unchanged), so that a write cut
 * short leaves the old version whole: the slot not holding the newest
 * version, if that version is durable; else the newest's own slot, whose
 * version no acknowledgement covers - the other slot then holds the
 * durable one.  New blocks take slot 0, slot 1 zeros. */
static int put_blocks(struct crypt *c, struct crypt_file *f, uint64_t b, uint64_t nb, int64_t size,
                      uint64_t newsize, const uint8_t *src, const int *cur, const uint64_t *gen)
{
	uint64_t have = ((uint64_t)size + CB - 1) / CB, newlast = (newsize - 1) / CB;
	uint64_t pair = l_pair(f->fmt), stored = 0;
	for (uint64_t i = 0; i < nb; i++) {
		uint64_t blk = b + i;
		uint8_t *p = c->io + i * pair;
		size_t len = blk == newlast && newsize % CB ? (size_t)(newsize % CB) : CB;
		int slot = 0;
		uint64_t g = 1;
		if (f->fmt == 3 && blk < have) {
			g = gen[i] + 1;
			slot = cur[i] < 0 ? 0 : durable(c, f, p + cur[i] * SLOT3) ? !cur[i] : cur[i];
		} else if (f->fmt == 3) {
			/* Slot 0 gets the sealed block; the rest, zeros. */
			memset(p + OV3 + len, 0, pair - OV3 - len);
		}
		seal(c, f, blk, blk == newlast, g, src + i * CB, len, p + slot * l_slot(f->fmt));
		stored += blk == newlast ? l_tail(f->fmt, len) : pair;
	}
	long w = c->s.below.ops->write(c->s.below.fs, f->sf.lower, c->io, stored, CHDR + b * pair);
	return w < 0 ? (int)w : (uint64_t)w != stored ? -EIO : 0;
}

/* Write plaintext [off, off + n) of a file now `size` bytes long, where
 * off <= size; blocks are read, merged and sealed CBATCH at a time. */
static long put_range(struct crypt *c, struct crypt_file *f, const uint8_t *buf, size_t n,
                      uint64_t off, int64_t size)
{
	uint64_t newsize = off + n > (uint64_t)size ? off + n : (uint64_t)size;
	uint8_t *pt = c->pt;
	int cur[CBATCH];
	uint64_t gen[CBATCH];
	int r = 0;
	/* The old last block, whole and before the range, stops being the
	 * last: stored again as an inner block. */
	if (size > 0 && (uint64_t)size % CB == 0 && off >= (uint64_t)size) {
		uint64_t ol = ((uint64_t)size - 1) / CB;
		r = get_raw(c, f, ol, 1, size);
		if (r == 0 && (cur[0] = pick(f, ol, size, c->io, pt, &gen[0])) < 0)
			r = -EBADMSG;
		if (r == 0)
			r = put_blocks(c, f, ol, 1, size, newsize, pt, cur, gen);
	}
	size_t done = 0;
	while (r == 0 && done < n) {
		uint64_t pos = off + done, b = pos / CB;
		uint64_t nb = ((pos % CB) + (n - done) + CB - 1) / CB;
		if (nb > CBATCH)
			nb = CBATCH;
		size_t k = (size_t)(nb * CB - pos % CB);
		if (k > n - done)
			k = n - done;
		uint64_t have = size > 0 ? ((uint64_t)size + CB - 1) / CB : 0;
		uint64_t ex = b < have ? (have - b < nb ? have - b : nb) : 0;
		/* Whole blocks, or blocks that end at or past the file's end,
		 * are sealed straight from the caller's buffer; otherwise the
		 * first and last blocks keep what the write does not cover. */
		int direct = pos % CB == 0 && (k % CB == 0 || pos + k >= (uint64_t)size);
		int head = pos % CB != 0 && ex > 0;
		int tail = (pos + k) % CB != 0 && ex == nb && (nb > 1 || pos % CB == 0);
		if (ex > 0 && (f->fmt == 3 || !direct))
			r = get_raw(c, f, b, ex, size);
		if (!direct)
			memset(pt, 0, nb * CB);
		for (uint64_t i = 0; r == 0 && i < ex; i++) {
			/* A block's old bytes are opened where the write keeps
			 * some; in format 3 the others are checked, to know which
			 * slot is which. */
			int want = !direct && ((i == 0 && head) || (i == nb - 1 && tail));
			if (f->fmt != 3 && !want)
				continue;
			cur[i] = pick(f, b + i, size, c->io + i * l_pair(f->fmt), want ? pt + i * CB : NULL,
			              &gen[i]);
			if (cur[i] < 0 && want)
				r = -EBADMSG;
		}
		if (r < 0)
			break;
		if (!direct)
			memcpy(pt + pos % CB, buf + done, k);
		r = put_blocks(c, f, b, nb, size, newsize, direct ? buf + done : pt, cur, gen);
		done += k;
		if (pos + k > (uint64_t)size)
			size = (int64_t)(pos + k);
	}
	return r < 0 ? r : (long)done;
}

static long crypt_write(void *fs, void *file, const void *buf, size_t n, uint64_t off)
{
	struct crypt *c = fs;
	struct crypt_file *f = file;
	int64_t size;
	int wt;
	int r = lower_size(c, f, &size, &wt);
	if (r < 0)
		return r;
	if (n == 0)
		return 0;
	/* A gap after the end reads as zeros: write them (sealed) first. */
	static const uint8_t zeros[CB];
	long w = 0;
	while (w >= 0 && (uint64_t)size < off) {
		size_t k = off - (uint64_t)size > CB ? CB : (size_t)(off - (uint64_t)size);
		w = put_range(c, f, zeros, k, (uint64_t)size, size);
		size += w > 0 ? w : 0;
	}
	if (w >= 0)
		w = put_range(c, f, buf, n, off, size);
	/* Durable already (O_SYNC, write-through): this mount must know. */
	if (w >= 0 && wt && (r = note_durable(c, f->id, c->counter)) < 0)
		return r;
	return w;
}

static int crypt_fsync(void *fs, void *file)
{
	struct crypt *c = fs;
	struct crypt_file *f = file;
	uint64_t now = c->counter;
	int r = c->s.below.ops->fsync ? c->s.below.ops->fsync(c->s.below.fs, f->sf.lower)
	                              : sync_below(c);
	return r < 0 || f->isdir ? r : note_durable(c, f->id, now);
}

static int crypt_sync(void *fs)
{
	return sync_all(fs);
}

static int crypt_truncate(void *fs, void *file, uint64_t len)
{
	struct crypt *c = fs;
	struct crypt_file *f = file;
	int64_t size;
	int wt;
	int r = lower_size(c, f, &size, &wt);
	if (r < 0)
		return r;
	if (len >= (uint64_t)size) {
		static const uint8_t zeros[CB];
		while (r == 0 && (uint64_t)size < len) {
			size_t k = len - (uint64_t)size > CB ? CB : (size_t)(len - (uint64_t)size);
			long w = put_range(c, f, zeros, k, (uint64_t)size, size);
			r = w < 0 ? (int)w : 0;
			size += w > 0 ? w : 0;
		}
	} else {
		if (len > 0) {
			/* The new last block: stored again, shorter and marked
			 * last.  The truncation below may lose the bytes past its
			 * new end (the rest of the file system's block is zeroed
			 * in place) even when a power cut then loses the new size,
			 * so the version the old size needs must lie before that
			 * end - in slot 0 - and the new one in slot 1, durable
			 * before the new size can be.  Everything is made durable
			 * first, the newest version copied into slot 0 if it is in
			 * slot 1 (and made durable), then the short one goes to
			 * slot 1: up to three fsyncs, for a truncation that keeps
			 * part of a file.  (pcwork -w rewrite, cut at every
			 * request, found both.) */
			uint64_t b = (len - 1) / CB;
			int cur = 0;
			uint64_t gen;
			r = crypt_fsync(fs, file);
			if (r == 0)
				r = get_raw(c, f, b, 1, size);
			if (r == 0 && (cur = pick(f, b, size, c->io, c->pt, &gen)) < 0)
				r = -EBADMSG;
			if (r == 0 && f->fmt == 3 && cur == 1) {
				r = put_blocks(c, f, b, 1, size, (uint64_t)size, c->pt, &cur, &gen);
				if (r == 0)
					r = crypt_fsync(fs, file);
				cur = 0;
				gen++;
			}
			if (r == 0)
				r = put_blocks(c, f, b, 1, size, len, c->pt, &cur, &gen);
			if (r == 0)
				r = crypt_fsync(fs, file);
		}
		if (r == 0)
			r = c->s.below.ops->truncate(c->s.below.fs, f->sf.lower, stored_size(f->fmt, len));
	}
	if (r == 0 && wt)
		r = note_durable(c, f->id, c->counter);
	return r;
}


/* ---- files and names ---------------------------------------------------------------- */

/* The file's key from the master key and its id; since format 2 also
 * from its rounds, so that no key serves two ciphers. */
static void file_key(struct crypt *c, struct crypt_file *f)
{
	uint8_t info[21] = "file";
	memcpy(info + 4, f->id, 16);
	info[20] = (uint8_t)f->rounds;
	hkdf_expand(c->master, info, f->fmt == 1 ? 20 : 21, f->key, 32);
}

static int rounds_ok(int r)
{
	return r == 8 || r == 12 || r == 20;
}

/* A file's format from its header's magic: 3 ("EXCRYPT3": two slots per
 * block), 2 (one slot), 1 (one slot, ChaCha20, the first version of this
 * layer); 0 for anything else. */
static int header_format(const uint8_t hdr[8])
{
	if (memcmp(hdr, "EXCRYPT", 7) != 0)
		return 0;
	return hdr[7] == '3' ? 3 : hdr[7] == '2' ? 2 : hdr[7] == '1' ? 1 : 0;
}

/* A file's header: the magic, the id, the rounds (format 1: ChaCha20).
 * Formats 1 and 2 still read and write.  -EBADMSG for anything else. */
static int parse_header(struct crypt_file *f, const uint8_t hdr[CHDR])
{
	memcpy(f->id, hdr + 8, 16);
	f->fmt = header_format(hdr);
	f->rounds = f->fmt == 1 ? 20 : hdr[24];
	return f->fmt != 0 && rounds_ok(f->rounds) ? 0 : -EBADMSG;
}

static int crypt_open(void *fs, const char *path, int flags, uint32_t perm, void **file)
{
	struct crypt *c = fs;
	struct crypt_file *f = *file;
	const char *lp;
	int r = cpath(c, 0, path, &lp);
	/* Truncation keeps the header (and so the file's id and key, which
	 * other open handles of the file hold): done below, after reading it. */
	if (r == 0)
		r = stack_open_lower(&c->s, lp, flags & ~LIBFS_O_TRUNC, perm, &f->sf);
	if (r < 0)
		return r;
	struct libfs_stat st;
	r = c->s.below.ops->fstat(c->s.below.fs, f->sf.lower, &st);
	f->isdir = r == 0 && st.type == LIBFS_T_DIR;
	if (r < 0 || f->isdir)
		return r < 0 ? (stack_close(fs, f), r) : 0;
	uint8_t hdr[CHDR];
	f->osync = (flags & LIBFS_O_SYNC) != 0;
	f->fmt = 3;
	if (st.size == 0 && (flags & LIBFS_O_WRITE)) {
		/* New (or truncated): a header with a fresh id. */
		memset(hdr, 0, sizeof hdr);
		memcpy(hdr, "EXCRYPT3", 8);
		fresh(c, hdr + 8);
		hdr[24] = (uint8_t)c->rounds;
		r = parse_header(f, hdr);
		long w = c->s.below.ops->write(c->s.below.fs, f->sf.lower, hdr, CHDR, 0);
		r = w < 0 ? (int)w : w != CHDR ? -EIO : r;
	} else if (st.size == 0) {
		memset(f->id, 0, sizeof f->id);         /* empty: nothing to read */
		f->rounds = c->rounds;
	} else {
		long n = c->s.below.ops->read(c->s.below.fs, f->sf.lower, hdr, CHDR, 0);
		r = n < 0 ? (int)n : n != CHDR ? -EBADMSG : parse_header(f, hdr);
	}
	if (r == 0 && (flags & LIBFS_O_TRUNC) && st.size > CHDR)
		r = c->s.below.ops->truncate(c->s.below.fs, f->sf.lower, CHDR);
	if (r < 0) {
		stack_close(fs, f);
		return r;
	}
	file_key(c, f);
	return 0;
}

static void fix_stat(int fmt, struct libfs_stat *st)
{
	if (st->type == LIBFS_T_REG) {
		int64_t n = plain_size(fmt, st->size);
		st->size = n < 0 ? 0 : (uint64_t)n;
	}
}

/* The size of a file by name needs its format: its header's magic. */
static int crypt_stat(void *fs, const char *path, struct libfs_stat *st)
{
	struct crypt *c = fs;
	const char *lp;
	int r = cpath(c, 0, path, &lp);
	if (r == 0)
		r = c->s.below.ops->stat(c->s.below.fs, lp, st);
	if (r < 0 || st->type != LIBFS_T_REG || st->size == 0)
		return r;
	struct stack_file sf = { 0 };
	uint8_t magic[8] = { 0 };
	r = stack_open_lower(&c->s, lp, LIBFS_O_READ, 0, &sf);
	if (r < 0)
		return r;
	long n = c->s.below.ops->read(c->s.below.fs, sf.lower, magic, sizeof magic, 0);
	stack_close(&c->s, &sf);
	if (n < 0)
		return (int)n;
	fix_stat(header_format(magic), st);
	return 0;
}

static int crypt_fstat(void *fs, void *file, struct libfs_stat *st)
{
	struct crypt *c = fs;
	struct crypt_file *f = file;
	int r = c->s.below.ops->fstat(c->s.below.fs, f->sf.lower, st);
	if (r == 0)
		fix_stat(f->fmt, st);
	return r;
}

#define CRYPT_NAME_OP(name) \
	static int crypt_##name(void *fs, const char *path) \
	{ \
		struct crypt *c = fs; \
		const char *lp; \
		int r = cpath(c, 0, path, &lp); \
		if (r == 0 && c->s.below.ops->name == NULL) \
			return -ENOTSUP; \
		return r < 0 ? r : c->s.below.ops->name(c->s.below.fs, lp); \
	}
CRYPT_NAME_OP(unlink)
CRYPT_NAME_OP(rmdir)

static int crypt_mkdir(void *fs, const char *path, uint32_t perm)
{
	struct crypt *c = fs;
	const char *lp;
	int r = cpath(c, 0, path, &lp);
	if (r == 0 && c->s.below.ops->mkdir == NULL)
		return -ENOTSUP;
	return r < 0 ? r : c->s.below.ops->mkdir(c->s.below.fs, lp, perm);
}

static int crypt_rename(void *fs, const char *from, const char *to)
{
	struct crypt *c = fs;
	const char *a, *b;
	int r = cpath(c, 0, from, &a);
	if (r == 0)
		r = cpath(c, 1, to, &b);
	if (r == 0 && c->s.below.ops->rename == NULL)
		return -ENOTSUP;
	return r < 0 ? r : c->s.below.ops->rename(c->s.below.fs, a, b);
}

static int crypt_readdir(void *fs, void *dir, uint64_t *cookie, struct libfs_dirent *de)
{
	struct crypt *c = fs;
	struct crypt_file *f = dir;
	for (;;) {
		int r = c->s.below.ops->readdir(c->s.below.fs, f->sf.lower, cookie, de);
		if (r <= 0)
			return r;
		char plain[LIBFS_NAME_MAX + 1];
		r = name_open(c, de->name, plain);
		if (r == -ENOENT)
			continue;                 /* .crypt, or not one of ours */
		if (r < 0)
			return r;
		strcpy(de->name, plain);
		return 1;
	}
}

/* ---- mounting ------------------------------------------------------------------- */

/* The directory's .crypt file, 80 bytes: "EXCRYPT2", a check value of
 * the key (32), the epoch (8), the rounds new files get (1, then 7 zero
 * bytes), and an HMAC of the 56 before it under the master key, so that a
 * changed epoch or cipher is refused.  A format 1 record (48 bytes:
 * magic, check, epoch) is read and rewritten as format 2.  `want` is the
 * cipher= option's rounds, 0 for none: it replaces the recorded choice. */
static int meta(struct crypt *c, int want)
{
	struct stack_file mf = { 0 };
	const char *lp;
	int r = stack_paths(&c->s, META, NULL);
	if (r < 0)
		return r;
	lp = c->s.p[0];
	r = stack_open_lower(&c->s, lp, LIBFS_O_READ | LIBFS_O_WRITE | LIBFS_O_CREAT, 0600, &mf);
	if (r < 0)
		return r;
	uint8_t rec[METALEN + 1], check[32], mac[32];
	hmac256(c->master, 32, "exodisk crypt key check", 23, check);
	long n = c->s.below.ops->read(c->s.below.fs, mf.lower, rec, sizeof rec, 0);
	int v1 = n == 48 && memcmp(rec, "EXCRYPT1", 8) == 0;
	if (n == 0) {
		memcpy(rec + 8, check, 32);
		stack_put_le64(rec + 40, 0);
		rec[48] = ROUNDS;
	} else if (n < 0) {
		r = (int)n;
	} else if (!v1 && (n != METALEN || memcmp(rec, "EXCRYPT2", 8) != 0)) {
		r = -EBADMSG;                    /* not a .crypt this layer wrote */
	} else if (!crypto_equal(rec + 8, check, 32)) {
		r = -EACCES;                     /* the wrong key */
	} else if (v1) {
		rec[48] = ROUNDS;                /* from now on, format 2 */
	} else {
		hmac256(c->master, 32, rec, 56, mac);
		if (!crypto_equal(mac, rec + 56, 24) || !rounds_ok(rec[48]))
			r = -EBADMSG;
	}
	if (r == 0) {
		uint64_t epoch = stack_get_le64(rec + 40) + 1;
		if (epoch > 0xffffffffu)
			r = -EOVERFLOW;
		c->epoch = (uint32_t)epoch;
		c->rounds = want ? want : rec[48];
		memcpy(rec, "EXCRYPT2", 8);
		stack_put_le64(rec + 40, epoch);
		rec[48] = (uint8_t)c->rounds;
		memset(rec + 49, 0, 7);
		hmac256(c->master, 32, rec, 56, mac);
		memcpy(rec + 56, mac, 24);
	}
	/* The new epoch is durable before any nonce uses it. */
	if (r == 0) {
		n = c->s.below.ops->write(c->s.below.fs, mf.lower, rec, METALEN, 0);
		r = n < 0 ? (int)n : 0;
	}
	if (r == 0)
		r = c->s.below.ops->fsync ? c->s.below.ops->fsync(c->s.below.fs, mf.lower)
		                          : c->s.below.ops->sync(c->s.below.fs);
	int e = stack_close(&c->s, &mf);
	return r < 0 ? r : e;
}

static int crypt_mount(const char *opts, void **fs)
{
	char key[256], cipher[16];
	if (libfs_opt(opts, "key", key, sizeof key) != 1 || key[0] == 0)
		return -EINVAL;                  /* key=SECRET is required */
	int want = 0;                            /* cipher=chacha8|chacha12|chacha20 */
	if (libfs_opt(opts, "cipher", cipher, sizeof cipher) == 1) {
		want = strcmp(cipher, "chacha8") == 0 ? 8 : strcmp(cipher, "chacha12") == 0 ? 12
		     : strcmp(cipher, "chacha20") == 0 ? 20 : -1;
		if (want < 0)
			return -EINVAL;
	}
	int r = stack_mount(opts, sizeof(struct crypt), fs);
	if (r < 0)
		return r;
	struct crypt *c = *fs;
	hkdf_extract("exodisk crypt v1", 16, key, strlen(key), c->master);
	hkdf_expand(c->master, "names", 5, c->name_key, 32);
	hkdf_expand(c->master, "name authentication", 19, c->name_mac, 32);
	/* Stored names are base64url of 12 + n bytes. */
	uint32_t below = c->s.name_max;
	c->s.name_max = below * 3 / 4 > SIVLEN ? below * 3 / 4 - SIVLEN : 0;
	if (c->s.file_max != 0)
		c->s.file_max = (c->s.file_max - CHDR) / l_pair(3) * CB;
	c->io = malloc(CBATCH * l_pair(3));
	c->pt = malloc(CBATCH * CB);
	r = c->io == NULL || c->pt == NULL ? -ENOMEM : c->s.name_max == 0 ? -ENAMETOOLONG : meta(c, want);
	if (r < 0) {
		free(c->io);
		free(c->pt);
		stack_unmount(c);
		return r;
	}
	return 0;
}

/* Slots of this mount are durable once it is gone (durable()): sync. */
static int crypt_unmount(void *fs)
{
	struct crypt *c = fs;
	int r = crypt_sync(fs);
	free(c->io);
	free(c->pt);
	memset(c->master, 0, sizeof c->master);
	int e = stack_unmount(fs);
	return r < 0 ? r : e;
}

static void crypt_abandon(void *fs)
{
	struct crypt *c = fs;
	free(c->io);
	free(c->pt);
	stack_abandon(fs);
}

STACK_LAYER_BEGIN
const struct libfs_ops crypt_ops = {
	STACK_BYPASS,
	.name = "crypt",
	.name_max = LIBFS_NAME_MAX * 3 / 4 - SIVLEN,
	.mount = crypt_mount,
	.unmount = crypt_unmount,
	.abandon = crypt_abandon,
	.open = crypt_open,
	.read = crypt_read,
	.write = crypt_write,
	.truncate = crypt_truncate,
	.fsync = crypt_fsync,
	.sync = crypt_sync,
	.stat = crypt_stat,
	.fstat = crypt_fstat,
	.unlink = crypt_unlink,
	.rmdir = crypt_rmdir,
	.mkdir = crypt_mkdir,
	.rename = crypt_rename,
	.readdir = crypt_readdir,
	.file_size = sizeof(struct crypt_file),
};
STACK_LAYER_END
