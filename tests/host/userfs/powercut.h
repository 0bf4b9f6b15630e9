/*
 * powercut.h - the libFS kit's power-cut harness for host tests: run a
 * workload on a file system, cut the power at every disk request it makes
 * (or at chosen ones), reboot, and check what survived.
 *
 * It is built on ufsfix.h's machine: an exodisk core over a test disk with
 * a volatile write cache, one simulated process.  A run:
 *
 *   1. The disk as `prepare` left it (made once, cleanly shut down, then
 *      restored byte for byte before every run), the exodisk mounted.
 *   2. `work` runs; after `cut` more disk requests have started, the power
 *      fails: every cached sector and every write in flight reaches the
 *      medium or not, each independently (even cuts), or none of them does
 *      (odd cuts: HD_KEEP_NONE), and from then on every request
 *      fails (BLK_E_IO), so the workload stops at its next error.  Before
 *      it does, it reports each state it knows to be durable with
 *      pc_ack() - an fsync returned, a close of a put-on-close value.
 *   3. The process dies (vfs_abandon: nothing written back), the machine
 *      reboots, the exodisk recovers and its checker must find nothing
 *      (fx_check_live).  A run whose workload finished before its cut has
 *      the power fail then instead.
 *   4. `check` mounts the file system and checks it against the last
 *      acknowledged state (pc->acked), then unmounts.
 *
 * pc_run first runs the workload uncut to count its requests N, then cuts
 * at from, from + stride, ... up to N (every request with stride 1);
 * pc_run_spread cuts at most a given number of times, evenly spread.  Each
 * run's crash outcome is seeded by the run, so a failure is reproducible:
 * pc_run prints the cut and seed, and pc_one repeats that run.
 *
 * Unallocated sectors of the disk are filled with 0xEE before `prepare`
 * (PC_GARBAGE): a file that shows such bytes shows sectors it never wrote
 * - remanence, or metadata made durable before its data.
 */
#ifndef TESTS_USERFS_POWERCUT_H
#define TESTS_USERFS_POWERCUT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/host/userfs/ufsfix.h"

#define PC_GARBAGE 0xEE

struct pcut {
	/* set by the test */
	const char *name;
	uint64_t nsectors;
	uint64_t seed;
	int (*prepare)(struct pcut *pc);    /* on the fresh disk: mkfs, files; 0 */
	int (*work)(struct pcut *pc);       /* until done (0) or an error     */
	int (*check)(struct pcut *pc);      /* after the reboot: 0 = all well */
	void *arg;
	int verbose;
	int quiet;                          /* failures expected: do not report them */
	/* the harness's */
	struct ufx u;
	uint8_t *image;                     /* the disk after prepare          */
	uint64_t acked;                     /* last state work acknowledged     */
	int64_t cut;                        /* requests before the power fails  */
	int cut_fired;                      /* the power failed during work     */
	uint64_t runs, requests;
};

/* The workload reached state `step`, durably. */
static inline void pc_ack(struct pcut *pc, uint64_t step)
{
	pc->acked = step;
}

static inline void pc_prepare(struct pcut *pc)
{
	ufx_new(&pc->u, pc->nsectors, HD_POLLED, pc->seed);
	struct hostdisk *hd = &pc->u.f.hd;
	for (uint64_t s = 0; s < hd->nsectors; s++)
		if (!fx_allocated(&pc->u.f, s))
			memset(hd->medium + s * BLK_SECTOR_SIZE, PC_GARBAGE, BLK_SECTOR_SIZE);
	pc->acked = 0;
	CHECK_EQ(pc->prepare(pc), 0);
	vfs_shutdown();
	/* A clean shutdown: everything in the disk's cache reaches the medium. */
	ufx_stop(&pc->u);
	h_settle();
	fx_forget(&pc->u.f);
	for (uint64_t s = 0; s < hd->nsectors; s++)
		if (hd->cached[s]) {
			memcpy(hd->medium + s * BLK_SECTOR_SIZE, hd->cache + s * BLK_SECTOR_SIZE,
			       BLK_SECTOR_SIZE);
			hd->cached[s] = 0;
		}
	pc->image = malloc(hd->nsectors * BLK_SECTOR_SIZE);
	CHECK(pc->image != NULL);
	memcpy(pc->image, hd->medium, hd->nsectors * BLK_SECTOR_SIZE);
}

/* One run with the power failing after `cut` requests (< 0: never during
 * the workload).  Returns check's result; *used gets the requests work
 * started. */
static inline int pc_one(struct pcut *pc, int64_t cut, uint64_t *used)
{
	struct hostdisk *hd = &pc->u.f.hd;
	memcpy(hd->medium, pc->image, hd->nsectors * BLK_SECTOR_SIZE);
	memset(hd->cached, 0, hd->nsectors);      /* nothing of the last run is cached */
	CHECK_EQ(fx_boot(&pc->u.f), 0);
	ufx_start(&pc->u);
	hd->rng = pc->seed * 1000003u + (uint64_t)(cut + 2);
	pc->acked = 0;
	pc->cut = cut;
	const int64_t forever = INT64_MAX / 2;
	hd->die_countdown = cut >= 0 ? cut : forever;
	/* Both ways a cache can fail (tools/powercut/pcdisk's two modes). */
	hd->crash_keep = cut >= 0 && (cut & 1) ? HD_KEEP_NONE : HD_KEEP_RANDOM;
	pc->work(pc);
	pc->cut_fired = hd->dead;
	if (used != NULL)
		*used = (uint64_t)(forever - hd->die_countdown);
	hd->die_countdown = -1;
	vfs_abandon();
	ufx_stop(&pc->u);
	CHECK_EQ(fx_crash(&pc->u.f), 0);
	ufx_start(&pc->u);
	fx_check_live(&pc->u.f);
	int r = pc->check(pc);
	vfs_abandon();
	ufx_stop(&pc->u);
	h_settle();
	fx_forget(&pc->u.f);
	pc->runs++;
	if (r != 0 && !pc->quiet)
		fprintf(stderr, "%s: check failed after a power cut at request %lld (seed %llu, "
		        "acked %llu)\n", pc->name, (long long)cut, (unsigned long long)pc->seed,
		        (unsigned long long)pc->acked);
	return r;
}

/* Cut at from, from + stride, ... while below the workload's request count
 * (to < 0) or to.  Returns the number of runs whose check failed. */
static inline int pc_run(struct pcut *pc, int64_t from, int64_t to, int64_t stride)
{
	pc_prepare(pc);
	uint64_t n = 0;
	int failed = pc_one(pc, -1, &n) != 0;
	pc->requests = n;
	if (to < 0 || to > (int64_t)n)
		to = (int64_t)n;
	for (int64_t c = from; c < to; c += stride > 0 ? stride : 1)
		failed += pc_one(pc, c, NULL) != 0;
	if (pc->verbose || (failed && !pc->quiet))
		printf("%s: %llu requests, %llu runs, %d failed\n", pc->name,
		       (unsigned long long)pc->requests, (unsigned long long)pc->runs, failed);
	return failed;
}

/* At most max_runs cuts spread evenly over the workload's requests (every
 * request when it makes no more than that). */
static inline int pc_run_spread(struct pcut *pc, int64_t max_runs)
{
	pc_prepare(pc);
	uint64_t n = 0;
	int failed = pc_one(pc, -1, &n) != 0;
	pc->requests = n;
	int64_t stride = max_runs > 0 && (int64_t)n > max_runs ? ((int64_t)n + max_runs - 1) / max_runs : 1;
	for (int64_t c = 0; c < (int64_t)n; c += stride)
		failed += pc_one(pc, c, NULL) != 0;
	if (pc->verbose || (failed && !pc->quiet))
		printf("%s: %llu requests, %llu runs, %d failed\n", pc->name,
		       (unsigned long long)pc->requests, (unsigned long long)pc->runs, failed);
	return failed;
}

static inline void pc_free(struct pcut *pc)
{
	free(pc->image);
	pc->image = NULL;
	hostdisk_free(&pc->u.f.hd);
}

#endif
