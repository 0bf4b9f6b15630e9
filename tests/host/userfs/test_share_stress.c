/*
 * test_share_stress.c - many processes on one shared lfs or fatfs
 * (docs/sharing.md, userfs/lfs/multi.c, userfs/fatfs/share.c), on the
 * host, with processes killed at random points of their operations,
 * checked against a model after every step.
 *
 * The QEMU test (fsshare model) kills workers at moments the scheduler
 * chooses, so a failure seldom comes back with its seed.  Here everything
 * is one thread and one random sequence: a run with a seed is the same run
 * every time.  Each step picks a process and runs one whole operation as
 * the VFS would (enter/leave around each call): put a file (create,
 * truncate, write, close), unlink, rename, read and compare any process's
 * file, sync, or unmount and mount again.  Processes that hold the lock
 * between operations (lfs's lease) let go of it first, as they do when
 * another process waits.  A kill is a countdown of exodisk requests: when
 * it runs out, the process's code is left by longjmp - in the middle of a
 * commit, a catch-up, a cleaning, wherever - and the process dies as the
 * kernel makes it die: its requests in flight finish first, then its lock
 * becomes DEAD and the exodisk forgets it.  A new process takes its place.
 *
 * The model: a live process's files are exactly what its operations made
 * (everything it did is published before another process takes the lock).
 * A dead process's files are as of some point between its last publish and
 * its death (the one operation it died in: whole, not at all, or for a
 * put, the file truncated with a prefix of the new bytes); the first look
 * after the death decides which, and from then on they stay so.  At the
 * end every process unmounts, fsck must find nothing wrong, and after a
 * reboot every file is as the model says.  fatfs: one process in four
 * (never the first) mounts read-only and only reads, so it must see a dead
 * writer's half-written directories as the next writer will (its journal).
 *
 *   test_share_stress [SEEDS [STEPS [FIRST [TYPE]]]]    default 12 seeds x 600 steps
 *                     of lfs and its seeds that once failed, then the same of
 *                     fatfs (TYPE: only that one)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include "tests/host/userfs/ufsfix.h"
#include "libos/kit/kit.h"
#include "userfs/lfs/lfs_int.h"
#include "userfs/fatfs/fat.h"

/* A killed process's memory is abandoned where its code stood, as the
 * kernel abandons a dead process's heap: not a leak of the library. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

extern uint32_t share_host_pid;
void share_host_kill(uint32_t pid);

#define NP     4                  /* processes alive at once                 */
#define NF     5                  /* files per process                       */
#define MAXP   256                /* processes in a run, the dead included   */
#define MAXSNAP 4096              /* states since a process last published   */
#define BIG    (160 * 1024)

static const char *OPTS;
static int is_lfs;
static struct ufx u;
static const struct libfs_ops *t;
static uint64_t rs;
static int verbose, paranoid;

struct fver { int64_t len; uint32_t tag; };   /* len -1: absent */

struct sproc {
	uint32_t pid;
	int alive, resolved;          /* resolved: dead, and its files decided */
	struct edc_host h;
	struct edc kedc;              /* h's transport, with the countdown       */
	uint64_t left;                /* requests until it dies; 0: never        */
	jmp_buf die;
	void *fs;
	struct fver cur[NF];
	/* States since it last published: snap[0] is what others saw last. */
	struct fver (*snap)[NF];
	uint32_t nsnap;
	/* The operation it died in (a put's prefix, a rename's both names). */
	int inop;
	struct fver want[NF];
	int putfile;
	int ro;                       /* fatfs: mounted read-only (reads only)   */
};

static struct sproc procs[MAXP];
static uint32_t nprocs;
static uint32_t tagc;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static uint8_t byte(uint32_t tag, uint64_t i)
{
	return (uint8_t)((tag * 2654435761u >> 13) ^ (i * 31 + (i >> 9)));
}

/* ---- the transport with a countdown ------------------------------------------------- */

static int64_t k_request(void *ctx, int op, struct ed_protector *prot, struct ed_buf *buf,
                         struct ed_operation *stuff)
{
	struct sproc *p = ctx;
	if (p->left != 0 && --p->left == 0)
		longjmp(p->die, 1);
	return p->h.edc.t->request(&p->h, op, prot, buf, stuff);
}

static void k_idle(void *ctx)
{
	struct sproc *p = ctx;
	p->h.edc.t->idle(&p->h);
}

static const uint64_t *k_fm_page(void *ctx, int unit, uint32_t i)
{
	struct sproc *p = ctx;
	return p->h.edc.t->fm_page(&p->h, unit, i);
}

static uint64_t k_nsectors(void *ctx, int unit)
{
	struct sproc *p = ctx;
	return p->h.edc.t->nsectors(&p->h, unit);
}

static const struct edc_transport k_transport = {
	.request = k_request, .idle = k_idle, .fm_page = k_fm_page, .nsectors = k_nsectors,
};

static void as(struct sproc *p)
{
	edc_set_default(&p->kedc);
	share_host_pid = p->pid;
}

static struct lfs *L(struct sproc *p)
{
	return p->fs;
}

/* The process's lease: lfs's and fatfs's mounts each hold one. */
static struct share *SH(struct sproc *p)
{
	return is_lfs ? &L(p)->sh : &((struct fatfs *)p->fs)->sh;
}

static const char *opts_of(const struct sproc *p)
{
	static char o[128];
	snprintf(o, sizeof o, "%s%s", OPTS, p->ro ? ",ro" : "");
	return o;
}

/* ---- the model ----------------------------------------------------------------------------- */

static void published(struct sproc *p)
{
	memcpy(p->snap[0], p->cur, sizeof p->cur);
	p->nsnap = 1;
}

static void did(struct sproc *p)
{
	if (p->fs != NULL && !SH(p)->held) {
		published(p);
		return;
	}
	if (p->nsnap == MAXSNAP) {
		fprintf(stderr, "test_share_stress: too many states unpublished\n");
		exit(1);
	}
	memcpy(p->snap[p->nsnap++], p->cur, sizeof p->cur);
}

static void name_of(char *s, const struct sproc *p, int f)
{
	sprintf(s, "d/p%u_%d", p->pid, f);
}

static int fail_at(const char *what, const struct sproc *p, int f, const char *why)
{
	fprintf(stderr, "test_share_stress: %s: process %u file %d: %s\n", what, p->pid, f, why);
	return 1;
}

/* Read file f of q through p: its length (-1 absent) and bytes in buf. */
static int64_t read_file(struct sproc *p, const struct sproc *q, int f, uint8_t *buf)
{
	char name[64];
	name_of(name, q, f);
	struct libfs_stat st;
	CHECK_EQ(t->enter(p->fs, 0), 0);
	int e = t->stat(p->fs, name, &st);
	t->leave(p->fs);
	if (e == -ENOENT)
		return -1;
	CHECK_EQ(e, 0);
	CHECK(st.size <= BIG);
	void *fh = t->file_size ? calloc(1, t->file_size) : NULL;
	CHECK_EQ(t->enter(p->fs, 0), 0);
	CHECK_EQ(t->open(p->fs, name, LIBFS_O_READ, 0, &fh), 0);
	long n = t->read(p->fs, fh, buf, BIG, 0);
	CHECK_EQ(t->close(p->fs, fh), 0);
	t->leave(p->fs);
	if (t->file_size)
		free(fh);
	CHECK_EQ(n, (long)st.size);
	return n;
}

static int same(const struct fver *v, int64_t len, const uint8_t *buf)
{
	if (v->len != len)
		return 0;
	for (int64_t i = 0; i < len; i++)
		if (buf[i] != byte(v->tag, (uint64_t)i))
			return 0;
	return 1;
}

/* A prefix of v's bytes (a put cut short). */
static int prefix(const struct fver *v, int64_t len, const uint8_t *buf)
{
	if (len < 0 || len > v->len)
		return 0;
	struct fver w = { len, v->tag };
	return same(&w, len, buf);
}

/* A dead process's files, as p reads them: decide which state they are
 * in (and keep it). */
static int resolve(struct sproc *p, struct sproc *q)
{
	static uint8_t buf[NF][BIG];
	int64_t len[NF];
	for (int f = 0; f < NF; f++)
		len[f] = read_file(p, q, f, buf[f]);
	for (uint32_t k = q->nsnap; k-- > 0;) {
		int f = 0;
		while (f < NF && same(&q->snap[k][f], len[f], buf[f]))
			f++;
		if (f == NF) {
			memcpy(q->cur, q->snap[k], sizeof q->cur);
			goto decided;
		}
	}
	if (q->inop) {
		/* The operation it died in: done whole, or a put cut short. */
		int f = 0;
		while (f < NF && (same(&q->want[f], len[f], buf[f]) ||
		                  (f == q->putfile && prefix(&q->want[f], len[f], buf[f]))))
			f++;
		if (f == NF) {
			memcpy(q->cur, q->want, sizeof q->cur);
			if (q->putfile >= 0)
				q->cur[q->putfile].len = len[q->putfile];
			goto decided;
		}
	}
	for (int f = 0; f < NF; f++)
		fprintf(stderr, "  file %d: %lld bytes (last published %lld, tag %u%s; last %lld)\n", f,
		        (long long)len[f], (long long)q->snap[0][f].len, q->snap[0][f].tag,
		        same(&q->snap[0][f], len[f], buf[f]) ? "" : ", other bytes", (long long)q->cur[f].len);
	return fail_at("after its death", q, -1, "its files are in no state it passed through");
decided:
	if (verbose)
		for (int f = 0; f < NF; f++)
			fprintf(stderr, "  %u's file %d decided: %lld bytes, tag %u\n", q->pid, f,
			        (long long)q->cur[f].len, q->cur[f].tag);
	q->resolved = 1;
	return 0;
}

/* Check q's file f through p against the model. */
static int check_file(struct sproc *p, struct sproc *q, int f)
{
	static uint8_t buf[BIG];
	if (!q->alive && !q->resolved)
		return resolve(p, q);
	int64_t len = read_file(p, q, f, buf);
	if (!same(&q->cur[f], len, buf)) {
		char why[128];
		snprintf(why, sizeof why, "read %lld bytes, the model says %lld (tag %u)", (long long)len,
		         (long long)q->cur[f].len, q->cur[f].tag);
		return fail_at("read", q, f, why);
	}
	return 0;
}

/* ---- processes ------------------------------------------------------------------------------ */

static void start(struct sproc *p)
{
	memset(p, 0, sizeof *p);
	p->pid = 100 + (uint32_t)(p - procs);
	p->snap = calloc(MAXSNAP, sizeof *p->snap);
	CHECK(p->snap != NULL);
	edc_host_init(&p->h, &u.f.h, u.f.ed);
	edc_init(&p->kedc, &k_transport, p);
	p->alive = 1;
	p->putfile = -1;
	for (int f = 0; f < NF; f++)
		p->cur[f].len = -1;
	published(p);
	/* fatfs: one process in four (not the first) reads only, and must
	 * see what others did whole - a dead one's rename too. */
	p->ro = !is_lfs && p != procs && rnd() % 4 == 0;
	as(p);
	CHECK_EQ(t->mount(opts_of(p), &p->fs), 0);
}

/* The kernel's exit: requests in flight finish, then the lock goes DEAD and
 * the exodisk forgets the process. */
static void die(struct sproc *p)
{
	while (p->h.client.registered && p->h.client.pending > 0)
		blk_poll();
	share_host_kill(p->pid);
	edc_host_exit(&p->h);
	share_lease_fini(SH(p));
	share_detach(SH(p));
	p->alive = 0;
	p->left = 0;
	p->fs = NULL;
	if (verbose)
		fprintf(stderr, "  process %u died (%s)\n", p->pid, p->inop ? "in an operation" : "idle");
}

/* Others keep the lock between their operations: they let go (publishing)
 * as they do when this one waits for it. */
static void others_let_go(struct sproc *me)
{
	for (uint32_t i = 0; i < nprocs; i++) {
		struct sproc *q = &procs[i];
		if (q == me || !q->alive || !SH(q)->held)
			continue;
		as(q);
		share_lease_drop(SH(q));
		CHECK(!SH(q)->held);
		published(q);
	}
	as(me);
}

static void put(struct sproc *p, int f, int64_t len)
{
	static uint8_t buf[BIG];
	char name[64];
	name_of(name, p, f);
	uint32_t tag = ++tagc;
	for (int64_t i = 0; i < len; i++)
		buf[i] = byte(tag, (uint64_t)i);
	memcpy(p->want, p->cur, sizeof p->cur);
	p->want[f] = (struct fver){ len, tag };
	p->putfile = f;
	p->inop = 1;
	void *fh = t->file_size ? calloc(1, t->file_size) : NULL;
	CHECK_EQ(t->enter(p->fs, 1), 0);
	CHECK_EQ(t->open(p->fs, name, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &fh), 0);
	t->leave(p->fs);
	CHECK_EQ(t->enter(p->fs, 1), 0);
	CHECK_EQ(t->write(p->fs, fh, buf, (size_t)len, 0), (long)len);
	t->leave(p->fs);
	CHECK_EQ(t->enter(p->fs, 1), 0);
	CHECK_EQ(t->close(p->fs, fh), 0);
	t->leave(p->fs);
	if (t->file_size)
		free(fh);
	p->inop = 0;
	p->putfile = -1;
	p->cur[f] = p->want[f];
}

static void unlink_f(struct sproc *p, int f)
{
	char name[64];
	name_of(name, p, f);
	memcpy(p->want, p->cur, sizeof p->cur);
	p->want[f].len = -1;
	p->inop = 1;
	CHECK_EQ(t->enter(p->fs, 1), 0);
	int e = t->unlink(p->fs, name);
	t->leave(p->fs);
	CHECK_EQ(e, p->cur[f].len < 0 ? -ENOENT : 0);
	p->inop = 0;
	p->cur[f].len = -1;
}

static void rename_f(struct sproc *p, int f, int g)
{
	char a[64], b[64];
	name_of(a, p, f);
	name_of(b, p, g);
	memcpy(p->want, p->cur, sizeof p->cur);
	if (p->cur[f].len >= 0 && f != g) {
		p->want[g] = p->cur[f];
		p->want[f].len = -1;
	}
	p->inop = 1;
	CHECK_EQ(t->enter(p->fs, 1), 0);
	int e = t->rename(p->fs, a, b);
	t->leave(p->fs);
	CHECK_EQ(e, p->cur[f].len < 0 ? -ENOENT : 0);
	p->inop = 0;
	memcpy(p->cur, p->want, sizeof p->cur);
}

/* One step of process p; 1 if the model disagrees. */
static int step(struct sproc *p)
{
	others_let_go(p);
	/* Dead processes' files are decided at the first look after. */
	for (uint32_t i = 0; i < nprocs; i++)
		if (!procs[i].alive && !procs[i].resolved && procs[i].snap != NULL && resolve(p, &procs[i]))
			return 1;
	uint64_t r = rnd() % 100;
	int f = (int)(rnd() % NF), g = (int)(rnd() % NF);
	if (p->ro && r < 97)
		r = 64 + r % 30;              /* a read */
	if (r < 97 && rnd() % 100 < 8)
		p->left = 1 + rnd() % 120;    /* it dies somewhere in this step */
	if (verbose)
		fprintf(stderr, "  %u%s: %s f%d g%d%s\n", p->pid, p->ro ? " (ro)" : "", r < 40 ? "put" : r < 52 ? "unlink" :
		        r < 64 ? "rename" : r < 94 ? "read" : r < 97 ? "sync" : "remount", f, g,
		        p->left ? " (dies)" : "");
	if (setjmp(p->die)) {
		die(p);
		return 0;
	}
	if (r < 40) {
		uint64_t s = rnd() % 100;
		int64_t len = s < 70 ? (int64_t)(rnd() % 3000) : s < 95 ? (int64_t)(rnd() % 20000)
		                                                      : (int64_t)(rnd() % BIG);
		put(p, f, len);
	} else if (r < 52) {
		unlink_f(p, f);
	} else if (r < 64) {
		rename_f(p, f, g);
	} else if (r < 94) {
		struct sproc *q = &procs[rnd() % nprocs];
		if (q->snap != NULL && check_file(p, q, f))
			return 1;
	} else if (r < 97) {
		CHECK_EQ(t->enter(p->fs, 1), 0);
		CHECK_EQ(t->sync(p->fs), 0);
		t->leave(p->fs);
	} else {
		/* Unmount and mount again (a new program, the same files). */
		CHECK_EQ(t->unmount(p->fs), 0);
		published(p);
		p->fs = NULL;
		CHECK_EQ(t->mount(opts_of(p), &p->fs), 0);
	}
	p->left = 0;
	did(p);
	if (verbose && is_lfs)
		fprintf(stderr, "     %u: seq %llu seg %llu ps %u next %llu cp %llu held %d\n", p->pid,
		        (unsigned long long)L(p)->seq, (unsigned long long)L(p)->seg, L(p)->ps,
		        (unsigned long long)L(p)->next, (unsigned long long)L(p)->cpseq, SH(p)->held);
	return 0;
}

static int check_all(struct sproc *p)
{
	for (uint32_t i = 0; i < nprocs; i++)
		for (int f = 0; f < NF; f++)
			if (check_file(p, &procs[i], f))
				return 1;
	return 0;
}

static void say(void *arg, const char *path, const char *what)
{
	(void)arg;
	fprintf(stderr, "  fsck: %s: %s\n", path, what);
}

static int run(uint64_t seed, int steps)
{
	rs = seed * 0x9e3779b97f4a7c15ull + 1;
	tagc = 0;
	ufx_new(&u, 131072, HD_POLLED, seed);
	uint64_t sb;
	CHECK_EQ(t->mkfs(OPTS, &sb), 0);
	ufx_stop(&u);
	memset(procs, 0, sizeof procs);
	nprocs = 0;
	for (int i = 0; i < NP; i++)
		start(&procs[nprocs++]);
	CHECK_EQ(t->enter(procs[0].fs, 1), 0);
	CHECK_EQ(t->mkdir(procs[0].fs, "d", 0755), 0);
	t->leave(procs[0].fs);
	int bad = 0, deaths = 0;
	for (int s = 0; s < steps && !bad; s++) {
		uint32_t live[NP], n = 0;
		for (uint32_t i = 0; i < nprocs; i++)
			if (procs[i].alive)
				live[n++] = i;
		if (n < NP && nprocs < MAXP) {
			start(&procs[nprocs++]);
			continue;
		}
		struct sproc *p = &procs[live[rnd() % n]];
		bad = step(p);
		deaths += !p->alive;
		if (paranoid && !bad && p->alive) {
			uint64_t keep = rs;
			others_let_go(p);
			bad = check_all(p);
			did(p);
			rs = keep;
			if (!bad) {
				/* fsck as a process of its own. */
				struct sproc *q = &procs[nprocs];
				memset(q, 0, sizeof *q);
				q->pid = 999;
				edc_host_init(&q->h, &u.f.h, u.f.ed);
				edc_init(&q->kedc, &k_transport, q);
				others_let_go(q);
				struct libfs_fsck ck = { .report = say };
				CHECK_EQ(t->fsck(OPTS, &ck), 0);
				edc_host_exit(&q->h);
				memset(q, 0, sizeof *q);
				if (ck.problems)
					bad = 1;
			}
			if (bad) {
				fprintf(stderr, "  (found after step %d); a new process's view:\n", s);
				struct sproc *q = &procs[nprocs];
				start(q);
				others_let_go(q);
				int wrong = 0;
				for (uint32_t i = 0; i < nprocs; i++)
					for (int f = 0; f < NF; f++)
						wrong += check_file(q, &procs[i], f);
				fprintf(stderr, "  (a new mount sees %d files wrong)\n", wrong);
			}
		}
	}
	/* Every process checks everything, then unmounts. */
	for (uint32_t i = 0; i < nprocs && !bad; i++) {
		struct sproc *p = &procs[i];
		if (!p->alive)
			continue;
		others_let_go(p);
		bad = check_all(p);
	}
	for (uint32_t i = 0; i < nprocs; i++) {
		struct sproc *p = &procs[i];
		if (!p->alive)
			continue;
		others_let_go(p);
		CHECK_EQ(t->unmount(p->fs), 0);
		edc_host_exit(&p->h);
		p->alive = 0;
		p->resolved = 1;           /* unmounted: nothing of it is lost */
	}
	struct libfs_fsck ck = { .report = say };
	if (!bad) {
		ufx_start(&u);
		CHECK_EQ(t->fsck(OPTS, &ck), 0);
		if (ck.problems != 0) {
			fprintf(stderr, "test_share_stress: seed %llu: fsck: %llu problems\n",
			        (unsigned long long)seed, (unsigned long long)ck.problems);
			bad = 1;
		}
		ufx_stop(&u);
	}
	if (!bad) {
		/* After a reboot, through a new process. */
		fx_remount(&u.f);
		struct sproc *p = &procs[nprocs];
		start(p);
		bad = check_all(p);
		CHECK_EQ(t->unmount(p->fs), 0);
		edc_host_exit(&p->h);
	}
	for (uint32_t i = 0; i <= nprocs && i < MAXP; i++)
		free(procs[i].snap);
	fx_free(&u.f);
	printf("test_share_stress: %s seed %llu: %d steps, %u processes, %d died: %s\n",
	       is_lfs ? "lfs" : "fatfs", (unsigned long long)seed, steps, nprocs, deaths, bad ? "WRONG" : "ok");
	return bad;
}

static int run_type(const char *type, int seeds, int steps, uint64_t first)
{
	is_lfs = strcmp(type, "lfs") == 0;
	OPTS = is_lfs ? "key=stress,seg=64,cpkib=256" : "key=stress";
	t = libfs_type(type);
	if (t == NULL || (!is_lfs && strcmp(type, "fatfs") != 0)) {
		fprintf(stderr, "test_share_stress: TYPE is lfs or fatfs\n");
		return 1;
	}
	int bad = 0;
	for (int i = 0; i < seeds; i++)
		bad |= run(first + (uint64_t)i, steps);
	return bad;
}

int main(int argc, char **argv)
{
	int seeds = argc > 1 ? atoi(argv[1]) : 12;
	int steps = argc > 2 ? atoi(argv[2]) : 600;
	uint64_t first = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	verbose = getenv("STRESS_VERBOSE") != NULL;
	paranoid = getenv("STRESS_PARANOID") != NULL;    /* check everything after every step */
	lfs_debug_sets = 1;
	int bad;
	if (argc > 4) {
		bad = run_type(argv[4], seeds, steps, first);
	} else {
		bad = run_type("lfs", seeds, steps, first);
		/* And, by default, lfs seeds that once failed: 2201 (a segment
		 * mapped by a process that died before committing the map, then
		 * written by the others - the map change was undone when the last
		 * of them exited), 167 (the same death seen only by a new mount:
		 * the others' copies of the map went on without the segment,
		 * mapping it again failed, and the log, left at its segment's end,
		 * wrote past its buffer). */
		static const uint64_t once[] = { 2201, 167 };
		for (size_t i = 0; argc == 1 && i < sizeof once / sizeof once[0]; i++)
			bad |= run(once[i], 800);
		bad |= run_type("fatfs", seeds, steps, first);
		/* And fatfs seeds that once failed: 408 (a dead process's
		 * uncommitted chunk, written into by others: vvol's adoption),
		 * 558 (a read-only mount joining before a death was settled
		 * trusted half-made checksums), 929 (only read-only processes
		 * left after a writer died mid-rename: the last of them leaving
		 * took the journal with it), 2105 (a writer died in a sync after
		 * its checksum table went out and before a FAT sector new to its
		 * chunk did: the checksums made again kept that sector's slot,
		 * and the next writer found the sector "damaged"). */
		static const uint64_t fonce[] = { 408, 558, 929, 2105 };
		for (size_t i = 0; argc == 1 && i < sizeof fonce / sizeof fonce[0]; i++)
			bad |= run(fonce[i], 600);
	}
	printf("test_share_stress: %s\n", bad ? "FAILED" : "ok");
	return bad;
}
