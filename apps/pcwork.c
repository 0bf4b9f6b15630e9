/*
 * pcwork.c - the workload of the power-cut tests of the real stack
 * (tools/powercut/, docs/powercut.md), and its check after the power came
 * back.  It runs on any library file system, by type, adapting to what the
 * type says it supports (struct libfs_ops.features), never to its name.
 *
 *   pcwork prep  TYPE OPTS          mkfs, the directories; unmounted clean
 *   pcwork run   TYPE OPTS STEPS    the steps, "pcwork: ack N" after each
 *   pcwork check TYPE OPTS STEPS N  after a power cut: the file system as
 *                                   of step N (acknowledged) or N + 1
 *
 * The steps are a fixed pseudo-random sequence (the same in both modes) on
 * eight files, spread over two directories where the type has them: write
 * at an offset (sometimes truncating first, sometimes far past the end,
 * sometimes 200 KB at once) then fsync and close; unlink then sync; rename
 * (across directories too) then sync; truncate then fsync.  A step is
 * acknowledged on the console only once its fsync or sync has returned:
 * from then on it must survive any power cut.  The power may fail during
 * the next step, so check accepts for each file the state before that
 * step or after it - wholly, for a type whose files change atomically
 * (LIBFS_F_ATOMIC), else byte by byte (an in-place write may be half
 * done) - and a file that step creates or truncates may also be empty or
 * hold zeros where it has no bytes yet.  Anything else is wrong: a byte
 * no step wrote there (another file's, the disk's old contents), a wrong
 * size, a file that should not exist or a missing one, a directory
 * listing naming other files than those that exist.  Then the type's
 * walk through its own operations (libfs_check) must find nothing.
 *
 * TYPE may be a stack of layers over a file system (docs/stacking.md),
 * named from the bottom up as exobench names them: "crypt/unixfs",
 * "null+compress/unixfs".  The file system is mounted at /pcb and each
 * layer over the one below (each given OPTS too: crypt takes its key from
 * it), and the workload runs on the top; the features are the stack's
 * (stack_effective), the walk is the file system's own: a layer is held to
 * the same check as a file system (crypt and compress keep two slots per
 * block so that a cut write leaves no block unreadable).  -w rewrite
 * runs another sequence (draw_rewrite): one file rewritten in place.
 *
 * Exit status: 0 all well, 1 a check failed, 2 could not run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/libfs.h"
#include "libos/stack/stack.h"
#include "libos/vfs.h"

#define NFILES  8
#define MAXSIZE (256 * 1024)
#define PREFIX  "/pc"

struct state {
	int exists[NFILES];
	int fresh[NFILES];           /* the step into this state created or truncated it */
	uint32_t size[NFILES];
	uint8_t *data[NFILES];       /* MAXSIZE bytes each */
};

static const struct libfs_ops *ops;
static const char *opts;
static uint8_t buf[MAXSIZE];

/* The stack: base (the file system, at /pcb when there are layers) and
 * the layers from the bottom up, the last at PREFIX. */
#define MAXLAYERS 4
static const struct libfs_ops *base;
static const char *layer[MAXLAYERS];
static int nlayers;
static struct libfs_ops effective;       /* the stack's features, once mounted */

static const char *mount_point(int i)   /* 0 the file system, i the i-th layer */
{
	static char names[MAXLAYERS + 1][16];
	if (i == nlayers)
		return PREFIX;
	snprintf(names[i], sizeof names[i], i == 0 ? "/pcb" : "/pcl%d", i);
	return names[i];
}

/* "crypt+null/unixfs" into base and layer[]; 0 or -1. */
static int parse_type(char *type)
{
	char *slash = strrchr(type, '/');
	base = libfs_type(slash ? slash + 1 : type);
	if (base == NULL)
		return -1;
	if (slash == NULL)
		return 0;
	*slash = 0;
	for (char *p = strtok(type, "+"); p != NULL; p = strtok(NULL, "+")) {
		if (nlayers == MAXLAYERS || libfs_type(p) == NULL)
			return -1;
		layer[nlayers++] = p;
	}
	return 0;
}

/* Mount the file system and the layers over it; 0 or the error. */
static int mount_all(void)
{
	int r = vfs_mount(mount_point(0), base->name, opts, 1);
	for (int i = 1; r == 0 && i <= nlayers; i++) {
		char o[256];
		snprintf(o, sizeof o, "over=%s,%s", mount_point(i - 1), opts);
		r = vfs_mount(mount_point(i), layer[i - 1], o, 1);
	}
	if (r == 0 && nlayers > 0)
		r = stack_effective(PREFIX, &effective);
	if (r == 0)
		ops = nlayers > 0 ? &effective : base;
	return r;
}

static int umount_all(void)
{
	int r = 0;
	for (int i = nlayers; i >= 0; i--) {
		int e = vfs_umount(mount_point(i));
		r = r < 0 ? r : e;
	}
	return r;
}

static int has(uint32_t f)
{
	return (ops->features & f) != 0;
}

static void path(char *p, int i)
{
	if (has(LIBFS_F_DIRS))
		snprintf(p, 64, PREFIX "/d%d/f%d", i % 2, i);
	else
		snprintf(p, 64, PREFIX "/f%d", i);
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* One step's operation, drawn from the sequence. */
struct step {
	enum { WRITE, UNLINK, RENAME, TRUNC } op;
	int f, g, trunc;
	uint32_t off, n;
	uint8_t fill;
};

/* -w rewrite: one file made at the first step and then rewritten in
 * place, every step acknowledged (60 KB: a large file below, whose blocks
 * the file system rewrites in place): parts of a block, a block's whole, across
 * blocks, the end of a short last block, the whole file, cut short in the
 * middle of a block, extended again.  A cut in any of these steps must
 * leave every byte as before the step or as after it; a layer that
 * rewrites whole blocks (crypt, compress) must not lose the acknowledged bytes of
 * the blocks in flight. */
static int rewrite;
static const struct { int trunc_to; uint32_t off, n; } rewrites[] = {
	{ -1, 0, 60000 }, { -1, 20100, 50 }, { -1, 24500, 200 }, { -1, 28672, 4096 },
	{ -1, 59990, 20 }, { -1, 0, 60010 }, { 50000, 0, 0 }, { -1, 45000, 8000 },
	{ -1, 53000, 248 }, { -1, 53248, 100 }, { -1, 20200, 7000 }, { -1, 36864, 1 },
};

static struct step draw_rewrite(int s, const struct state *m)
{
	int k = s % (int)(sizeof rewrites / sizeof rewrites[0]);
	struct step st = { .op = WRITE, .f = 0, .g = 0, .off = rewrites[k].off, .n = rewrites[k].n };
	st.fill = (uint8_t)(0x21 + s % 90);
	st.trunc = !m->exists[0];
	if (rewrites[k].trunc_to >= 0 && m->exists[0] && !has(LIBFS_F_ATOMIC)) {
		st.op = TRUNC;
		st.n = (uint32_t)rewrites[k].trunc_to;
	} else if (rewrites[k].trunc_to >= 0) {
		st.off = 0;
		st.n = 1;
	}
	return st;
}

static struct step draw(uint64_t *rs, int s, const struct state *m)
{
	if (rewrite)
		return draw_rewrite(s, m);
	struct step st = { .op = WRITE };
	int kind = (int)(rnd(rs) % 20);
	st.f = (int)(rnd(rs) % NFILES);
	st.g = (int)(rnd(rs) % NFILES);
	st.trunc = rnd(rs) % 5 == 0;
	st.off = (uint32_t)(rnd(rs) % 9000);
	st.n = 1 + (uint32_t)(rnd(rs) % 12000);
	if (kind == 0) {              /* a large write */
		st.off = 0;
		st.n = 200 * 1024;
	} else if (kind == 1) {       /* far past the end: a hole or zeros */
		st.off = 40000 + (uint32_t)(rnd(rs) % 8000);
	}
	st.fill = (uint8_t)(0x21 + s % 90);
	if (!m->exists[st.f])
		return st;
	if (kind >= 13 && kind < 16)
		st.op = UNLINK;
	else if (kind >= 16 && kind < 18 && has(LIBFS_F_RENAME) && st.f != st.g)
		st.op = RENAME;
	else if (kind >= 18 && !has(LIBFS_F_ATOMIC))
		st.op = TRUNC;
	st.n = st.op == TRUNC ? (uint32_t)(rnd(rs) % (m->size[st.f] + 1)) : st.n;
	return st;
}

/* The bytes a step writes at [off, off + n): its own value at each
 * position (0x21 + (its fill + a hash of the position) mod 90), so no two
 * steps' bytes are equal at any position, none is zero or the disk's old
 * 0xEE, and a block of them does not compress (a compressing layer's
 * blocks then span several sectors, which a cut can tear). */
static void step_bytes(uint8_t *p, uint8_t fill, uint32_t off, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t h = (off + i) * 2654435761u;
		p[i] = (uint8_t)(0x21 + (fill - 0x21 + (h >> 16) % 90) % 90);
	}
}

/* The effect of a step on the model. */
static void apply(struct state *m, const struct step *st)
{
	memset(m->fresh, 0, sizeof m->fresh);
	int f = st->f, g = st->g;
	switch (st->op) {
	case WRITE:
		if (st->trunc || !m->exists[f]) {
			memset(m->data[f], 0, MAXSIZE);
			m->size[f] = 0;
			m->fresh[f] = 1;
		}
		m->exists[f] = 1;
		step_bytes(m->data[f] + st->off, st->fill, st->off, st->n);
		if (st->off + st->n > m->size[f])
			m->size[f] = st->off + st->n;
		break;
	case UNLINK:
		m->exists[f] = 0;
		m->size[f] = 0;
		memset(m->data[f], 0, MAXSIZE);
		break;
	case RENAME:
		m->exists[g] = 1;
		m->size[g] = m->size[f];
		memcpy(m->data[g], m->data[f], MAXSIZE);
		m->exists[f] = 0;
		m->size[f] = 0;
		memset(m->data[f], 0, MAXSIZE);
		break;
	case TRUNC:
		memset(m->data[f] + st->n, 0, MAXSIZE - st->n);
		m->size[f] = st->n;
		break;
	}
}

/* Do a step on the file system, durably: 0, or the error. */
static int perform(const struct step *st)
{
	char p[64], q[64];
	path(p, st->f);
	path(q, st->g);
	struct vfile *v;
	long w;
	int r, e, e2;
	switch (st->op) {
	case WRITE:
		r = vfs_open(p, LIBFS_O_WRITE | LIBFS_O_CREAT | (st->trunc ? LIBFS_O_TRUNC : 0), 0644, &v);
		if (r < 0)
			return r;
		step_bytes(buf, st->fill, st->off, st->n);
		w = vfs_pwrite(v, buf, st->n, st->off);
		e = vfs_fsync(v);
		e2 = vfs_close(v);
		return w < 0 ? (int)w : w != (long)st->n ? -EIO : e < 0 ? e : e2;
	case UNLINK:
		r = vfs_unlink(p);
		return r < 0 ? r : vfs_sync();
	case RENAME:
		r = vfs_rename(p, q);
		return r < 0 ? r : vfs_sync();
	case TRUNC:
		r = vfs_open(p, LIBFS_O_WRITE, 0, &v);
		if (r < 0)
			return r;
		r = vfs_ftruncate(v, st->n);
		e = vfs_fsync(v);
		e2 = vfs_close(v);
		return r < 0 ? r : e < 0 ? e : e2;
	}
	return -EINVAL;
}

static const char *opname[] = { "write", "unlink", "rename", "truncate" };

/* Is file i as in state a or b (b: the step in flight)? */
static int file_ok(int i, const struct state *a, const struct state *b)
{
	char p[64];
	path(p, i);
	struct vfile *v;
	int r = vfs_open(p, LIBFS_O_READ, 0, &v);
	if (r == -ENOENT) {
		if (!a->exists[i] || !b->exists[i])
			return 1;
		printf("pcwork: %s: missing\n", p);
		return 0;
	}
	if (r < 0) {
		printf("pcwork: %s: open: %s\n", p, strerror(-r));
		return 0;
	}
	long n = vfs_pread(v, buf, MAXSIZE, 0);
	vfs_close(v);
	if (!a->exists[i] && !b->exists[i]) {
		printf("pcwork: %s: exists (%ld bytes), but no step made it\n", p, n);
		return 0;
	}
	int whole_a = a->exists[i] && n == (long)a->size[i] && memcmp(buf, a->data[i], (size_t)n) == 0;
	int whole_b = b->exists[i] && n == (long)b->size[i] && memcmp(buf, b->data[i], (size_t)n) == 0;
	int fresh = b->fresh[i] && a != b;
	if (whole_a || whole_b || (fresh && n == 0))
		return 1;
	if (has(LIBFS_F_ATOMIC) || n < 0 || (n != (long)a->size[i] && n != (long)b->size[i])) {
		printf("pcwork: %s: %ld bytes, neither state (%u or %u bytes)\n", p, n, a->size[i],
		       b->size[i]);
		return 0;
	}
	for (long k = 0; k < n; k++)
		if (buf[k] != a->data[i][k] && buf[k] != b->data[i][k] && !(fresh && buf[k] == 0)) {
			printf("pcwork: %s: byte %ld is %#x, neither %#x nor %#x\n", p, k, buf[k],
			       a->data[i][k], b->data[i][k]);
			return 0;
		}
	return 1;
}

/* Does the listing of dir name exactly the files of it that open? */
static int listing_ok(const char *dir)
{
	struct vfile *d;
	struct libfs_dirent de;
	int listed = 0, exist = 0, bad = 0;
	if (vfs_open(dir, LIBFS_O_READ | LIBFS_O_DIR, 0, &d) < 0) {
		printf("pcwork: %s: cannot list\n", dir);
		return 0;
	}
	while (vfs_readdir(d, &de) == 1) {
		if (strcmp(de.name, ".") == 0 || strcmp(de.name, "..") == 0 || de.name[0] == 'd')
			continue;
		listed++;
		int i = de.name[0] == 'f' ? atoi(de.name + 1) : -1;
		char p[64], q[LIBFS_PATH_MAX + 8];
		if (i >= 0 && i < NFILES) {
			path(p, i);
			snprintf(q, sizeof q, "%s/%s", dir, de.name);
		}
		if (i < 0 || i >= NFILES || strcmp(p, q) != 0) {
			printf("pcwork: %s: lists %s, which no step made\n", dir, de.name);
			bad++;
		}
	}
	vfs_close(d);
	for (int i = 0; i < NFILES; i++) {
		char p[64];
		struct libfs_stat st;
		path(p, i);
		size_t n = strlen(dir);
		if (strncmp(p, dir, n) == 0 && p[n] == '/' && strchr(p + n + 1, '/') == NULL)
			exist += vfs_stat(p, &st) == 0;
	}
	if (listed != exist) {
		printf("pcwork: %s: %d files listed, %d exist\n", dir, listed, exist);
		bad++;
	}
	return bad == 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: pcwork [-w rewrite] prep TYPE OPTS | run TYPE OPTS STEPS | check TYPE OPTS STEPS N\n"
	                "       TYPE: a file system, or layers over one: crypt/unixfs\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return usage();
	while (argc > 3 && argv[1][0] == '-') {
		if (strcmp(argv[1], "-w") == 0 && strcmp(argv[2], "rewrite") == 0)
			rewrite = 1;
		else
			return usage();
		argv += 2;
		argc -= 2;
	}
	if (argc < 4)
		return usage();
	const char *mode = argv[1];
	static char type[64];
	snprintf(type, sizeof type, "%s", argv[2]);
	opts = argv[3];
	if (parse_type(type) < 0) {
		fprintf(stderr, "pcwork: %s: no such library file system or layer\n", argv[2]);
		return 2;
	}
	ops = base;
	int r;
	if (strcmp(mode, "prep") == 0 && argc == 4) {
		uint64_t sb;
		if (base->mkfs == NULL || (r = base->mkfs(opts, &sb)) < 0 || (r = mount_all()) < 0) {
			fprintf(stderr, "pcwork: mkfs -t %s %s: %s\n", base->name, opts,
			        base->mkfs ? strerror(-r) : "no mkfs");
			return 2;
		}
		if (has(LIBFS_F_DIRS) && ((r = vfs_mkdir(PREFIX "/d0", 0755)) < 0 ||
		                          (r = vfs_mkdir(PREFIX "/d1", 0755)) < 0)) {
			fprintf(stderr, "pcwork: mkdir: %s\n", strerror(-r));
			return 2;
		}
		if ((r = umount_all()) < 0) {
			fprintf(stderr, "pcwork: unmount: %s\n", strerror(-r));
			return 2;
		}
		printf("pcwork: %s made\n", argv[2]);
		return 0;
	}
	int check = strcmp(mode, "check") == 0;
	if (!(strcmp(mode, "run") == 0 && argc == 5) && !(check && argc == 6))
		return usage();
	int steps = atoi(argv[4]), acked = check ? atoi(argv[5]) : 0;
	if (steps < 1 || acked < 0 || acked > steps)
		return usage();

	/* The model as of step acked (a) and the one after it (b). */
	static struct state sa, sb;
	for (int i = 0; i < NFILES; i++) {
		sa.data[i] = calloc(1, MAXSIZE);
		sb.data[i] = calloc(1, MAXSIZE);
		if (sa.data[i] == NULL || sb.data[i] == NULL) {
			fprintf(stderr, "pcwork: out of memory\n");
			return 2;
		}
	}
	if ((r = mount_all()) < 0) {
		printf("pcwork: mount -t %s %s: %s\n", argv[2], opts, strerror(-r));
		return check ? 1 : 2;
	}
	uint64_t rs = 0x5eed;
	struct step st;
	if (!check) {
		for (int s = 0; s < steps; s++) {
			st = draw(&rs, s, &sa);
			apply(&sa, &st);
			if ((r = perform(&st)) < 0) {
				printf("pcwork: step %d (%s f%d): %s\n", s + 1, opname[st.op], st.f, strerror(-r));
				return 1;
			}
			/* Straight to the console: the runner reads this the moment it
			 * is said, and the power may fail right after. */
			printf("pcwork: ack %d\n", s + 1);
			fflush(stdout);
		}
		r = umount_all();
		printf("pcwork: %d steps done%s\n", steps, r < 0 ? ", unmount failed" : "");
		return r < 0;
	}
	for (int s = 0; s < acked; s++) {
		st = draw(&rs, s, &sa);
		apply(&sa, &st);
	}
	const struct state *b = &sa;
	if (acked < steps) {
		for (int i = 0; i < NFILES; i++) {
			sb.exists[i] = sa.exists[i];
			sb.size[i] = sa.size[i];
			memcpy(sb.data[i], sa.data[i], MAXSIZE);
		}
		st = draw(&rs, acked, &sb);
		apply(&sb, &st);
		b = &sb;
	}
	int bad = 0;
	for (int i = 0; i < NFILES; i++)
		bad += !file_ok(i, &sa, b);
	if (has(LIBFS_F_DIRS)) {
		bad += !listing_ok(PREFIX "/d0");
		bad += !listing_ok(PREFIX "/d1");
	} else {
		bad += !listing_ok(PREFIX);
	}
	if ((r = umount_all()) < 0) {
		printf("pcwork: unmount after the check: %s\n", strerror(-r));
		bad++;
	}
	struct libfs_fsck ck = { 0 };
	if ((r = libfs_check(base, opts, &ck)) < 0 || ck.problems != 0) {
		printf("pcwork: walk: %s, %s: %llu problems\n", r < 0 ? strerror(-r) : "done", ck.summary,
		       (unsigned long long)ck.problems);
		bad++;
	}
	printf("pcwork: checked as of step %d%s: %s\n", acked,
	       acked < steps ? " or the next" : "", bad ? "WRONG" : "all well");
	return bad != 0;
}
