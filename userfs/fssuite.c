/*
 * fssuite.c - the generic libFS test suite (see fssuite.h).  Each test is a
 * function that returns NULL when it passes and a short reason when it
 * does not; the runner prints one line per test.  Tests clean up after
 * themselves, so they can run in any order on a file system with data on it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/vfs.h"
#include "userfs/fssuite.h"

static char why[160];

#define EXPECT(cond, ...) do { if (!(cond)) { snprintf(why, sizeof why, __VA_ARGS__); \
	return why; } } while (0)

/* out = dir/name, cut short (never overflowing) if too long. */
static void join(char *out, const char *dir, const char *name)
{
	size_t d = strcmp(dir, "/") ? strlen(dir) : 0, n = strlen(name);
	if (d > LIBFS_PATH_MAX - 2)
		d = LIBFS_PATH_MAX - 2;
	if (d + 1 + n >= LIBFS_PATH_MAX)
		n = LIBFS_PATH_MAX - 2 - d;
	memcpy(out, dir, d);
	out[d] = '/';
	memcpy(out + d + 1, name, n);
	out[d + 1 + n] = 0;
}

static void path(const struct fssuite *s, const char *name, char *out)
{
	join(out, s->root, name);
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

/* Write n bytes as one file; 0 or a negative errno. */
static long put(const char *p, const uint8_t *data, size_t n)
{
	struct vfile *f;
	long r = vfs_open(p, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &f);
	if (r < 0)
		return r;
	size_t done = 0;
	while (r >= 0 && done < n) {
		size_t k = n - done > 65536 ? 65536 : n - done;
		r = vfs_write(f, data + done, k);
		if (r > 0)
			done += (size_t)r;
		else if (r == 0)
			r = -EIO;
	}
	long c = vfs_close(f);
	return r < 0 ? r : c;
}

/* Does the file hold exactly data[0..n)? */
static const char *same(const char *p, const uint8_t *data, size_t n)
{
	struct vfile *f;
	int r = vfs_open(p, LIBFS_O_READ, 0, &f);
	EXPECT(r == 0, "open %.60s: %d", p, r);
	struct libfs_stat st;
	r = vfs_fstat(f, &st);
	if (r < 0 || st.size != n || st.type != LIBFS_T_REG) {
		vfs_close(f);
		EXPECT(0, "%.60s: size %llu, expected %zu", p, (unsigned long long)st.size, n);
	}
	uint8_t *buf = malloc(n + 1);
	size_t got = 0;
	long k = 1;
	while (buf && got < n && (k = vfs_read(f, buf + got, n - got > 100000 ? 100000 : n - got)) > 0)
		got += (size_t)k;
	long extra = buf ? vfs_read(f, buf, 1) : 0;
	vfs_close(f);
	int ok = buf && got == n && extra == 0 && memcmp(buf, data, n) == 0;
	size_t at = 0;
	while (buf && ok == 0 && at < got && buf[at] == data[at])
		at++;
	free(buf);
	EXPECT(ok, "%.60s: contents differ (read %zu of %zu, first difference at %zu)", p, got, n, at);
	return NULL;
}

static const char *t_create_read_unlink(struct fssuite *s)
{
	char p[LIBFS_PATH_MAX];
	path(s, "hello", p);
	EXPECT(put(p, (const uint8_t *)"hello, world\n", 13) == 0, "write %.60s", p);
	const char *w = same(p, (const uint8_t *)"hello, world\n", 13);
	if (w)
		return w;
	struct libfs_stat st;
	EXPECT(vfs_stat(p, &st) == 0 && st.size == 13 && st.type == LIBFS_T_REG, "stat");
	EXPECT(vfs_unlink(p) == 0, "unlink");
	EXPECT(vfs_stat(p, &st) == -ENOENT, "stat after unlink: not ENOENT");
	return NULL;
}

static const char *t_sizes(struct fssuite *s)
{
	static const size_t sizes[] = { 0, 1, 7, 511, 512, 513, 4095, 4096, 4097, 10240, 65537,
	                                 200000 };
	uint8_t *buf = malloc(200000);
	char p[LIBFS_PATH_MAX];
	const char *w = NULL;
	for (size_t i = 0; w == NULL && i < sizeof sizes / sizeof sizes[0]; i++) {
		path(s, "size", p);
		fill(buf, sizes[i], (uint32_t)i);
		if (put(p, buf, sizes[i]) != 0) {
			snprintf(why, sizeof why, "write %zu bytes", sizes[i]);
			w = why;
		} else {
			w = same(p, buf, sizes[i]);
		}
		vfs_unlink(p);
	}
	free(buf);
	return w;
}

static const char *t_offsets(struct fssuite *s)
{
	char p[LIBFS_PATH_MAX];
	path(s, "offsets", p);
	uint8_t model[30000], chunk[3000];
	memset(model, 0, sizeof model);
	struct vfile *f;
	EXPECT(vfs_open(p, LIBFS_O_READ | LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &f) == 0,
	       "create");
	size_t end = 0;
	/* Writes at scattered offsets, some past the end: holes read as zeros. */
	for (uint32_t i = 0; i < 40; i++) {
		size_t off = (i * 7919u) % 27000, n = 1 + (i * 104729u) % 3000;
		fill(chunk, n, i);
		if (vfs_pwrite(f, chunk, n, off) != (long)n) {
			vfs_close(f);
			EXPECT(0, "pwrite %zu at %zu", n, off);
		}
		memcpy(model + off, chunk, n);
		if (off + n > end)
			end = off + n;
	}
	/* The offset of an ordinary read/write is independent of pwrite. */
	EXPECT(vfs_lseek(f, 0, 1) == 0, "pwrite moved the offset");
	EXPECT(vfs_lseek(f, 0, 2) == (int64_t)end, "SEEK_END");
	EXPECT(vfs_write(f, "tail", 4) == 4, "write at end");
	memcpy(model + end, "tail", 4);
	end += 4;
	uint8_t back[30000];
	EXPECT(vfs_pread(f, back, sizeof back, 0) == (long)end, "pread length");
	vfs_close(f);
	EXPECT(memcmp(back, model, end) == 0, "contents after scattered writes");
	vfs_unlink(p);
	return NULL;
}

static const char *t_truncate_append(struct fssuite *s)
{
	char p[LIBFS_PATH_MAX];
	path(s, "trunc", p);
	uint8_t buf[20000], model[40000];
	fill(buf, sizeof buf, 3);
	EXPECT(put(p, buf, sizeof buf) == 0, "write");
	struct vfile *f;
	EXPECT(vfs_open(p, LIBFS_O_WRITE, 0, &f) == 0, "open");
	EXPECT(vfs_ftruncate(f, 5000) == 0, "shrink");
	EXPECT(vfs_ftruncate(f, 12000) == 0, "grow");
	vfs_close(f);
	memcpy(model, buf, 5000);
	memset(model + 5000, 0, 7000);
	const char *w = same(p, model, 12000);
	if (w)
		return w;
	EXPECT(vfs_open(p, LIBFS_O_WRITE | VFS_O_APPEND, 0, &f) == 0, "open for append");
	EXPECT(vfs_write(f, "abc", 3) == 3, "append");
	EXPECT(vfs_pwrite(f, "zz", 2, 0) == 2, "pwrite under append");
	EXPECT(vfs_write(f, "def", 3) == 3, "append again");
	vfs_close(f);
	memcpy(model, "zz", 2);
	memcpy(model + 12000, "abcdef", 6);
	w = same(p, model, 12006);
	if (w)
		return w;
	/* O_TRUNC empties it. */
	EXPECT(vfs_open(p, LIBFS_O_WRITE | LIBFS_O_TRUNC, 0, &f) == 0, "open O_TRUNC");
	vfs_close(f);
	w = same(p, model, 0);
	vfs_unlink(p);
	return w;
}

static const char *t_many(struct fssuite *s)
{
	char p[LIBFS_PATH_MAX], name[32];
	uint8_t buf[1500];
	const int n = 150;
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "many%03d", i);
		path(s, name, p);
		fill(buf, (size_t)(i * 10), (uint32_t)i);
		EXPECT(put(p, buf, (size_t)(i * 10)) == 0, "create %.60s", p);
	}
	/* The listing has each exactly once. */
	char seen[150];
	memset(seen, 0, sizeof seen);
	struct vfile *d;
	EXPECT(vfs_open(s->root, LIBFS_O_READ | LIBFS_O_DIR, 0, &d) == 0, "opendir");
	struct libfs_dirent de;
	int r, dots = 0;
	while ((r = vfs_readdir(d, &de)) == 1) {
		int k;
		if (strcmp(de.name, ".") == 0 || strcmp(de.name, "..") == 0)
			dots++;
		else if (sscanf(de.name, "many%d", &k) == 1 && k >= 0 && k < n && strlen(de.name) == 7) {
			if (seen[k]++)
				break;
		}
	}
	vfs_close(d);
	EXPECT(r == 0 && dots == 2, "readdir ended with %d, %d dot entries", r, dots);
	for (int i = 0; i < n; i++)
		EXPECT(seen[i] == 1, "many%03d listed %d times", i, seen[i]);
	for (int i = 0; i < n; i += 7) {
		snprintf(name, sizeof name, "many%03d", i);
		path(s, name, p);
		fill(buf, (size_t)(i * 10), (uint32_t)i);
		const char *w = same(p, buf, (size_t)(i * 10));
		if (w)
			return w;
	}
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof name, "many%03d", i);
		path(s, name, p);
		EXPECT(vfs_unlink(p) == 0, "unlink %.60s", p);
	}
	return NULL;
}

static const char *t_errors(struct fssuite *s)
{
	char p[LIBFS_PATH_MAX], q[LIBFS_PATH_MAX];
	struct vfile *f;
	struct libfs_stat st;
	path(s, "missing", p);
	EXPECT(vfs_open(p, LIBFS_O_READ, 0, &f) == -ENOENT, "open missing: not ENOENT");
	EXPECT(vfs_stat(p, &st) == -ENOENT, "stat missing");
	EXPECT(vfs_unlink(p) == -ENOENT, "unlink missing");
	path(s, "exists", p);
	EXPECT(put(p, (const uint8_t *)"x", 1) == 0, "create");
	EXPECT(vfs_open(p, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_EXCL, 0644, &f) == -EEXIST,
	       "O_EXCL on existing: not EEXIST");
	EXPECT(vfs_open(p, LIBFS_O_READ, 0, &f) == 0, "open");
	EXPECT(vfs_write(f, "y", 1) == -EBADF, "write to a read-only file: not EBADF");
	EXPECT(vfs_ftruncate(f, 0) == -EBADF, "truncate a read-only file");
	vfs_close(f);
	EXPECT(vfs_open(p, LIBFS_O_WRITE, 0, &f) == 0, "open write-only");
	char c;
	EXPECT(vfs_read(f, &c, 1) == -EBADF, "read from a write-only file");
	vfs_close(f);
	/* A name one longer than the file system takes. */
	char name[LIBFS_NAME_MAX + 2];
	memset(name, 'n', sizeof name);
	name[s->name_max + 1] = 0;
	path(s, name, q);
	EXPECT(vfs_open(q, LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f) == -ENAMETOOLONG,
	       "name of %d bytes: not ENAMETOOLONG", s->name_max + 1);
	name[s->name_max] = 0;
	path(s, name, q);
	EXPECT(put(q, (const uint8_t *)"ok", 2) == 0, "name of %d bytes refused", s->name_max);
	EXPECT(vfs_unlink(q) == 0, "unlink long name");
	/* Through a file as if it were a directory. */
	join(q, p, "x");
	int r = vfs_stat(q, &st);
	EXPECT(r == -ENOTDIR || r == -ENOENT, "path through a file: %d", r);
	EXPECT(vfs_open(p, LIBFS_O_READ | LIBFS_O_DIR, 0, &f) == -ENOTDIR, "opendir a file");
	EXPECT(vfs_open(s->root, LIBFS_O_WRITE, 0, &f) == -EISDIR, "open a directory for writing");
	EXPECT(vfs_unlink(p) == 0, "unlink");
	return NULL;
}

static const char *t_dirs(struct fssuite *s)
{
	char d[LIBFS_PATH_MAX], e[LIBFS_PATH_MAX], p[LIBFS_PATH_MAX];
	path(s, "sub", d);
	join(e, d, "deeper");
	join(p, e, "file");
	EXPECT(vfs_mkdir(d, 0755) == 0, "mkdir");
	EXPECT(vfs_mkdir(d, 0755) == -EEXIST, "mkdir twice: not EEXIST");
	EXPECT(vfs_mkdir(e, 0755) == 0, "mkdir nested");
	EXPECT(put(p, (const uint8_t *)"nested", 6) == 0, "create nested file");
	const char *w = same(p, (const uint8_t *)"nested", 6);
	if (w)
		return w;
	EXPECT(vfs_rmdir(d) == -ENOTEMPTY, "rmdir non-empty: not ENOTEMPTY");
	EXPECT(vfs_unlink(e) == -EISDIR || vfs_unlink(e) == -EPERM, "unlink a directory");
	EXPECT(vfs_rmdir(p) == -ENOTDIR, "rmdir a file: not ENOTDIR");
	struct libfs_stat st;
	EXPECT(vfs_stat(e, &st) == 0 && st.type == LIBFS_T_DIR, "stat directory");
	EXPECT(vfs_unlink(p) == 0 && vfs_rmdir(e) == 0 && vfs_rmdir(d) == 0, "remove the tree");
	EXPECT(vfs_stat(d, &st) == -ENOENT, "directory still there");
	return NULL;
}

static const char *t_rename(struct fssuite *s)
{
	char a[LIBFS_PATH_MAX], b[LIBFS_PATH_MAX];
	path(s, "ren-a", a);
	path(s, "ren-b", b);
	uint8_t x[3000], y[100];
	fill(x, sizeof x, 8);
	fill(y, sizeof y, 9);
	EXPECT(put(a, x, sizeof x) == 0 && put(b, y, sizeof y) == 0, "create");
	EXPECT(vfs_rename(a, b) == 0, "rename over an existing file");
	struct libfs_stat st;
	EXPECT(vfs_stat(a, &st) == -ENOENT, "old name still there");
	const char *w = same(b, x, sizeof x);
	if (w)
		return w;
	EXPECT(vfs_rename(a, b) == -ENOENT, "rename a missing file: not ENOENT");
	EXPECT(vfs_rename(b, a) == 0, "rename back");
	EXPECT(vfs_unlink(a) == 0, "unlink");
	if (s->dirs) {
		char d[LIBFS_PATH_MAX], in[LIBFS_PATH_MAX];
		path(s, "ren-dir", d);
		join(in, d, "inside");
		EXPECT(vfs_mkdir(d, 0755) == 0 && put(a, x, 10) == 0, "setup");
		EXPECT(vfs_rename(a, in) == 0, "rename into a directory");
		w = same(in, x, 10);
		if (w)
			return w;
		join(b, in, "sub");
		EXPECT(vfs_rename(d, b) != 0, "a directory moved into a file");
		EXPECT(vfs_unlink(in) == 0 && vfs_rmdir(d) == 0, "cleanup");
	}
	return NULL;
}

/* Two opens of one file are one file: each sees the other's writes and
 * size, and both writes are there after both closes. */
static const char *t_two_opens(struct fssuite *s)
{
	char p[LIBFS_PATH_MAX];
	path(s, "two", p);
	struct vfile *a, *b;
	EXPECT(vfs_open(p, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &a) == 0, "open");
	if (vfs_open(p, LIBFS_O_READ | LIBFS_O_WRITE, 0, &b) != 0) {
		vfs_close(a);
		EXPECT(0, "open again");
	}
	uint8_t model[4100], back[8];
	memset(model, 0, sizeof model);
	memcpy(model, "aaaa", 4);
	memcpy(model + 4096, "bbbb", 4);
	struct libfs_stat sa, sb;
	int ok = vfs_pwrite(a, "aaaa", 4, 0) == 4 && vfs_pwrite(b, "bbbb", 4, 4096) == 4 &&
	         vfs_pread(b, back, 4, 0) == 4 && memcmp(back, "aaaa", 4) == 0 &&
	         vfs_fstat(a, &sa) == 0 && vfs_fstat(b, &sb) == 0 && sa.size == 4100 &&
	         sb.size == 4100;
	int c1 = vfs_close(a), c2 = vfs_close(b);
	EXPECT(ok, "the two opens do not see each other's writes and size");
	EXPECT(c1 == 0 && c2 == 0, "close");
	const char *w = same(p, model, sizeof model);
	vfs_unlink(p);
	return w;
}

static const char *t_big(struct fssuite *s)
{
	char p[LIBFS_PATH_MAX];
	path(s, "big", p);
	size_t n = (size_t)s->big;
	uint8_t *buf = malloc(n);
	EXPECT(buf != NULL, "no memory for %zu bytes", n);
	fill(buf, n, 11);
	long r = put(p, buf, n);
	const char *w = r == 0 ? same(p, buf, n) : "write failed";
	free(buf);
	vfs_unlink(p);
	return w;
}

static const char *t_persist(struct fssuite *s)
{
	char p[LIBFS_PATH_MAX], q[LIBFS_PATH_MAX];
	path(s, "kept", p);
	path(s, "gone", q);
	uint8_t buf[9000];
	fill(buf, sizeof buf, 12);
	EXPECT(put(p, buf, sizeof buf) == 0 && put(q, buf, 10) == 0, "write");
	EXPECT(vfs_unlink(q) == 0, "unlink");
	struct vfile *f;
	EXPECT(vfs_open(p, LIBFS_O_READ, 0, &f) == 0, "open");
	EXPECT(vfs_fsync(f) == 0, "fsync");
	vfs_close(f);
	EXPECT(s->remount(s->arg) == 0, "remount");
	const char *w = same(p, buf, sizeof buf);
	if (w)
		return w;
	struct libfs_stat st;
	EXPECT(vfs_stat(q, &st) == -ENOENT, "a removed file came back");
	EXPECT(vfs_unlink(p) == 0, "unlink");
	return NULL;
}

struct test {
	const char *name;
	const char *(*fn)(struct fssuite *);
	int need;                    /* 1 dirs, 2 rename, 3 big, 4 remount, 5 shared opens */
};

static const struct test tests[] = {
	{ "create-read-unlink", t_create_read_unlink, 0 },
	{ "sizes", t_sizes, 0 },
	{ "offsets-and-holes", t_offsets, 0 },
	{ "truncate-and-append", t_truncate_append, 0 },
	{ "many-files", t_many, 0 },
	{ "errors", t_errors, 0 },
	{ "directories", t_dirs, 1 },
	{ "rename", t_rename, 2 },
	{ "two-opens", t_two_opens, 5 },
	{ "large-file", t_big, 3 },
	{ "survives-remount", t_persist, 4 },
};

void fssuite_adapt(struct fssuite *s, const struct libfs_ops *ops, uint64_t big)
{
	s->type = ops->name;
	s->dirs = (ops->features & LIBFS_F_DIRS) != 0;
	s->rename = (ops->features & LIBFS_F_RENAME) != 0;
	s->name_max = (int)ops->name_max;
	s->atomic = (ops->features & LIBFS_F_ATOMIC) != 0;
	s->big = ops->file_max != 0 && ops->file_max < big ? ops->file_max : big;
}

/* Why test t cannot run here, or NULL. */
static const char *skip_reason(const struct fssuite *s, const struct test *t)
{
	const char *type = s->type ? s->type : "this file system";
	if (t->need == 1 && !s->dirs)
		snprintf(why, sizeof why, "%s has no directories (LIBFS_F_DIRS)", type);
	else if (t->need == 2 && !s->rename)
		snprintf(why, sizeof why, "%s has no rename (LIBFS_F_RENAME)", type);
	else if (t->need == 3 && !s->big)
		snprintf(why, sizeof why, "no large-file size given");
	else if (t->need == 4 && !s->remount)
		snprintf(why, sizeof why, "no way to remount given");
	else if (t->need == 5 && s->atomic)
		snprintf(why, sizeof why, "each open of %s is a copy, put whole at close "
		         "(LIBFS_F_ATOMIC)", type);
	else
		return NULL;
	return why;
}

int fssuite_run(struct fssuite *s)
{
	s->passed = s->failed = 0;
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		const struct test *t = &tests[i];
		const char *skip = skip_reason(s, t);
		if (skip != NULL) {
			printf("SKIP %s: %s\n", t->name, skip);
			continue;
		}
		const char *w = t->fn(s);
		if (w) {
			printf("FAIL %s: %s\n", t->name, w);
			s->failed++;
		} else {
			printf("PASS %s\n", t->name);
			s->passed++;
		}
	}
	printf("fssuite on %s: %d passed, %d failed\n", s->root, s->passed, s->failed);
	return s->failed;
}
