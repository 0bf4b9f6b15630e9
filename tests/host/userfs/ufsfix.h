/*
 * ufsfix.h - a unixfs on a host test disk, for the userfs host tests: one
 * exodisk core (tests/host/exodisk/edfixture.h: a disk with a volatile
 * write cache, power failures) and one simulated process using it through
 * the host transport.  Make one, reboot it cleanly, crash it, check it.
 */
#ifndef TESTS_USERFS_UFSFIX_H
#define TESTS_USERFS_UFSFIX_H

#include <stdio.h>
#include <string.h>
#include "libos/edc_host.h"
#include "libos/vfs.h"
#include "userfs/unixfs/unixfs.h"
#include "tests/host/exodisk/edfixture.h"

struct ufx {
	struct fx f;
	struct edc_host p;       /* the process using the file system */
	int running;
};

/* The process starts: its exodisk client becomes the default. */
static inline void ufx_start(struct ufx *u)
{
	edc_host_init(&u->p, &u->f.h, u->f.ed);
	edc_set_default(&u->p.edc);
	u->running = 1;
}

/* The process ends (without unmounting: what it did not write back is
 * undone by the core). */
static inline void ufx_stop(struct ufx *u)
{
	if (u->running)
		edc_host_exit(&u->p);
	u->running = 0;
}

static inline void ufx_new(struct ufx *u, uint64_t nsectors, int mode, uint64_t seed)
{
	memset(u, 0, sizeof *u);
	fx_new(&u->f, nsectors, mode, NULL, seed);
	ufx_start(u);
}

static inline void ufx_mkfs(struct ufx *u, const char *opts)
{
	uint64_t sb;
	int r = unixfs_mkfs(opts, &sb);
	if (r != 0) {
		fprintf(stderr, "mkfs(%s): %d\n", opts, r);
		exit(1);
	}
}

/* The unixfs of opts mounted at / of the mount table (the test fails if
 * it cannot be), and unmounted. */
static inline void ufx_mount(const char *opts)
{
	CHECK_EQ(vfs_mount("/", "unixfs", opts, 1), 0);
}

static inline void ufx_umount(void)
{
	CHECK_EQ(vfs_umount("/"), 0);
}

/* A new disk (ufx_new) with a new unixfs of opts on it, mounted at /: the
 * start of most tests. */
static inline void ufx_fresh(struct ufx *u, uint64_t nsectors, int mode, uint64_t seed, const char *opts)
{
	ufx_new(u, nsectors, mode, seed);
	ufx_mkfs(u, opts);
	ufx_mount(opts);
}

/* Clean reboot: the process has unmounted and exits, the machine restarts. */
static inline void ufx_reboot(struct ufx *u)
{
	ufx_stop(u);
	fx_remount(&u->f);
	ufx_start(u);
}

/* Power failure now, then reboot. */
static inline void ufx_crash(struct ufx *u)
{
	ufx_stop(u);
	CHECK_EQ(fx_crash(&u->f), 0);
	ufx_start(u);
}

static inline void ufx_free(struct ufx *u)
{
	ufx_stop(u);
	fx_free(&u->f);
}

#endif
