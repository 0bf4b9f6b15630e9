/*
 * edfixture.h - a formatted, mounted test disk with two clients, shared by
 * the exodisk host tests: make one, remount it (clean reboot), crash it
 * (power failure, then reboot), check it, throw it away.
 */
#ifndef TESTS_EXODISK_EDFIXTURE_H
#define TESTS_EXODISK_EDFIXTURE_H

#include <string.h>
#include "tests/host/exodisk/edharness.h"
#include "tests/host/exodisk/hostdisk.h"
#include "kernel/exodisk/check.h"

struct fx {
	struct harness h;
	struct hostdisk hd;
	struct exodisk *ed;
	struct ed_config cfg;
	int unit;
	struct ed_client a, b;
	bool verbose;
};

static inline void fx_report(void *arg, int sev, const char *what, uint64_t sector, uint64_t detail)
{
	struct fx *f = arg;
	if (sev == ED_CHK_VIOLATION || f->verbose)
		fprintf(stderr, "  check: %s: %s (sector %llu, %llu)\n",
		        sev == ED_CHK_VIOLATION ? "VIOLATION" : "note", what,
		        (unsigned long long)sector, (unsigned long long)detail);
}

static inline void fx_clients(struct fx *f)
{
	memset(&f->a, 0, sizeof(f->a));
	memset(&f->b, 0, sizeof(f->b));
	f->a.slot = f->b.slot = -1;
}

/* nsectors of disk, polled or synchronous completion; cfg and fo may be NULL. */
static inline void fx_new_fmt(struct fx *f, uint64_t nsectors, int mode, const struct ed_config *cfg,
                              uint64_t seed, const struct ed_format_opts *fo)
{
	memset(f, 0, sizeof(*f));
	blk_reset();
	h_init(&f->h, seed);
	if (cfg != NULL)
		f->cfg = *cfg;
	f->unit = hostdisk_init(&f->hd, nsectors, mode, true, seed * 7 + 1);
	CHECK(f->unit == 0);
	f->ed = h_core(&f->h, &f->cfg, NULL);
	CHECK_EQ(ed_format(f->ed, f->unit, fo), 0);
	CHECK_EQ(ed_mount(f->ed, f->unit), 0);
	fx_clients(f);
}

static inline void fx_new(struct fx *f, uint64_t nsectors, int mode, const struct ed_config *cfg,
                          uint64_t seed)
{
	fx_new_fmt(f, nsectors, mode, cfg, seed, NULL);
}

/* Everything the core holds is in memory only: drop it.  The disk stays. */
static inline void fx_forget(struct fx *f)
{
	ed_client_exit(f->ed, &f->a);
	ed_client_exit(f->ed, &f->b);
	ed_destroy(f->ed);
	CHECK_EQ(f->h.pages, 0);
	blk_reset();
	f->ed = NULL;
}

static inline int fx_boot(struct fx *f)
{
	CHECK(hostdisk_reattach(&f->hd) == f->unit);
	f->ed = h_core(&f->h, &f->cfg, NULL);
	fx_clients(f);
	return ed_mount(f->ed, f->unit);
}

/* A clean reboot: wait for background writes, flush (so what was written
 * is durable, and the log says so: sectors written since allocation read
 * back after the reboot rather than as zeros), forget, mount again. */
static inline void fx_remount(struct fx *f)
{
	h_settle();
	struct ed_cap none;
	memset(&none, 0, sizeof(none));
	struct ed_protector any = h_ext(f->unit, 0, 0, none, none);
	int64_t err = h_sync(&f->h, f->ed, &f->a, ED_OP_FLUSH, &any);
	CHECK(err == 0 || err == ED_E_SHUTDOWN);   /* (a shutdown made it all durable) */
	h_settle();
	fx_forget(f);
	CHECK_EQ(fx_boot(f), 0);
}

/* Power failure at this instant, then reboot. */
static inline int fx_crash(struct fx *f)
{
	hostdisk_crash(&f->hd);
	ed_destroy(f->ed);
	h_drop_pins(&f->h);
	blk_reset();
	f->ed = NULL;
	return fx_boot(f);
}

static inline struct ed_check_stats fx_check_live(struct fx *f)
{
	struct ed_check_stats st;
	h_settle();
	CHECK_EQ(ed_check_live(f->ed, f->unit, fx_report, f, &st), 0);
	if (st.violations != 0)
		fprintf(stderr, "live check: %llu violations\n", (unsigned long long)st.violations);
	CHECK_EQ(st.violations, 0);
	/* Nothing is in flight now: what ED_OP_POLL counts must be 0.  An
	 * operation never finished, or finished without being counted out
	 * (ed_io_finish, which calls op_done: the kernel wakes POLL sleepers
	 * there), would keep a POLL sleeper asleep for good. */
	CHECK_EQ(f->a.pending, 0);
	CHECK_EQ(f->b.pending, 0);
	return st;
}

static inline void fx_free(struct fx *f)
{
	if (f->ed != NULL)
		fx_forget(f);
	CHECK_EQ(f->h.pins, 0);
	hostdisk_free(&f->hd);
}

/* The exported free map: is this sector allocated? */
static inline bool fx_allocated(struct fx *f, uint64_t s)
{
	const uint8_t *page = ed_freemap_page(f->ed, f->unit, (uint32_t)(s / 32768));
	return (page[(s % 32768) / 8] >> (s % 8)) & 1;
}

#endif
