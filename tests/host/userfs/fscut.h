/*
 * fscut.h - a power-cut test any library file system can be put through,
 * on the kit's harness (powercut.h), through the mount table; what it may
 * expect comes from what the libFS states (struct libfs_ops: rename,
 * LIBFS_F_ATOMIC).
 *
 * The workload is a deterministic sequence of steps on a few files: write
 * at an offset (sometimes past the end, sometimes truncating first), then
 * fsync and close; unlink, then sync; rename (if the file system has it),
 * then sync.  Each step is acknowledged when it returned: from then on it
 * must survive a power cut.  After each cut the check mounts the file
 * system again and compares every file with the model:
 *
 *   - as of the last acknowledged step, or else as of the step in flight
 *     (the power failed during it);
 *   - for a file system whose writes are atomic per file (kvfs's puts),
 *     wholly one or the other; else byte by byte one or the other (an
 *     in-place write may be half done);
 *   - never a byte the workload did not write: the harness fills free
 *     sectors with 0xEE, and holes must read as zeros;
 *   - the listing names exactly the files that exist;
 *   - and the file system walks clean through its own operations
 *     (libfs_check: every name stats, every file reads back its size).
 */
#ifndef TESTS_USERFS_FSCUT_H
#define TESTS_USERFS_FSCUT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "tests/host/userfs/powercut.h"

#define FC_FILES 4
#define FC_MAX   12000

struct fc_state {
	int exists[FC_FILES];
	int fresh[FC_FILES];          /* the step that led here created or truncated it */
	uint32_t size[FC_FILES];
	uint8_t data[FC_FILES][FC_MAX];
};

struct fscut {
	const struct libfs_ops *ops;  /* the libFS (mkfs, features)         */
	const char *opts;             /* its mount (and mkfs) options       */
	int nsteps;
	struct fc_state *model;       /* [nsteps + 1]: after each step      */
};

static inline uint64_t fc_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static inline void fc_path(char *p, int i)
{
	snprintf(p, 32, "/t/f%d", i);
}

/* The steps, on the model or (do_it) on the file system too.  Returns the
 * steps done (fewer after an error). */
static inline int fc_steps(struct fscut *c, struct pcut *pc, int do_it)
{
	uint64_t rs = 12345;
	static uint8_t buf[FC_MAX];
	for (int s = 0; s < c->nsteps; s++) {
		struct fc_state *m = &c->model[s + 1];
		const struct fc_state *before = &c->model[s];
		if (!do_it) {
			*m = *before;
			memset(m->fresh, 0, sizeof m->fresh);
		}
		int op = (int)(fc_rand(&rs) % 10), f = (int)(fc_rand(&rs) % FC_FILES);
		int g = (int)(fc_rand(&rs) % FC_FILES);
		char p[32], q[32];
		fc_path(p, f);
		fc_path(q, g);
		if (op < 7 || !before->exists[f]) {
			uint32_t off = (uint32_t)(fc_rand(&rs) % 6000), n = 1 + (uint32_t)(fc_rand(&rs) % 5000);
			int trunc = fc_rand(&rs) % 4 == 0;
			memset(buf, 'a' + (s % 26), n);
			if (do_it) {
				struct vfile *v;
				int flags = LIBFS_O_WRITE | LIBFS_O_CREAT | (trunc ? LIBFS_O_TRUNC : 0);
				if (vfs_open(p, flags, 0644, &v) < 0)
					return s;
				long w = vfs_pwrite(v, buf, n, off);
				int e = vfs_fsync(v);
				int e2 = vfs_close(v);
				if (w != (long)n || e < 0 || e2 < 0)
					return s;
			} else {
				if (trunc || !before->exists[f]) {
					memset(m->data[f], 0, FC_MAX);
					m->size[f] = 0;
					m->fresh[f] = 1;
				}
				m->exists[f] = 1;
				memcpy(m->data[f] + off, buf, n);
				if (off + n > m->size[f])
					m->size[f] = off + n;
			}
		} else if (op < 9 || !(c->ops->features & LIBFS_F_RENAME) || f == g) {
			if (do_it && (vfs_unlink(p) < 0 || vfs_sync() < 0))
				return s;
			if (!do_it) {
				m->exists[f] = 0;
				m->size[f] = 0;
				memset(m->data[f], 0, FC_MAX);
			}
		} else {
			if (do_it && (vfs_rename(p, q) < 0 || vfs_sync() < 0))
				return s;
			if (!do_it) {
				m->exists[g] = 1;
				m->size[g] = m->size[f];
				memcpy(m->data[g], m->data[f], FC_MAX);
				m->exists[f] = 0;
				m->size[f] = 0;
				memset(m->data[f], 0, FC_MAX);
			}
		}
		if (do_it)
			pc_ack(pc, (uint64_t)s + 1);
	}
	return c->nsteps;
}

static inline int fc_prepare(struct pcut *pc)
{
	struct fscut *c = pc->arg;
	uint64_t anchor;
	return c->ops->mkfs(c->opts, &anchor);
}

static inline int fc_work(struct pcut *pc)
{
	struct fscut *c = pc->arg;
	if (vfs_mount("/t", c->ops->name, c->opts, 1) < 0)
		return -1;
	fc_steps(c, pc, 1);
	return vfs_umount("/t");
}

/* Does file i read as one of the two states (byte by byte unless atomic)?
 * A file the step in flight creates or truncates may also be empty, or (not
 * atomic) hold zeros where neither state has them yet. */
static inline int fc_file_ok(struct fscut *c, int i, const struct fc_state *a,
                             const struct fc_state *b)
{
	char p[32];
	static uint8_t got[FC_MAX + 1];
	fc_path(p, i);
	struct vfile *v;
	int r = vfs_open(p, LIBFS_O_READ, 0, &v);
	if (r == -ENOENT)
		return !a->exists[i] || !b->exists[i];
	if (r < 0 || (!a->exists[i] && !b->exists[i])) {
		if (r == 0)
			vfs_close(v);
		fprintf(stderr, "fscut: %s: open %d, exists %d/%d\n", p, r, a->exists[i], b->exists[i]);
		return 0;
	}
	long n = vfs_pread(v, got, sizeof got, 0);
	vfs_close(v);
	int whole_a = a->exists[i] && n == (long)a->size[i] && memcmp(got, a->data[i], (size_t)n) == 0;
	int whole_b = b->exists[i] && n == (long)b->size[i] && memcmp(got, b->data[i], (size_t)n) == 0;
	int fresh = b->fresh[i] && a != b;
	if (whole_a || whole_b || (fresh && n == 0))
		return 1;
	if ((c->ops->features & LIBFS_F_ATOMIC) || n < 0 || (n != (long)a->size[i] && n != (long)b->size[i])) {
		fprintf(stderr, "fscut: %s: %ld bytes, neither state (%u or %u bytes)%s\n", p, n,
		        a->size[i], b->size[i], n == (long)a->size[i] || n == (long)b->size[i] ?
		        ": the contents differ" : "");
		return 0;
	}
	for (long k = 0; k < n; k++)
		if (got[k] != a->data[i][k] && got[k] != b->data[i][k] && !(fresh && got[k] == 0)) {
			fprintf(stderr, "fscut: %s: byte %ld is %#x, not %#x or %#x\n", p, k, got[k],
			        a->data[i][k], b->data[i][k]);
			return 0;
		}
	return 1;
}

static inline int fc_check(struct pcut *pc)
{
	struct fscut *c = pc->arg;
	int r = vfs_mount("/t", c->ops->name, c->opts, 1);
	if (r < 0) {
		fprintf(stderr, "fscut: %s: mount after the cut: %d\n", c->ops->name, r);
		return 1;
	}
	uint64_t k = pc->acked;
	const struct fc_state *a = &c->model[k], *b = &c->model[k < (uint64_t)c->nsteps ? k + 1 : k];
	int bad = 0;
	for (int i = 0; i < FC_FILES; i++)
		bad += !fc_file_ok(c, i, a, b);
	/* The listing: exactly the files that open. */
	struct vfile *d;
	struct libfs_dirent de;
	int listed = 0, exist = 0;
	for (int i = 0; i < FC_FILES; i++) {
		struct libfs_stat st;
		char p[32];
		fc_path(p, i);
		exist += vfs_stat(p, &st) == 0;
	}
	if (vfs_open("/t", LIBFS_O_READ | LIBFS_O_DIR, 0, &d) == 0) {
		while (vfs_readdir(d, &de) == 1)
			listed += strcmp(de.name, ".") != 0 && strcmp(de.name, "..") != 0;
		vfs_close(d);
	}
	if (listed != exist) {
		fprintf(stderr, "fscut: %d files listed, %d exist\n", listed, exist);
		bad++;
	}
	if ((r = vfs_umount("/t")) < 0) {
		fprintf(stderr, "fscut: unmount after the check: %d\n", r);
		bad++;
	}
	/* And what any program would trip over, through its operations. */
	struct libfs_fsck ck = { 0 };
	if ((r = libfs_check(c->ops, c->opts, &ck)) < 0 || ck.problems != 0) {
		fprintf(stderr, "fscut: walk after the cut: %d, %s: %llu problems\n", r, ck.summary,
		        (unsigned long long)ck.problems);
		bad++;
	}
	return bad;
}

/* Cut the power at most max_runs times, evenly over the workload's requests
 * (at every request if there are no more).  0: all well. */
static inline int fscut_run(struct fscut *c, int nsteps, int max_runs, uint64_t seed)
{
	static struct fc_state models[64];
	if (nsteps > 63)
		nsteps = 63;
	c->nsteps = nsteps;
	c->model = models;
	memset(&models[0], 0, sizeof models[0]);
	fc_steps(c, NULL, 0);
	struct pcut pc = { .name = c->ops->name, .nsectors = 16384, .seed = seed,
	                   .prepare = fc_prepare, .work = fc_work, .check = fc_check, .arg = c };
	int failed = pc_run_spread(&pc, max_runs);
	printf("fscut: %s: %d steps, %llu requests, %llu power cuts, %d failed\n", c->ops->name,
	       nsteps, (unsigned long long)pc.requests, (unsigned long long)pc.runs - 1, failed);
	pc_free(&pc);
	return failed;
}

#endif
