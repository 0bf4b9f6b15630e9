/*
 * fsshare.c - many processes using one library file system at once
 * (docs/sharing.md), checked against a model.
 *
 *   fsshare model DIR P N SEED K [R]
 *                                    P workers each do N random operations
 *                                    on their own files in DIR (puts of up
 *                                    to 12 KB, unlinks, renames and, where
 *                                    opens share one file, appends of
 *                                    records to one log all of them share);
 *                                    K of them are killed at random moments.
 *                                    Then every file must be as its
 *                                    worker's model says: as of the last
 *                                    operation it finished (a killed one:
 *                                    the last it published, see below), or
 *                                    the one it was killed in (whole; or empty, if
 *                                    its open made the file; or for a file
 *                                    system without LIBFS_F_ATOMIC, a
 *                                    prefix of it); the log must hold each
 *                                    worker's records in order, none lost
 *                                    or torn; and the walk (libfs_check)
 *                                    must find nothing wrong.  R: so many
 *                                    runs, seeds SEED, SEED+1, ...
 *   fsshare bench DIR P N [dirs]   P processes each create N 10 KB files
 *                                    in DIR (dirs: each in a directory of
 *                                    its own, DIR/dI), against one process
 *                                    creating P*N (the same directories):
 *                                    files per second and the ratio
 *   fsshare poll DIR N             a writer appends N times to a file a
 *                                    reader polls: the longest time from a
 *                                    write returning to the reader seeing it
 *
 * Workers report each finished operation in a shared segment the parent
 * also maps (libos/share.h), so the parent knows where a killed one was.
 * The exit status is 1 when anything is wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "libos/exo.h"
#include "libos/files.h"
#include "libos/share.h"
#include "libos/libfs.h"

#define NFILES  6
#define MAXLEN  12000
#define MAXW    8
#define RECLEN  16
#define LOG     "sharelog"

extern char **environ;

struct progress {                 /* in the shared segment */
	struct share_area h;
	uint32_t done[MAXW];          /* operations finished, per worker */
	uint64_t wrote_at;            /* poll: when the last write returned (ns) */
	uint64_t wrote_size;
};

static struct progress *prog;
static const char *dir;
static int atomic;                /* the file system puts whole files only */

static struct progress *attach_progress(void)
{
	static struct share s;
	uint8_t name[SHSEG_NAME] = "fsshare-prog";
	if (share_attach(&s, name, sizeof(struct progress)) < 0) {
		printf("fsshare: no shared segment\n");
		exit(2);
	}
	return (struct progress *)s.a;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint8_t byte_of(int id, int k, uint32_t i)
{
	return (uint8_t)(id * 131 + k * 17 + i * 7 + (i >> 8));
}

/* One worker's files: what each holds (the op that wrote it), by model. */
struct model {
	int exists[NFILES], ver[NFILES];
	uint32_t len[NFILES];
};

enum { PUT, UNLINK, RENAME, APPEND };

struct op {
	int kind, j, j2;
	uint32_t len;
};

/* Worker id's k-th operation, from the seed alone. */
static struct op op_at(uint64_t seed, int id, int k)
{
	uint64_t s = seed * 1000003u + (uint64_t)id * 7919u + (uint64_t)k * 104729u + 1;
	rnd(&s);
	uint64_t r = rnd(&s);
	struct op o = { PUT, (int)(r % NFILES), (int)((r % NFILES + 1) % NFILES),
	                1 + (uint32_t)((r >> 16) % MAXLEN) };
	int c = (int)((r >> 8) % 10);
	o.kind = c < 5 ? PUT : c < 7 ? UNLINK : c < 9 ? RENAME : APPEND;
	return o;
}

static void apply(struct model *m, struct op o, int k, int shared_log)
{
	switch (o.kind) {
	case APPEND:
		if (shared_log)
			break;
		/* fall through: without a shared log it is a put */
	case PUT:
		m->exists[o.j] = 1, m->ver[o.j] = k, m->len[o.j] = o.len;
		break;
	case UNLINK:
		m->exists[o.j] = 0;
		break;
	case RENAME:
		if (m->exists[o.j]) {
			m->exists[o.j2] = 1, m->ver[o.j2] = m->ver[o.j], m->len[o.j2] = m->len[o.j];
			m->exists[o.j] = 0;
		}
		break;
	}
}

static void path_of(char *p, int id, int j)
{
	sprintf(p, "%s/w%df%d", dir, id, j);
}

static int do_op(int id, int k, struct op o, int shared_log)
{
	char p[256], q[256];
	static uint8_t buf[MAXLEN];
	path_of(p, id, o.j);
	if (o.kind == APPEND && shared_log) {
		char rec[40];
		snprintf(rec, sizeof rec, "w%02u k%010u\n", (unsigned)id % 100, (unsigned)k);
		sprintf(q, "%s/%s", dir, LOG);
		int fd = open(q, O_WRONLY | O_CREAT | O_APPEND, 0644);
		int ok = fd >= 0 && write(fd, rec, RECLEN) == RECLEN;
		return (fd >= 0 && close(fd) == 0 && ok) ? 0 : -1;
	}
	if (o.kind == PUT || o.kind == APPEND) {
		for (uint32_t i = 0; i < o.len; i++)
			buf[i] = byte_of(id, k, i);
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int ok = fd >= 0 && write(fd, buf, o.len) == (ssize_t)o.len;
		return (fd >= 0 && close(fd) == 0 && ok) ? 0 : -1;
	}
	if (o.kind == UNLINK)
		return unlink(p) == 0 || errno == ENOENT ? 0 : -1;
	path_of(q, id, o.j2);
	return rename(p, q) == 0 || errno == ENOENT ? 0 : -1;
}

static int worker(int id, int n, uint64_t seed, int shared_log)
{
	prog = attach_progress();
	for (int k = 0; k < n; k++) {
		if (do_op(id, k, op_at(seed, id, k), shared_log) < 0) {
			printf("fsshare: worker %d op %d: %s\n", id, k, strerror(errno));
			return 1;
		}
		prog->done[id] = (uint32_t)k + 1;
	}
	return 0;
}

/* Does file j of worker id hold what model state m says?  Or, when
 * prefix_ok is 1, a prefix of it; when 2, nothing (a put killed between
 * the open that created the file and the close that put its value). */
static int holds(int id, int j, const struct model *m, int prefix_ok)
{
	char p[256];
	static uint8_t buf[MAXLEN + 1];
	path_of(p, id, j);
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		return !m->exists[j];
	ssize_t got = read(fd, buf, sizeof buf);
	close(fd);
	if (!m->exists[j] || got < 0 || (uint32_t)got > m->len[j])
		return 0;
	if ((uint32_t)got < m->len[j] && !(prefix_ok == 1 || (prefix_ok == 2 && got == 0)))
		return 0;
	for (uint32_t i = 0; i < (uint32_t)got; i++)
		if (buf[i] != byte_of(id, m->ver[j], i))
			return 0;
	return 1;
}

static int check_log(int p, uint64_t seed, const int *killed)
{
	char q[256];
	sprintf(q, "%s/%s", dir, LOG);
	int fd = open(q, O_RDONLY);
	if (fd < 0)
		return 0;                 /* no appends happened: checked below */
	int next[MAXW] = { 0 }, bad = 0;
	char rec[RECLEN + 1];
	ssize_t r;
	while ((r = read(fd, rec, RECLEN)) == RECLEN) {
		int id, k;
		rec[RECLEN] = 0;
		if (sscanf(rec, "w%2d k%10d", &id, &k) != 2 || id < 0 || id >= p || rec[RECLEN - 1] != '\n') {
			printf("fsshare: log: a torn or foreign record\n");
			bad = 1;
			break;
		}
		/* The next append of this worker's, in order. */
		while (next[id] < k && op_at(seed, id, next[id]).kind != APPEND)
			next[id]++;
		if (next[id] != k || op_at(seed, id, k).kind != APPEND) {
			printf("fsshare: log: worker %d's record %d is out of order\n", id, k);
			bad = 1;
		}
		next[id] = k + 1;
	}
	close(fd);
	if (r != 0) {
		printf("fsshare: log: a partial record at its end\n");
		bad = 1;
	}
	/* Every append a worker finished is there (a killed one's may have
	 * been lost with what it had not published). */
	for (int id = 0; id < p; id++)
		for (uint32_t k = (uint32_t)next[id]; !killed[id] && k < prog->done[id]; k++)
			if (op_at(seed, id, (int)k).kind == APPEND) {
				printf("fsshare: log: worker %d's finished append %u is lost\n", id, k);
				bad = 1;
			}
	return bad;
}

static int spawn_worker(const char *self, int id, int n, uint64_t seed, int shared_log)
{
	char a[4][24];
	snprintf(a[0], 24, "%d", id);
	snprintf(a[1], 24, "%d", n);
	snprintf(a[2], 24, "%llu", (unsigned long long)seed);
	snprintf(a[3], 24, "%d", shared_log);
	char *argv[] = { (char *)self, "work", (char *)dir, a[0], a[1], a[2], a[3], NULL };
	return exo_spawn("/bin/fsshare", argv, environ);
}

static int model_test(int p, int n, uint64_t seed, int nkill)
{
	struct libfs_statfs st;
	if (fs_statfs(dir, &st) < 0 || libfs_type(st.type) == NULL) {
		printf("fsshare: %s: no file system\n", dir);
		return 1;
	}
	atomic = (libfs_type(st.type)->features & LIBFS_F_ATOMIC) != 0;
	int shared_log = !atomic;     /* one file many processes append to */
	prog = attach_progress();
	memset(prog->done, 0, sizeof prog->done);
	char q[256];
	for (int id = 0; id < MAXW; id++)        /* start from nothing */
		for (int j = 0; j < NFILES; j++) {
			path_of(q, id, j);
			unlink(q);
		}
	sprintf(q, "%s/%s", dir, LOG);
	unlink(q);
	fs_release();                 /* nothing of ours held while they run */
	int pid[MAXW], killed[MAXW] = { 0 }, status;
	for (int i = 0; i < p; i++)
		if ((pid[i] = spawn_worker("fsshare", i, n, seed, shared_log)) < 0) {
			printf("fsshare: spawn: %s\n", exo_strerror(pid[i]));
			return 1;
		}
	uint64_t s = seed * 2654435761u + 17;
	for (int i = 0; i < nkill && i < p; i++) {
		exo_sleep_ns((5 + rnd(&s) % 60) * 1000000ull);
		int victim = (int)(rnd(&s) % (uint64_t)p);
		if (!killed[victim] && exo_kill(pid[victim]) == 0)
			killed[victim] = 1;
	}
	int bad = 0;
	for (int i = 0; i < p; i++) {
		exo_wait(pid[i], &status);
		killed[i] = killed[i] && status != 0;
		if (status != 0 && !killed[i]) {
			printf("fsshare: worker %d exited with %d\n", i, status);
			bad = 1;
		}
	}
	/* Each worker's files against its model.  One that finished: as of
	 * its last operation.  One killed: as of the last operation it made
	 * visible to the others - every one it finished, for a file system
	 * that publishes each operation (kvfs, flatfs), or fewer for one that
	 * publishes when another process needs the lock (unixfs: what a
	 * killed process had not published is lost, as in a crash) - or the
	 * one it was killed in. */
	for (int id = 0; id < p; id++) {
		uint32_t done = prog->done[id];
		int ok = 0;
		for (int32_t upto = (int32_t)done; upto >= 0 && !ok; upto--) {
			struct model a = { { 0 } }, b;
			for (uint32_t k = 0; k < (uint32_t)upto; k++)
				apply(&a, op_at(seed, id, (int)k), (int)k, shared_log);
			b = a;
			if (killed[id] && (uint32_t)upto < (uint32_t)n)
				apply(&b, op_at(seed, id, upto), upto, shared_log);
			ok = 1;
			for (int j = 0; j < NFILES; j++) {
				int partial = !killed[id] ? 0 : !atomic ? 1 : a.exists[j] ? 0 : 2;
				ok &= holds(id, j, &a, 0) || holds(id, j, &b, partial);
			}
			if (!killed[id])
				break;
		}
		if (!ok) {
			printf("fsshare: worker %d%s after %u operations: its files are wrong\n",
			       id, killed[id] ? " (killed)" : "", done);
			bad = 1;
		}
	}
	if (shared_log)
		bad |= check_log(p, seed, killed);
	/* And the file system walks clean, in another process. */
	const char *pre, *type, *opts;
	int mounted;
	for (int i = 0; fs_mount_info(i, &pre, &type, &opts, &mounted) == 0; i++)
		if (strcmp(pre, dir) == 0) {
			char *argv[] = { "fsck", "-t", (char *)type, (char *)opts, NULL };
			fs_release();
			int fpid = exo_spawn("/bin/fsck", argv, environ);
			if (fpid < 0 || exo_wait(fpid, &status) < 0 || status != 0) {
				printf("fsshare: fsck -t %s %s: status %d\n", type, opts, status);
				bad = 1;
			}
		}
	int nk = 0;
	for (int i = 0; i < p; i++)
		nk += killed[i];
	printf("fsshare: %s: %d workers x %d operations, seed %llu, %d killed: %s\n", st.type,
	       p, n, (unsigned long long)seed, nk, bad ? "WRONG" : "model ok");
	return bad;
}

/* ---- bench and poll --------------------------------------------------------- */

/* File k of creator id: in DIR, or with dirs, in DIR/dI where I counts
 * blocks of `per` files (so one creator of P*N files fills the same P
 * directories as P creators of N). */
static void bench_path(char *p, size_t size, int id, int k, int per)
{
	if (per > 0)
		snprintf(p, size, "%s/d%d/b%dn%d", dir, (id * per + k) / per, id, k);
	else
		snprintf(p, size, "%s/b%dn%d", dir, id, k);
}

static int creator(int id, int n, int per)
{
	static uint8_t buf[10240];
	char p[256];
	memset(buf, id, sizeof buf);
	for (int k = 0; k < n; k++) {
		bench_path(p, sizeof p, id, k, per);
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf || close(fd) < 0) {
			printf("fsshare: create %s: %s\n", p, strerror(errno));
			return 1;
		}
	}
	return 0;
}

static void clean(int p, int n, int per)
{
	char q[256];
	for (int id = 0; id < p; id++)
		for (int k = 0; k < n; k++) {
			bench_path(q, sizeof q, id, k, per);
			unlink(q);
		}
	fs_release();
}

/* P processes creating n files each: seconds. */
static double run_creators(int p, int n, int per)
{
	char a[3][24];
	int pid[MAXW], status, bad = 0;
	uint64_t t0 = exo_time();
	for (int i = 0; i < p; i++) {
		snprintf(a[0], 24, "%d", i);
		snprintf(a[1], 24, "%d", n);
		snprintf(a[2], 24, "%d", per);
		char *argv[] = { "fsshare", "create", (char *)dir, a[0], a[1], a[2], NULL };
		pid[i] = exo_spawn("/bin/fsshare", argv, environ);
	}
	for (int i = 0; i < p; i++)
		if (pid[i] < 0 || exo_wait(pid[i], &status) < 0 || status != 0)
			bad = 1;
	double s = (double)exo_time_to_ns(exo_time() - t0) / 1e9;
	return bad ? -1 : s;
}

static int bench(int p, int n, int dirs)
{
	int per = dirs ? n : 0;
	if (dirs)
		for (int i = 0; i < p; i++) {
			char q[256];
			snprintf(q, sizeof q, "%s/d%d", dir, i);
			if (mkdir(q, 0755) < 0 && errno != EEXIST) {
				printf("fsshare: mkdir %s: %s\n", q, strerror(errno));
				return 1;
			}
		}
	fs_release();
	double one = run_creators(1, p * n, per);
	clean(1, p * n, per);
	double many = run_creators(p, n, per);
	clean(p, n, per);
	if (one < 0 || many < 0) {
		printf("fsshare: bench: a creator failed\n");
		return 1;
	}
	printf("fsshare bench%s: 1 process x %d files: %.0f files/s; %d processes x %d: %.0f "
	       "files/s; ratio %.2f\n", dirs ? " (a directory each)" : "", p * n, p * n / one, p,
	       n, p * n / many, one / many);
	return 0;
}

static int poll_test(int n)
{
	char p[256];
	struct libfs_statfs fst;
	if (fs_statfs(dir, &fst) < 0 || libfs_type(fst.type) == NULL ||
	    (libfs_type(fst.type)->features & LIBFS_F_ATOMIC)) {
		printf("fsshare poll: %s: each open is a copy, seen at close (LIBFS_F_ATOMIC)\n", dir);
		return 0;
	}
	snprintf(p, sizeof p, "%s/polled", dir);
	unlink(p);
	prog = attach_progress();
	prog->wrote_size = 0;
	fs_release();
	char a[24];
	snprintf(a, sizeof a, "%d", n);
	char *argv[] = { "fsshare", "append", (char *)dir, a, NULL };
	int pid = exo_spawn("/bin/fsshare", argv, environ), status = 0;
	if (pid < 0) {
		printf("fsshare poll: spawn: %s\n", exo_strerror(pid));
		return 1;
	}
	/* Poll until every append is seen - or until the appender has
	 * exited and a last look finds nothing more (it failed, or was
	 * killed: waiting on would never end). */
	uint64_t worst = 0, seen = 0, want = (uint64_t)n * RECLEN;
	int exited = 0;
	struct stat st;
	while (seen < want) {
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > seen) {
			uint64_t now = exo_time_to_ns(exo_time());
			if (prog->wrote_size >= (uint64_t)st.st_size && now - prog->wrote_at > worst)
				worst = now - prog->wrote_at;
			seen = (uint64_t)st.st_size;
		} else if (exited) {
			break;
		} else if (exo_wait_opts(pid, &status, WAIT_NOHANG) == pid) {
			exited = 1;           /* look once more: its last append */
			continue;
		}
		exo_yield();
	}
	if (!exited)
		exo_wait(pid, &status);
	if (seen < want) {
		printf("fsshare poll: the appender exited with status %d after %llu of %d appends\n",
		       status, (unsigned long long)(seen / RECLEN), n);
		return 1;
	}
	printf("fsshare poll: %d appends seen by a polling reader, the slowest %llu us after "
	       "its write returned (a tick is %d us)\n", n, (unsigned long long)(worst / 1000),
	       1000000 / 100);
	return status != 0 || worst > 10000000ull;
}

static int appender(int n)
{
	char p[256], rec[40];
	snprintf(p, sizeof p, "%s/polled", dir);
	prog = attach_progress();
	int fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0) {
		printf("fsshare append: open %s: %s\n", p, strerror(errno));
		return 1;
	}
	for (int k = 0; k < n; k++) {
		snprintf(rec, sizeof rec, "append %08u\n", (unsigned)k % 100000000u);
		if (write(fd, rec, RECLEN) != RECLEN) {
			printf("fsshare append: write %s: %s\n", p, strerror(errno));
			return 1;
		}
		prog->wrote_at = exo_time_to_ns(exo_time());
		prog->wrote_size = (uint64_t)(k + 1) * RECLEN;
		exo_sleep_ns(3000000);
	}
	if (close(fd) < 0) {
		printf("fsshare append: close %s: %s\n", p, strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3)
		dir = argv[2];
	if (argc >= 4 && (atoi(argv[3]) < 1 || atoi(argv[3]) > MAXW) && strcmp(argv[1], "poll") != 0 &&
	    strcmp(argv[1], "append") != 0 && strcmp(argv[1], "work") != 0 && strcmp(argv[1], "create") != 0) {
		fprintf(stderr, "fsshare: 1 to %d processes\n", MAXW);
		return 2;
	}
	if ((argc == 7 || argc == 8) && strcmp(argv[1], "model") == 0) {
		int bad = 0, runs = argc == 8 ? atoi(argv[7]) : 1;
		for (int r = 0; r < runs; r++)
			bad |= model_test(atoi(argv[3]), atoi(argv[4]),
			                  strtoull(argv[5], NULL, 0) + (uint64_t)r, atoi(argv[6]));
		return bad;
	}
	if (argc == 7 && strcmp(argv[1], "work") == 0)
		return worker(atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 0), atoi(argv[6]));
	if ((argc == 5 || argc == 6) && strcmp(argv[1], "bench") == 0)
		return bench(atoi(argv[3]), atoi(argv[4]), argc == 6 && strcmp(argv[5], "dirs") == 0);
	if (argc == 6 && strcmp(argv[1], "create") == 0)
		return creator(atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (argc == 4 && strcmp(argv[1], "poll") == 0)
		return poll_test(atoi(argv[3]));
	if (argc == 4 && strcmp(argv[1], "append") == 0)
		return appender(atoi(argv[3]));
	fprintf(stderr, "usage: fsshare model DIR P N SEED K [RUNS] | bench DIR P N [dirs] | "
	        "poll DIR N\n");
	return 2;
}
