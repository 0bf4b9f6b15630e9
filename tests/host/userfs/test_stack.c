/*
 * test_stack.c - stackable layers (libos/stack/stack.h) on the host, over
 * unixfs and kvfs on one test disk:
 *
 *   - every operation of the table is described and passed down (the
 *     build checks the description is complete; here, that each layer
 *     built with STACK_BYPASS gets a bypass for every described one);
 *   - the generic suite (userfs/fssuite.c) through every layer and every
 *     stack of two layers, over unixfs (a directory inside it) and over
 *     kvfs (its root), "remount" being a clean reboot of the machine;
 *   - ten null layers deep;
 *   - the mount table's rules: a layer needs over=, cannot be over itself,
 *     holds the mount below (it cannot be unmounted first), and the
 *     shutdown unmounts layers before what is below them;
 *   - coherence: a file open through a layer and directly below at once
 *     shows the same bytes both ways, whichever side writes.
 */
#include <errno.h>
#include <string.h>
#include "libos/stack/crypto.h"
#include "libos/stack/stack.h"
#include "tests/host/userfs/ufsfix.h"
#include "userfs/fssuite.h"
#include "userfs/fatfs/fatfs.h"
#include "userfs/kvfs/kvfs.h"

static struct ufx u;

#define CK "key=test-secret-0123456789abcdef"

/* The stack under test: mounts made, in order, so they can be remade. */
#define MAXM 14
static struct { char prefix[32], type[16], opts[96]; } stk[MAXM];
static int nstk;

static void push(const char *prefix, const char *type, const char *opts)
{
	snprintf(stk[nstk].prefix, sizeof stk[nstk].prefix, "%s", prefix);
	snprintf(stk[nstk].type, sizeof stk[nstk].type, "%s", type);
	snprintf(stk[nstk].opts, sizeof stk[nstk].opts, "%s", opts);
	CHECK_EQ(vfs_mount(prefix, type, opts, 1), 0);
	nstk++;
}

static void pop_all(void)
{
	while (nstk > 0) {
		nstk--;
		CHECK_EQ(vfs_umount(stk[nstk].prefix), 0);
	}
}

/* fssuite's remount: take the whole stack down, reboot, build it again. */
static int remount(void *arg)
{
	(void)arg;
	for (int i = nstk - 1; i >= 0; i--) {
		int r = vfs_umount(stk[i].prefix);
		if (r < 0)
			return r;
	}
	ufx_reboot(&u);
	for (int i = 0; i < nstk; i++) {
		int r = vfs_mount(stk[i].prefix, stk[i].type, stk[i].opts, 1);
		if (r < 0)
			return r;
	}
	return 0;
}

static int suite(const char *root, const char *what)
{
	struct libfs_ops eff;
	CHECK_EQ(stack_effective(root, &eff), 0);
	struct fssuite s = { .root = root, .remount = remount };
	fssuite_adapt(&s, &eff, 300 * 1024 + 77);
	printf("-- fssuite on %s\n", what);
	int failed = fssuite_run(&s);
	int skipped = !(eff.features & LIBFS_F_DIRS) + !(eff.features & LIBFS_F_RENAME) +
	              !!(eff.features & LIBFS_F_ATOMIC);
	CHECK_EQ(s.passed, 11 - skipped);
	return failed;
}

/* Mount `layer` (plus its options) at prefix over `over`. */
static void layer(const char *prefix, const struct libfs_ops *t, const char *over)
{
	char opts[96];
	snprintf(opts, sizeof opts, "over=%s%s", over,
	         strcmp(t->name, "crypt") == 0 ? ",key=test-secret-0123456789abcdef" : "");
	push(prefix, t->name, opts);
}

/* The bases: unixfs's directory /u/base, kvfs's root, and fatfs's
 * directory /fat/base (one layer only: the stacks of two over unixfs and
 * kvfs cover the pairs). */
static const char *const bases[] = { "/u/base", "/kv", "/fat/base" };

static void one_and_two(void)
{
	const struct libfs_ops *a, *b;
	for (int k = 0; k < 3; k++) {
		for (int i = 0; (a = libfs_layer_at(i)) != NULL; i++) {
			if (strcmp(a->name, "ro") == 0)
				continue;             /* refuses writes by design: below */
			push("/u", "unixfs", "key=suite");
			push("/kv", "kvfs", "key=suite");
			push("/fat", "fatfs", "key=fat");
			layer("/L1", a, bases[k]);
			char what[80];
			snprintf(what, sizeof what, "%s over %s", a->name, bases[k]);
			CHECK_EQ(suite("/L1", what), 0);
			for (int j = 0; k < 2 && (b = libfs_layer_at(j)) != NULL; j++) {
				if (strcmp(b->name, "ro") == 0)
					continue;
				if (k == 1 && strcmp(a->name, "crypt") == 0 && strcmp(b->name, "crypt") == 0) {
					/* kvfs's 39-byte names hold 17 bytes through one
					 * crypt and nothing through two: refused. */
					CHECK_EQ(vfs_mount("/L2", "crypt", "over=/L1," CK, 1), -ENAMETOOLONG);
					continue;
				}
				layer("/L2", b, "/L1");
				snprintf(what, sizeof what, "%s over %s over %s", b->name, a->name, bases[k]);
				CHECK_EQ(suite("/L2", what), 0);
				nstk--;
				CHECK_EQ(vfs_umount("/L2"), 0);
				vfs_unlink("/L1/.crypt");     /* crypt's, left for the next */
			}
			nstk--;
			CHECK_EQ(vfs_umount("/L1"), 0);
			char meta[32];
			snprintf(meta, sizeof meta, "%s/.crypt", bases[k]);
			vfs_unlink(meta);
			pop_all();
		}
	}
}

static void ten_deep(void)
{
	push("/u", "unixfs", "key=suite");
	char prev[16] = "/u/base", name[16];
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof name, "/n%d", i);
		char opts[32];
		snprintf(opts, sizeof opts, "over=%s", prev);
		push(name, "null", opts);
		strcpy(prev, name);
	}
	CHECK_EQ(suite("/n9", "ten null layers over unixfs"), 0);
	/* Not from the bottom up: each holds the one below. */
	CHECK_EQ(vfs_umount("/u"), -EBUSY);
	CHECK_EQ(vfs_umount("/n4"), -EBUSY);
	/* Shutdown takes them all down, top first, whatever the table order. */
	CHECK_EQ(vfs_shutdown(), 0);
	nstk = 0;
	for (int i = 9; i >= 0; i--) {
		snprintf(name, sizeof name, "/n%d", i);
		CHECK_EQ(vfs_umount(name), 0);
	}
	CHECK_EQ(vfs_umount("/u"), 0);
}

static void rules(void)
{
	CHECK_EQ(vfs_mount("/x", "null", "", 1), -EINVAL);                /* no over= */
	CHECK_EQ(vfs_mount("/x", "null", "over=/x", 1), -ELOOP);          /* itself */
	CHECK_EQ(vfs_mount("/x", "null", "over=/x/y", 1), -ELOOP);
	CHECK_EQ(vfs_mount("/x", "null", "over=/nowhere", 1), -ENOENT);   /* nothing there */
	push("/u", "unixfs", "key=suite");
	CHECK_EQ(vfs_mount("/x", "null", "over=/u/nothing", 1), -ENOENT);
	struct vfile *f;
	CHECK_EQ(vfs_open("/u/plain", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(vfs_mount("/x", "null", "over=/u/plain", 1), -ENOTDIR);
	CHECK_EQ(vfs_unlink("/u/plain"), 0);
	/* A lazy layer mounts (and holds) what is below on first use. */
	CHECK_EQ(vfs_mount("/lazy", "null", "over=/u/base", 0), 0);
	struct libfs_stat st;
	CHECK_EQ(vfs_stat("/lazy", &st), 0);
	CHECK_EQ(st.type, LIBFS_T_DIR);
	CHECK_EQ(vfs_umount("/u"), -EBUSY);
	CHECK_EQ(vfs_release_idle(), 0);       /* layer first, then unixfs */
	CHECK_EQ(vfs_umount("/u"), -EBUSY);    /* still named below a layer of the table */
	CHECK_EQ(vfs_umount("/lazy"), 0);
	pop_all();
}

/* Every described operation of a layer built with STACK_BYPASS (ro) or
 * STACK_PASS (null) that it does not set itself is the generic bypass. */
#define CHECK_BYPASS(ret, name, ...) CHECK(ro_ops.name == stack_bypass_##name || \
                                           strcmp(#name, "unlink") == 0 || \
                                           strcmp(#name, "rmdir") == 0 || \
                                           strcmp(#name, "mkdir") == 0 || \
                                           strcmp(#name, "rename") == 0);
#define CHECK_PASS(ret, name, ...) CHECK(null_ops.name == stack_pass_##name);
extern const struct libfs_ops null_ops, ro_ops;
static void described(void)
{
	STACK_BYPASS_OPS(CHECK_BYPASS)
	STACK_BYPASS_OPS(CHECK_PASS)
	CHECK(null_ops.mkfs == NULL && null_ops.fsck == NULL);
	CHECK_EQ(libfs_check_ops(&null_ops), 0);
	for (int i = 0; libfs_layer_at(i) != NULL; i++) {
		CHECK_EQ(libfs_check_ops(libfs_layer_at(i)), 0);
		CHECK(libfs_type(libfs_layer_at(i)->name) == libfs_layer_at(i));
	}
	for (int i = 0; libfs_type_at(i) != NULL; i++)      /* layers are not file systems */
		CHECK(libfs_type_at(i)->mkfs != NULL);
}

static void put(const char *p, const char *s, uint64_t off)
{
	struct vfile *f;
	CHECK_EQ(vfs_open(p, LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	CHECK_EQ(vfs_pwrite(f, s, strlen(s), off), (long)strlen(s));
	CHECK_EQ(vfs_close(f), 0);
}

/* Two handles through the layer relate as two handles directly below do:
 * over unixfs (one cache for all handles) a write through either is seen
 * through the other at once; over kvfs (each handle has its own copy
 * until close: LIBFS_F_ATOMIC) only from close to open - with or without
 * a layer.  `shared` says which. */
static void coherence(const char *type, const char *base, const char *below_name, int shared)
{
	push("/u", "unixfs", "key=suite");
	push("/kv", "kvfs", "key=suite");
	char opts[64], up[64], down[64];
	snprintf(opts, sizeof opts, "over=%s", base);
	push("/top", type, opts);
	snprintf(up, sizeof up, "/top/%s", below_name);
	snprintf(down, sizeof down, "%s/%s", base, below_name);
	struct vfile *a, *b;
	char buf[64];
	put(up, "written above", 0);
	if (!shared) {
		CHECK_EQ(vfs_open(down, LIBFS_O_READ, 0, &b), 0);
		memset(buf, 0, sizeof buf);
		CHECK_EQ(vfs_pread(b, buf, sizeof buf, 0), 13);
		CHECK(memcmp(buf, "written above", 13) == 0);
		CHECK_EQ(vfs_close(b), 0);
		put(down, "BELOW", 8);
		CHECK_EQ(vfs_open(up, LIBFS_O_READ, 0, &a), 0);
		memset(buf, 0, sizeof buf);
		CHECK_EQ(vfs_pread(a, buf, sizeof buf, 0), 13);
		CHECK(memcmp(buf, "written BELOW", 13) == 0);
		CHECK_EQ(vfs_close(a), 0);
		CHECK_EQ(vfs_unlink(up), 0);
		pop_all();
		return;
	}
	CHECK_EQ(vfs_open(up, LIBFS_O_READ | LIBFS_O_WRITE, 0, &a), 0);
	CHECK_EQ(vfs_open(down, LIBFS_O_READ | LIBFS_O_WRITE, 0, &b), 0);
	memset(buf, 0, sizeof buf);
	CHECK_EQ(vfs_pread(b, buf, sizeof buf, 0), 13);
	CHECK(memcmp(buf, "written above", 13) == 0);
	/* Below writes while above has the file open: above sees it at once. */
	CHECK_EQ(vfs_pwrite(b, "BELOW", 5, 8), 5);
	memset(buf, 0, sizeof buf);
	CHECK_EQ(vfs_pread(a, buf, sizeof buf, 0), 13);
	CHECK(memcmp(buf, "written BELOW", 13) == 0);
	/* And the other way, growing it. */
	CHECK_EQ(vfs_pwrite(a, "++", 2, 13), 2);
	struct libfs_stat sa, sb;
	CHECK_EQ(vfs_fstat(b, &sb), 0);
	CHECK_EQ(sb.size, 15);
	CHECK_EQ(vfs_ftruncate(b, 4), 0);
	CHECK_EQ(vfs_fstat(a, &sa), 0);
	CHECK_EQ(sa.size, 4);
	CHECK_EQ(vfs_close(a), 0);
	CHECK_EQ(vfs_close(b), 0);
	/* Names: made below, listed above; removed above, gone below. */
	char other[64];
	snprintf(other, sizeof other, "%s/made-below", base);
	put(other, "x", 0);
	CHECK_EQ(vfs_stat("/top/made-below", &sa), 0);
	CHECK_EQ(vfs_unlink("/top/made-below"), 0);
	CHECK_EQ(vfs_stat(other, &sa), -ENOENT);
	CHECK_EQ(vfs_unlink(up), 0);
	pop_all();
}

/* ---- crypt: what it must refuse ------------------------------------------------ */


/* The stored name of the one file in /u/base/c (besides .crypt). */
static void stored_name(char *out)
{
	struct vfile *d;
	struct libfs_dirent de;
	out[0] = 0;
	CHECK_EQ(vfs_open("/u/base/c", LIBFS_O_READ | LIBFS_O_DIR, 0, &d), 0);
	while (vfs_readdir(d, &de) == 1)
		if (de.name[0] != '.' && strcmp(de.name, "c") != 0)
			sprintf(out, "/u/base/c/%s", de.name);
	CHECK_EQ(vfs_close(d), 0);
	CHECK(out[0] != 0);
}

static void fill(uint8_t *p, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + (size_t)seed * 7 + i / 251);
}

/* Write `n` bytes of pattern `seed` as /s/NAME through crypt; check they
 * read back. */
static void cput(const char *name, size_t n, int seed)
{
	static uint8_t buf[3 * 4096 + 100], got[sizeof buf];
	char p[64];
	snprintf(p, sizeof p, "/s/%s", name);
	fill(buf, n, seed);
	struct vfile *f;
	CHECK_EQ(vfs_open(p, LIBFS_O_WRITE | LIBFS_O_READ | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &f), 0);
	CHECK_EQ(vfs_write(f, buf, n), (long)n);
	CHECK_EQ(vfs_pread(f, got, sizeof got, 0), (long)n);
	CHECK(memcmp(buf, got, n) == 0);
	CHECK_EQ(vfs_close(f), 0);
}

static long cread(const char *name)
{
	static uint8_t got[4 * 4096];
	char p[64];
	snprintf(p, sizeof p, "/s/%s", name);
	struct vfile *f;
	long r = vfs_open(p, LIBFS_O_READ, 0, &f);
	if (r < 0)
		return r;
	long total = 0;
	while ((r = vfs_read(f, got, sizeof got)) > 0)
		total += r;
	vfs_close(f);
	return r < 0 ? r : total;
}

#define STORED 4124          /* format 1, 2: a stored block: nonce, 4096 bytes, tag */
#define SLOT 4132            /* format 3: a slot: nonce, generation, 4096 bytes, tag */
#define PAIR (2 * SLOT)      /* format 3: a block's two slots */
#define HDR 32

/* Copy n stored bytes at `from` in file a to `to` in file b (directly below). */
static void splice(const char *a, uint64_t from, const char *b, uint64_t to, size_t n)
{
	static uint8_t buf[2 * PAIR];
	struct vfile *fa, *fb;
	CHECK_EQ(vfs_open(a, LIBFS_O_READ, 0, &fa), 0);
	CHECK_EQ(vfs_pread(fa, buf, n, from), (long)n);
	CHECK_EQ(vfs_close(fa), 0);
	CHECK_EQ(vfs_open(b, LIBFS_O_WRITE, 0, &fb), 0);
	CHECK_EQ(vfs_pwrite(fb, buf, n, to), (long)n);
	CHECK_EQ(vfs_close(fb), 0);
}


static void crypt_refuses(void)
{
	push("/u", "unixfs", "key=suite");
	CHECK_EQ(vfs_mkdir("/u/base/c", 0755), 0);
	CHECK_EQ(vfs_mount("/s", "crypt", "over=/u/base/c", 1), -EINVAL);     /* no key */
	push("/s", "crypt", "over=/u/base/c," CK);
	cput("a-secret-name", 3 * 4096 + 100, 1);
	/* Names and contents are not there in the clear. */
	char la[300];
	stored_name(la);
	CHECK(strstr(la, "secret") == NULL);
	struct libfs_stat st;
	CHECK_EQ(vfs_stat(la, &st), 0);
	CHECK_EQ(st.size, HDR + 3 * PAIR + SLOT + 100 + 36);
	CHECK_EQ(vfs_stat("/s/a-secret-name", &st), 0);
	CHECK_EQ(st.size, 3 * 4096 + 100);
	/* The wrong key is refused at mount; the right one reads it back. */
	nstk--;
	CHECK_EQ(vfs_umount("/s"), 0);
	CHECK_EQ(vfs_mount("/s", "crypt", "over=/u/base/c,key=not-the-key", 1), -EACCES);
	push("/s", "crypt", "over=/u/base/c," CK);
	CHECK_EQ(cread("a-secret-name"), 3 * 4096 + 100);

	/* A flipped bit of ciphertext. */
	uint8_t b;
	struct vfile *f;
	CHECK_EQ(vfs_open(la, LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_pread(f, &b, 1, HDR + PAIR + 20 + 77), 1);
	b ^= 0x10;
	CHECK_EQ(vfs_pwrite(f, &b, 1, HDR + PAIR + 20 + 77), 1);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(cread("a-secret-name"), -EBADMSG);
	cput("a-secret-name", 3 * 4096 + 100, 1);          /* rewritten: good again */
	CHECK_EQ(cread("a-secret-name"), 3 * 4096 + 100);

	/* Two blocks of one file swapped. */
	splice(la, HDR, la, HDR + PAIR, PAIR);
	CHECK_EQ(cread("a-secret-name"), -EBADMSG);
	cput("a-secret-name", 3 * 4096 + 100, 1);

	/* A block from another file with the same bytes at the same place. */
	stored_name(la);                                   /* the only file so far */
	cput("other", 3 * 4096 + 100, 1);
	char lo[300];
	struct vfile *d;
	struct libfs_dirent de;
	CHECK_EQ(vfs_open("/u/base/c", LIBFS_O_READ | LIBFS_O_DIR, 0, &d), 0);
	while (vfs_readdir(d, &de) == 1) {
		char p[300];
		snprintf(p, sizeof p, "/u/base/c/%s", de.name);
		if (de.name[0] != '.' && strcmp(p, la) != 0)
			strcpy(lo, p);
	}
	CHECK_EQ(vfs_close(d), 0)
;
	splice(lo, HDR + PAIR, la, HDR + PAIR, PAIR);
	CHECK_EQ(cread("a-secret-name"), -EBADMSG);
	CHECK_EQ(cread("other"), 3 * 4096 + 100);

	/* The end cut off by whole blocks. */
	cput("a-secret-name", 3 * 4096, 3);
	CHECK_EQ(vfs_open(la, LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_ftruncate(f, HDR + 2 * PAIR), 0);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(cread("a-secret-name"), -EBADMSG);

	/* A name changed below. */
	char renamed[300];
	strcpy(renamed, la);
	char *last = strrchr(renamed, '/') + 1;
	last[3] = last[3] == 'A' ? 'B' : 'A';
	CHECK_EQ(vfs_rename(la, renamed), 0);
	CHECK_EQ(vfs_open("/s", LIBFS_O_READ | LIBFS_O_DIR, 0, &d), 0);
	int r;
	while ((r = vfs_readdir(d, &de)) == 1)
		;
	CHECK_EQ(r, -EBADMSG);
	CHECK_EQ(vfs_close(d), 0);
	CHECK_EQ(vfs_unlink(renamed), 0);

	/* Writes in the middle, past the end, truncation: contents as a plain
	 * file would have them (fssuite checks more). */
	cput("mid", 10000, 4);
	CHECK_EQ(vfs_open("/s/mid", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_pwrite(f, "XYZ", 3, 4095), 3);
	CHECK_EQ(vfs_pwrite(f, "END", 3, 20000), 3);
	CHECK_EQ(vfs_ftruncate(f, 12288), 0);
	static uint8_t want[20003], got[20003];
	fill(want, 10000, 4);
	memcpy(want + 4095, "XYZ", 3);
	memset(want + 10000, 0, sizeof want - 10000);
	CHECK_EQ(vfs_pread(f, got, sizeof got, 0), 12288);
	CHECK(memcmp(want, got, 12288) == 0);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(vfs_unlink("/s/mid"), 0);
	CHECK_EQ(vfs_unlink("/s/other"), 0);
	pop_all();
}

/* ---- crypt: its formats ---------------------------------------------------------- */

static void read_below(const char *p, uint8_t *buf, size_t n, uint64_t off)
{
	struct vfile *f;
	CHECK_EQ(vfs_open(p, LIBFS_O_READ, 0, &f), 0);
	CHECK_EQ(vfs_pread(f, buf, n, off), (long)n);
	CHECK_EQ(vfs_close(f), 0);
}

static void write_below(const char *p, const uint8_t *buf, size_t n, uint64_t off)
{
	struct vfile *f;
	CHECK_EQ(vfs_open(p, LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_pwrite(f, buf, n, off), (long)n);
	CHECK_EQ(vfs_close(f), 0);
}

/* The rounds byte of the only file's header below /u/base/c. */
static int header_rounds(void)
{
	char la[300];
	uint8_t hdr[HDR];
	stored_name(la);
	read_below(la, hdr, HDR, 0);
	CHECK(memcmp(hdr, "EXCRYPT3", 8) == 0);
	return hdr[24];
}

/* Format 2 (ChaCha12 by default, cipher= for 8 or 20, recorded in .crypt
 * under a MAC) beside format 1 (ChaCha20, the layer's first version):
 * format 1 files and .crypt records still read and write; anything else is
 * refused. */
static long below_size_crypt(void)
{
	struct libfs_stat st;
	long r = vfs_stat("/u/base/c/.crypt", &st);
	return r < 0 ? r : (long)st.size;
}

static void crypt_formats(void)
{
	push("/u", "unixfs", "key=suite");
	CHECK_EQ(vfs_unlink("/u/base/c/.crypt"), 0);        /* crypt_refuses' directory, empty */
	CHECK_EQ(vfs_rmdir("/u/base/c"), 0);
	CHECK_EQ(vfs_mkdir("/u/base/c", 0755), 0);
	CHECK_EQ(vfs_mount("/s", "crypt", "over=/u/base/c,cipher=rot13," CK, 1), -EINVAL);
	push("/s", "crypt", "over=/u/base/c," CK);
	cput("f", 9000, 5);
	CHECK_EQ(header_rounds(), 12);
	uint8_t rec[80];
	CHECK_EQ(below_size_crypt(), 80);
	read_below("/u/base/c/.crypt", rec, 80, 0);
	CHECK(memcmp(rec, "EXCRYPT2", 8) == 0 && rec[48] == 12);
	pop_all();

	/* cipher= changes what new files get, and is remembered; the files
	 * made before keep theirs. */
	static const char *ciphers[] = { "chacha8", "chacha20" };
	static const int rounds[] = { 8, 20 };
	for (int i = 0; i < 2; i++) {
		char opts[128];
		snprintf(opts, sizeof opts, "over=/u/base/c,cipher=%s," CK, ciphers[i]);
		push("/u", "unixfs", "key=suite");
		push("/s", "crypt", opts);
		CHECK_EQ(cread("f"), 9000);
		CHECK_EQ(vfs_unlink("/s/f"), 0);
		cput("f", 9000, 6 + i);
		CHECK_EQ(header_rounds(), rounds[i]);
		pop_all();
	}
	push("/u", "unixfs", "key=suite");
	push("/s", "crypt", "over=/u/base/c," CK);
	CHECK_EQ(vfs_unlink("/s/f"), 0);
	cput("f", 9000, 8);
	CHECK_EQ(header_rounds(), 20);                  /* as recorded */
	nstk--;
	CHECK_EQ(vfs_umount("/s"), 0);

	/* A changed .crypt (its rounds here) is refused at mount. */
	read_below("/u/base/c/.crypt", rec, 80, 0);
	rec[48] = 8;
	write_below("/u/base/c/.crypt", rec, 80, 0);
	CHECK_EQ(vfs_mount("/s", "crypt", "over=/u/base/c," CK, 1), -EBADMSG);

	/* A format 1 .crypt (magic, key check, epoch) is taken and rewritten
	 * as format 2, with the epoch counted on. */
	uint8_t master[32], v1rec[48];
	const char *secret = strchr(CK, '=') + 1;
	hkdf_extract("exodisk crypt v1", 16, secret, strlen(secret), master);
	memcpy(v1rec, "EXCRYPT1", 8);
	hmac256(master, 32, "exodisk crypt key check", 23, v1rec + 8);
	memcpy(v1rec + 40, rec + 40, 8);
	struct vfile *f;
	CHECK_EQ(vfs_open("/u/base/c/.crypt", LIBFS_O_WRITE | LIBFS_O_TRUNC, 0, &f), 0);
	CHECK_EQ(vfs_pwrite(f, v1rec, 48, 0), 48);
	CHECK_EQ(vfs_close(f), 0);
	push("/s", "crypt", "over=/u/base/c," CK);
	CHECK_EQ(cread("f"), 9000);
	read_below("/u/base/c/.crypt", rec, 80, 0);
	CHECK(memcmp(rec, "EXCRYPT2", 8) == 0 && rec[48] == 12);
	CHECK_EQ(stack_get_le64(rec + 40), stack_get_le64(v1rec + 40) + 1);

	/* A format 1 file, written here the way the first version did: its
	 * header, and per block ChaCha20-Poly1305 under HKDF(master, "file" ||
	 * id), the id, index and last flag as associated data.  It reads, and
	 * a write into its middle keeps it format 1. */
	char la[300];
	static uint8_t plain[9000], stored[HDR + 3 * STORED], got[9000];
	stored_name(la);
	fill(plain, sizeof plain, 9);
	uint8_t id[16], info[20] = "file", fkey[32];
	for (int i = 0; i < 16; i++)
		id[i] = (uint8_t)(0xa0 + i);
	memcpy(info + 4, id, 16);
	CHECK_EQ(hkdf_expand(master, info, 20, fkey, 32), 0);
	memset(stored, 0, HDR);
	memcpy(stored, "EXCRYPT1", 8);
	memcpy(stored + 8, id, 16);
	size_t at = HDR;
	for (uint64_t b = 0; b * 4096 < sizeof plain; b++) {
		size_t len = sizeof plain - b * 4096 < 4096 ? sizeof plain - b * 4096 : 4096;
		uint8_t aad[25], *nonce = stored + at;
		memcpy(aad, id, 16);
		stack_put_le64(aad + 16, b);
		aad[24] = (b + 1) * 4096 >= sizeof plain;
		memset(nonce, 0, 12);
		nonce[0] = 0xff;                        /* an epoch no mount has used */
		nonce[4] = (uint8_t)b;
		aead_seal(fkey, nonce, aad, 25, plain + b * 4096, len, nonce + 12, nonce + 12 + len);
		at += 12 + len + 16;
	}
	CHECK_EQ(vfs_open(la, LIBFS_O_WRITE | LIBFS_O_TRUNC, 0, &f), 0);
	CHECK_EQ(vfs_pwrite(f, stored, at, 0), (long)at);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(vfs_open("/s/f", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_pread(f, got, sizeof got, 0), (long)sizeof got);
	CHECK(memcmp(got, plain, sizeof plain) == 0);
	CHECK_EQ(vfs_pwrite(f, "format one", 10, 5000), 10);
	memcpy(plain + 5000, "format one", 10);
	CHECK_EQ(vfs_pread(f, got, sizeof got, 0), (long)sizeof got);
	CHECK(memcmp(got, plain, sizeof plain) == 0);
	CHECK_EQ(vfs_close(f), 0);
	uint8_t hdr[HDR];
	read_below(la, hdr, HDR, 0);
	CHECK(memcmp(hdr, "EXCRYPT1", 8) == 0);

	/* A header of no known format, or with rounds ChaCha does not have. */
	hdr[7] = '4';
	write_below(la, hdr, HDR, 0);
	CHECK_EQ(cread("f"), -EBADMSG);
	memcpy(hdr, "EXCRYPT2", 8);
	hdr[24] = 9;
	write_below(la, hdr, HDR, 0);
	CHECK_EQ(cread("f"), -EBADMSG);
	CHECK_EQ(vfs_unlink("/s/f"), 0);
	pop_all();
}

/* ---- crypt: two slots per block ------------------------------------------------------ */

/* Flip a byte below: what a power cut leaves of a slot whose write it cut. */
static void flip(const char *p, uint64_t at)
{
	uint8_t b;
	read_below(p, &b, 1, at);
	b ^= 0x40;
	write_below(p, &b, 1, at);
}

/* Block 1 of /s/t read through crypt equals want (4096 bytes), or fails
 * with -EBADMSG when want is NULL. */
static void block1_is(struct vfile *f, const uint8_t *want)
{
	static uint8_t got[4096];
	long n = vfs_pread(f, got, sizeof got, 4096);
	if (want == NULL) {
		CHECK_EQ(n, -EBADMSG);
		return;
	}
	CHECK_EQ(n, 4096);
	CHECK(memcmp(got, want, 4096) == 0);
}

/* Version `to` of a file of n bytes is version `from` with len bytes at
 * off set to `byte`, written through f. */
static void change(struct vfile *f, uint8_t *to, const uint8_t *from, size_t n, size_t off,
                   int byte, size_t len)
{
	memcpy(to, from, n);
	memset(to + off, byte, len);
	CHECK_EQ(vfs_pwrite(f, to + off, len, off), (long)len);
}

/* A cut that tore the version at `at` below (a byte flipped) shows the
 * version before it, `older`; whole again, it shows `newer`. */
static void torn_shows(struct vfile *f, const char *below, uint64_t at, const uint8_t *older,
                       const uint8_t *newer)
{
	flip(below, at);
	block1_is(f, older);
	flip(below, at);
	block1_is(f, newer);
}

/* Format 3 keeps two slots per block: a new version goes to the slot not
 * holding the newest, when the newest is durable (fsync, sync, another
 * mount's), else over the newest, whose version nothing acknowledged.  So
 * a rewrite cut short - here a byte of its slot changed below - leaves the
 * version before it, and never the last durable one lost. */
static void crypt_slots(void)
{
	static uint8_t v[5][10000];
	char la[300];
	struct vfile *f;
	push("/u", "unixfs", "key=suite");
	push("/s", "crypt", "over=/u/base/c," CK);
	fill(v[0], sizeof v[0], 11);
	CHECK_EQ(vfs_open("/s/t", LIBFS_O_READ | LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	CHECK_EQ(vfs_pwrite(f, v[0], sizeof v[0], 0), (long)sizeof v[0]);
	CHECK_EQ(vfs_fsync(f), 0);
	stored_name(la);
	uint64_t slot0 = HDR + PAIR + 20 + 77, slot1 = slot0 + SLOT;   /* block 1's */

	/* v1, v2: two rewrites of block 1 after the fsync, none between: both
	 * in slot 1, slot 0 keeps v0. */
	change(f, v[1], v[0], sizeof v[0], 4096 + 10, 'a', 100);
	change(f, v[2], v[1], sizeof v[0], 4096 + 500, 'b', 3000);
	block1_is(f, v[2] + 4096);
	torn_shows(f, la, slot1, v[0] + 4096, v[2] + 4096);   /* v0: the durable version */

	/* fsync, then v3: slot 1 is durable, so v3 goes to slot 0. */
	CHECK_EQ(vfs_fsync(f), 0);
	memcpy(v[3], v[2], sizeof v[0]);
	memset(v[3] + 4096, 'c', 4096);                   /* the whole block */
	CHECK_EQ(vfs_pwrite(f, v[3] + 4096, 4096, 4096), 4096);
	torn_shows(f, la, slot0, v[2] + 4096, v[3] + 4096);
	CHECK_EQ(vfs_close(f), 0);

	/* Closed and opened again in the same mount, no fsync: v3 is not
	 * durable, v4 goes over it.  Then, both slots changed: -EBADMSG. */
	CHECK_EQ(vfs_open("/s/t", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	change(f, v[4], v[3], sizeof v[0], 5000, 'd', 10);
	flip(la, slot0);
	block1_is(f, v[2] + 4096);
	flip(la, slot1);
	block1_is(f, NULL);
	flip(la, slot1);
	flip(la, slot0);
	CHECK_EQ(vfs_close(f), 0);

	/* Another mount (a new epoch): what the last one sealed is durable
	 * (it synced when it let go), so a rewrite takes the other slot. */
	nstk--;
	CHECK_EQ(vfs_umount("/s"), 0);
	push("/s", "crypt", "over=/u/base/c," CK);
	CHECK_EQ(vfs_open("/s/t", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	block1_is(f, v[4] + 4096);
	CHECK_EQ(vfs_pwrite(f, "e", 1, 4096), 1);
	flip(la, slot1);
	block1_is(f, v[4] + 4096);
	flip(la, slot1);
	static uint8_t all[10000];
	v[4][4096] = 'e';
	CHECK_EQ(vfs_pread(f, all, sizeof all, 0), (long)sizeof all);
	CHECK(memcmp(all, v[4], sizeof all) == 0);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(vfs_unlink("/s/t"), 0);
	pop_all();
}

/* ---- compress ---------------------------------------------------------------------- */

static uint64_t below_size(const char *p)
{
	struct libfs_stat st;
	CHECK_EQ(vfs_stat(p, &st), 0);
	return st.size;
}

static void zcheck(const char *p, const uint8_t *want, size_t n)
{
	static uint8_t got[1 << 20];
	struct vfile *f;
	CHECK_EQ(vfs_open(p, LIBFS_O_READ, 0, &f), 0);
	CHECK_EQ(vfs_pread(f, got, sizeof got, 0), (long)n);
	CHECK(memcmp(got, want, n) == 0);
	CHECK_EQ(vfs_close(f), 0);
}

static void compress_works(void)
{
	static uint8_t text[600000], noise[300000];
	for (size_t i = 0; i < sizeof text; i++)      /* compressible: words repeating */
		text[i] = (uint8_t)("the quick brown fox jumps over the lazy dog "[i % 44] + (i / 9000 % 3));
	uint64_t x = 88172645463325252ull;
	for (size_t i = 0; i < sizeof noise; i++) {   /* incompressible */
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		noise[i] = (uint8_t)x;
	}
	push("/u", "unixfs", "key=suite");
	CHECK_EQ(vfs_mkdir("/u/base/z", 0755), 0);
	push("/z", "compress", "over=/u/base/z");
	struct vfile *f;
	CHECK_EQ(vfs_open("/z/text", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	CHECK_EQ(vfs_write(f, text, sizeof text), (long)sizeof text);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(vfs_open("/z/noise", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	CHECK_EQ(vfs_write(f, noise, sizeof noise), (long)sizeof noise);
	CHECK_EQ(vfs_close(f), 0);
	zcheck("/z/text", text, sizeof text);
	zcheck("/z/noise", noise, sizeof noise);
	uint64_t zt = below_size("/u/base/z/text"), zn = below_size("/u/base/z/noise");
	printf("compress: %zu bytes of text stored in %llu, %zu of noise in %llu\n", sizeof text,
	       (unsigned long long)zt, sizeof noise, (unsigned long long)zn);
	CHECK(zt < sizeof text / 4);                  /* text shrinks */
	CHECK(zn <= sizeof noise + sizeof noise / 100 + 12288);  /* noise barely grows: header, page */
	struct libfs_stat st;
	CHECK_EQ(vfs_stat("/z/text", &st), 0);
	CHECK_EQ(st.size, sizeof text);

	/* Writes into the middle: of a compressed file, across blocks, with
	 * data that compresses differently (it no longer fits its room). */
	CHECK_EQ(vfs_open("/z/text", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_pwrite(f, noise, 10000, 123457), 10000);
	memcpy(text + 123457, noise, 10000);
	CHECK_EQ(vfs_pwrite(f, "middle", 6, 300001), 6);
	memcpy(text + 300001, "middle", 6);
	CHECK_EQ(vfs_close(f), 0);
	zcheck("/z/text", text, sizeof text);
	/* Holes past the end read as zeros and take no room. */
	CHECK_EQ(vfs_open("/z/sparse", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	CHECK_EQ(vfs_pwrite(f, "end", 3, 900000), 3);
	CHECK_EQ(vfs_close(f), 0);
	static uint8_t sparse[900003];
	memcpy(sparse + 900000, "end", 3);
	zcheck("/z/sparse", sparse, sizeof sparse);
	CHECK(below_size("/u/base/z/sparse") < 4 * 4096 + 512);
	CHECK_EQ(vfs_unlink("/z/sparse"), 0);

	/* Coherence: the same file open through the layer and below it. */
	struct vfile *a, *b;
	CHECK_EQ(vfs_open("/z/text", LIBFS_O_READ | LIBFS_O_WRITE, 0, &a), 0);
	CHECK_EQ(vfs_open("/u/base/z/noise", LIBFS_O_READ, 0, &b), 0);
	static uint8_t raw[400000];
	long rn = vfs_pread(b, raw, sizeof raw, 0);
	CHECK(rn > 0);
	CHECK_EQ(vfs_close(b), 0);
	CHECK_EQ(vfs_open("/u/base/z/text", LIBFS_O_READ | LIBFS_O_WRITE, 0, &b), 0);
	/* Below, the file becomes the other one's bytes: the layer sees the
	 * other file at once. */
	CHECK_EQ(vfs_ftruncate(b, 0), 0);
	CHECK_EQ(vfs_pwrite(b, raw, (size_t)rn, 0), rn);
	CHECK_EQ(vfs_fstat(a, &st), 0);
	CHECK_EQ(st.size, sizeof noise);
	static uint8_t got[sizeof noise];
	CHECK_EQ(vfs_pread(a, got, sizeof got, 0), (long)sizeof noise);
	CHECK(memcmp(got, noise, sizeof noise) == 0);
	/* A write through the layer is below at once. */
	CHECK_EQ(vfs_pwrite(a, "x", 1, sizeof noise), 1);
	uint8_t h[16];
	CHECK_EQ(vfs_pread(b, h, 16, 0), 16);
	CHECK_EQ(h[8] | h[9] << 8 | h[10] << 16, sizeof noise + 1);   /* the header's size */
	/* A damaged index entry is refused, not followed. */
	uint8_t page[8];
	CHECK_EQ(vfs_pread(b, page, 8, 64), 8);          /* index page 0 */
	uint64_t pg = 0;
	for (int i = 7; i >= 0; i--)
		pg = pg << 8 | page[i];
	/* Block 1's first slot: 65,535 bytes in no room. */
	uint8_t bad[16] = { 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 };
	CHECK_EQ(vfs_pwrite(b, bad, 16, pg + 32), 16);
	CHECK_EQ(vfs_pread(a, got, 100, 4096), -EBADMSG);
	CHECK_EQ(vfs_close(a), 0);
	CHECK_EQ(vfs_close(b), 0);
	/* A file below this layer never wrote is refused. */
	put("/u/base/z/plain", "not compressed at all, no header", 0);
	CHECK_EQ(vfs_open("/z/plain", LIBFS_O_READ, 0, &a), -EBADMSG);
	/* Truncation to nothing gives every byte back. */
	CHECK_EQ(vfs_open("/z/text", LIBFS_O_WRITE | LIBFS_O_TRUNC, 0, &a), 0);
	CHECK_EQ(vfs_close(a), 0);
	CHECK_EQ(below_size("/u/base/z/text"), 4096);
	CHECK_EQ(vfs_unlink("/z/text"), 0);
	CHECK_EQ(vfs_unlink("/z/noise"), 0);
	CHECK_EQ(vfs_unlink("/u/base/z/plain"), 0);
	pop_all();
}

/* Where the stored bytes of block 1's newer slot (by generation) are in
 * compress file p below, and which slot that is. */
static uint64_t zblock1_newest(const char *p, int *which)
{
	uint8_t b[8], e[32];
	read_below(p, b, 8, 64);                      /* index page 0 */
	uint64_t pg = 0;
	for (int i = 7; i >= 0; i--)
		pg = pg << 8 | b[i];
	read_below(p, e, 32, pg + 32);                /* block 1's two slots */
	uint32_t g0 = e[8] | e[9] << 8 | (uint32_t)e[10] << 16 | (uint32_t)e[11] << 24;
	uint32_t g1 = e[24] | e[25] << 8 | (uint32_t)e[26] << 16 | (uint32_t)e[27] << 24;
	const uint8_t *s = e + (g1 > g0 ? 16 : 0);
	*which = g1 > g0;
	return ((uint64_t)s[0] | s[1] << 8 | (uint64_t)s[2] << 16 | (uint64_t)s[3] << 24) * 512 + 7;
}

/* compress's two slots per block, as crypt's: a rewrite goes to the slot
 * not holding the last durable version, or over the newest when nothing
 * acknowledged it.  A rewrite cut short - here a byte of its stored bytes
 * changed below - leaves the version before it. */
static void compress_slots(void)
{
	static uint8_t v[4][12288];
	const char *below = "/u/base/z/t";
	int w;
	struct vfile *f;
	push("/u", "unixfs", "key=suite");
	push("/z", "compress", "over=/u/base/z");
	fill(v[0], sizeof v[0], 3);
	CHECK_EQ(vfs_open("/z/t", LIBFS_O_READ | LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	CHECK_EQ(vfs_pwrite(f, v[0], sizeof v[0], 0), (long)sizeof v[0]);
	CHECK_EQ(vfs_fsync(f), 0);
	zblock1_newest(below, &w);
	CHECK_EQ(w, 0);                               /* a new block: slot 0 */

	/* v1, v2 after the fsync, none between: both in slot 1. */
	change(f, v[1], v[0], sizeof v[0], 4096 + 10, 'a', 100);
	memcpy(v[2], v[1], sizeof v[0]);
	fill(v[2] + 4096, 4096, 9);
	CHECK_EQ(vfs_pwrite(f, v[2] + 4096, 4096, 4096), 4096);
	uint64_t at = zblock1_newest(below, &w);
	CHECK_EQ(w, 1);
	block1_is(f, v[2] + 4096);
	torn_shows(f, below, at, v[0] + 4096, v[2] + 4096);   /* v0: the durable version */

	/* fsync, then v3: slot 1 is durable, so v3 goes to slot 0. */
	CHECK_EQ(vfs_fsync(f), 0);
	change(f, v[3], v[2], sizeof v[0], 4096 + 4000, 'c', 96);
	at = zblock1_newest(below, &w);
	CHECK_EQ(w, 0);
	torn_shows(f, below, at, v[2] + 4096, v[3] + 4096);
	static uint8_t all[sizeof v[0]];
	CHECK_EQ(vfs_pread(f, all, sizeof all, 0), (long)sizeof all);
	CHECK(memcmp(all, v[3], sizeof all) == 0);
	CHECK_EQ(vfs_close(f), 0);

	/* Shorter, then longer again: the bytes past the short end read as
	 * zeros, wherever the longer file's blocks are. */
	CHECK_EQ(vfs_open("/z/t", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_ftruncate(f, 5000), 0);
	CHECK_EQ(vfs_pwrite(f, "end", 3, 12000), 3);
	memset(v[3] + 5000, 0, sizeof v[3] - 5000);
	memcpy(v[3] + 12000, "end", 3);
	CHECK_EQ(vfs_pread(f, all, sizeof all, 0), 12003);
	CHECK(memcmp(all, v[3], 12003) == 0);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(vfs_unlink("/z/t"), 0);

	/* The format before two slots is refused, by name. */
	put(below, "EXCOMP1", 0);
	static uint8_t pad[4096];
	write_below(below, pad, sizeof pad, 8);
	CHECK_EQ(vfs_open("/z/t", LIBFS_O_READ, 0, &f), -EBADMSG);
	CHECK_EQ(vfs_unlink(below), 0);
	pop_all();
}

/* ---- ro, the tutorial layer ------------------------------------------------------ */

/* ---- a rename directly below a layer, on fatfs ------------------------------------ */

/* The one name in dir below that is not `skip` (nor .crypt). */
static void other_name(const char *dir, const char *skip, char *out)
{
	struct vfile *d;
	struct libfs_dirent de;
	out[0] = 0;
	CHECK_EQ(vfs_open(dir, LIBFS_O_READ | LIBFS_O_DIR, 0, &d), 0);
	while (vfs_readdir(d, &de) == 1)
		if (de.name[0] != '.' && strcmp(de.name, skip) != 0)
			sprintf(out, "%s/%s", dir, de.name);
	CHECK_EQ(vfs_close(d), 0);
	CHECK(out[0] != 0);
}

/* fatfs numbers a file by where its name is, so a rename changes the
 * number a layer sees below.  A file open through the layer (and one it
 * closed after rewriting it) is renamed directly below: the layer keeps
 * no copy of anything below (docs/stacking.md, "Coherence"), so its open
 * handle goes on reading and writing the same file, which reads the same
 * under its new name above and below; compress still knows which version
 * of a block is durable (a cut - here a flipped byte of the newest
 * version - leaves the version the last fsync or close acknowledged). */
static void rename_below(const char *type)
{
	static uint8_t v[5][12288], got[12288];
	int crypt = strcmp(type, "crypt") == 0, compress = strcmp(type, "compress") == 0;
	char opts[96], f_low[300], g_low[300], h_low[300];
	struct vfile *a, *b;
	struct libfs_stat st;
	push("/fat", "fatfs", "key=fat");
	CHECK_EQ(vfs_mkdir("/fat/d", 0755), 0);
	snprintf(opts, sizeof opts, "over=/fat/d%s", crypt ? "," CK : "");
	push("/top", type, opts);
	/* The names below of f, g and h (crypt's are encrypted). */
	put("/top/f", "x", 0);
	other_name("/fat/d", ".crypt", f_low);
	put("/top/g", "x", 0);
	other_name("/fat/d", strrchr(f_low, '/') + 1, g_low);
	CHECK_EQ(vfs_unlink("/top/g"), 0);
	put("/top/h", "x", 0);
	other_name("/fat/d", strrchr(f_low, '/') + 1, h_low);
	CHECK_EQ(vfs_unlink("/top/h"), 0);

	fill(v[0], sizeof v[0], 5);
	CHECK_EQ(vfs_open("/top/f", LIBFS_O_READ | LIBFS_O_WRITE | LIBFS_O_TRUNC, 0, &a), 0);
	CHECK_EQ(vfs_pwrite(a, v[0], sizeof v[0], 0), (long)sizeof v[0]);
	CHECK_EQ(vfs_fsync(a), 0);
	/* v1: block 1 rewritten, not durable; then the rename below. */
	memcpy(v[1], v[0], sizeof v[0]);
	fill(v[1] + 4096, 4096, 6);
	CHECK_EQ(vfs_pwrite(a, v[1] + 4096, 4096, 4096), 4096);
	CHECK_EQ(vfs_rename(f_low, g_low), 0);
	CHECK_EQ(vfs_stat("/top/f", &st), -ENOENT);
	/* v2 through the handle opened before the rename. */
	change(a, v[2], v[1], sizeof v[0], 4096 + 100, 'r', 300);
	CHECK_EQ(vfs_pread(a, got, sizeof got, 0), (long)sizeof got);
	CHECK(memcmp(got, v[2], sizeof got) == 0);
	CHECK_EQ(vfs_open("/top/g", LIBFS_O_READ, 0, &b), 0);
	CHECK_EQ(vfs_pread(b, got, sizeof got, 0), (long)sizeof got);
	CHECK(memcmp(got, v[2], sizeof got) == 0);
	CHECK_EQ(vfs_fstat(b, &st), 0);
	CHECK_EQ(st.size, sizeof v[0]);
	CHECK_EQ(vfs_close(b), 0);
	if (!crypt && !compress) {
		read_below(g_low, got, sizeof got, 0);
		CHECK(memcmp(got, v[2], sizeof got) == 0);
	}
	if (compress) {
		/* v1 and v2 went to the same slot, v0's kept. */
		int w;
		uint64_t at = zblock1_newest(g_low, &w);
		CHECK_EQ(w, 1);
		torn_shows(a, g_low, at, v[0] + 4096, v[2] + 4096);
	}
	/* v3, then closed (no fsync), renamed below again, opened and
	 * rewritten (v4): the version the close left is the durable one. */
	memcpy(v[3], v[2], sizeof v[0]);
	fill(v[3] + 4096, 4096, 8);
	CHECK_EQ(vfs_pwrite(a, v[3] + 4096, 4096, 4096), 4096);
	CHECK_EQ(vfs_close(a), 0);
	if (compress) {
		/* compress makes a file whose blocks it rewrote durable when it
		 * closes it (after that, a rename below would hide them from its
		 * table): the power fails now, and v3 is there. */
		vfs_abandon();
		ufx_crash(&u);
		for (int i = 0; i < nstk; i++)
			CHECK_EQ(vfs_mount(stk[i].prefix, stk[i].type, stk[i].opts, 1), 0);
		CHECK_EQ(vfs_open("/top/g", LIBFS_O_READ, 0, &a), 0);
		CHECK_EQ(vfs_pread(a, got, sizeof got, 0), (long)sizeof got);
		CHECK(memcmp(got, v[3], sizeof got) == 0);
		CHECK_EQ(vfs_close(a), 0);
	}
	CHECK_EQ(vfs_rename(g_low, h_low), 0);
	CHECK_EQ(vfs_open("/top/h", LIBFS_O_READ | LIBFS_O_WRITE, 0, &a), 0);
	change(a, v[4], v[3], sizeof v[0], 4096 + 2000, 'q', 50);
	CHECK_EQ(vfs_pread(a, got, sizeof got, 0), (long)sizeof got);
	CHECK(memcmp(got, v[4], sizeof got) == 0);
	if (compress) {
		int w;
		uint64_t at = zblock1_newest(h_low, &w);
		torn_shows(a, h_low, at, v[3] + 4096, v[4] + 4096);
	}
	CHECK_EQ(vfs_close(a), 0);
	CHECK_EQ(vfs_unlink("/top/h"), 0);
	nstk--;
	CHECK_EQ(vfs_umount("/top"), 0);
	if (crypt)
		CHECK_EQ(vfs_unlink("/fat/d/.crypt"), 0);
	CHECK_EQ(vfs_rmdir("/fat/d"), 0);
	pop_all();
	/* The file system below is whole. */
	struct libfs_fsck ck = { 0 };
	CHECK_EQ(fatfs_ops.fsck("key=fat", &ck), 0);
	CHECK_EQ(ck.problems, 0);
}

static void read_only(void)
{
	push("/u", "unixfs", "key=suite");
	put("/u/base/r", "readable", 0);
	CHECK_EQ(vfs_mkdir("/u/base/rd", 0755), 0);
	push("/ro", "ro", "over=/u/base");
	char buf[16] = { 0 };
	struct vfile *f;
	CHECK_EQ(vfs_open("/ro/r", LIBFS_O_READ, 0, &f), 0);
	CHECK_EQ(vfs_read(f, buf, sizeof buf), 8);
	CHECK_EQ(vfs_write(f, "x", 1), -EBADF);         /* the mount table's check */
	CHECK_EQ(vfs_close(f), 0);
	CHECK(memcmp(buf, "readable", 8) == 0);
	CHECK_EQ(vfs_open("/ro/r", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), -EROFS);
	CHECK_EQ(vfs_open("/ro/new", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), -EROFS);
	CHECK_EQ(vfs_unlink("/ro/r"), -EROFS);
	CHECK_EQ(vfs_rename("/ro/r", "/ro/s"), -EROFS);
	CHECK_EQ(vfs_mkdir("/ro/d", 0755), -EROFS);
	CHECK_EQ(vfs_rmdir("/ro/rd"), -EROFS);
	struct libfs_stat st;
	CHECK_EQ(vfs_stat("/ro/rd", &st), 0);            /* passed down */
	CHECK_EQ(st.type, LIBFS_T_DIR);
	CHECK_EQ(vfs_unlink("/u/base/r"), 0);            /* below, it is writable */
	CHECK_EQ(vfs_rmdir("/u/base/rd"), 0);
	pop_all();
}

/* sync() reaches the file system once through any stack: the mount table
 * syncs the layers on top, and they pass it down (trace sees each). */
static long syncs;
static void count_syncs(const char *line)
{
	syncs += strstr(line, ": sync(") != NULL;
}

static void one_sync(void)
{
	extern void (*trace_sink)(const char *line);
	void (*was)(const char *) = trace_sink;
	trace_sink = count_syncs;
	push("/u", "unixfs", "key=suite");
	push("/t", "trace", "over=/u/base");
	syncs = 0;
	CHECK_EQ(vfs_sync(), 0);
	CHECK_EQ(syncs, 1);
	push("/n", "null", "over=/t");
	push("/n2", "null", "over=/t");              /* two layers over one */
	syncs = 0;
	CHECK_EQ(vfs_sync(), 0);
	CHECK_EQ(syncs, 2);                          /* once through each */
	pop_all();
	trace_sink = was;
}

/* trace's lines, counted instead of printed (the suite makes thousands). */
extern void (*trace_sink)(const char *line);
static long traced;
static char last[256];
static void count_line(const char *line)
{
	traced++;
	snprintf(last, sizeof last, "%s", line);
}

int main(void)
{
	described();
	ufx_new(&u, 65536, HD_POLLED, 7);
	uint64_t sb;
	CHECK_EQ(unixfs_ops.mkfs("key=suite", &sb), 0);
	CHECK_EQ(kvfs_ops.mkfs("key=suite", &sb), 0);
	push("/u", "unixfs", "key=suite");
	CHECK_EQ(vfs_mkdir("/u/base", 0755), 0);
	pop_all();

	rules();
	crypt_refuses();
	crypt_formats();
	crypt_slots();
	compress_works();
	compress_slots();
	read_only();
	one_sync();
	trace_sink = count_line;
	coherence("null", "/u/base", "file", 1);
	coherence("trace", "/u/base", "file", 1);
	coherence("null", "/kv", "file", 0);
	coherence("trace", "/kv", "file", 0);
	CHECK(traced > 20);
	CHECK(strstr(last, "trace /kv: ") == last);
	CHECK_EQ(fatfs_ops.mkfs("key=fat,size=8M", &sb), 0);
	push("/fat", "fatfs", "key=fat");
	CHECK_EQ(vfs_mkdir("/fat/base", 0755), 0);
	pop_all();
	rename_below("null");
	rename_below("compress");
	rename_below("crypt");
	one_and_two();
	ten_deep();
	ufx_free(&u);
	printf("trace printed %ld lines\n", traced);
	printf("test_stack: ok\n");
	return 0;
}
