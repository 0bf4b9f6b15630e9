/*
 * t_busy.c - operations on entries being written back (ED_E_BUSY) and
 * operations that would drop sectors with I/O in flight (ED_E_IOBUSY).
 *
 * The checks need the write-back or the I/O to be in flight when the
 * operation arrives, and a virtio disk on a fast host may finish first.  So
 * each attempt queues some load ahead (writes at increasing sectors: C-LOOK
 * sweeps upwards and serves them first, and the commit log, below all data,
 * last), starts the write-back or the target write, makes the call and only
 * then looks at the target's result word:
 *
 *   the expected refusal                               pass
 *   anything else, the target still in flight          FAIL
 *   anything else, the target already done             undo the call, retry
 *
 * so a kernel that never refuses fails, and a slow one passes at once.
 */
#include <string.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"

#define LOADW    (256 * 1024)          /* one load write                   */
#define MAXLOAD  32
#define TRIES    40
#define TW       (32 * 1024)           /* the target write                 */

static uint64_t LD;                    /* the load area: MAXLOAD writes     */
static int nload;                      /* writes per attempt (calibrated)   */
static volatile int32_t lw[MAXLOAD];
static volatile int32_t tw;            /* the target's result word          */
static struct ed_protector ld;
static uint8_t buf[LOADW];

static void load(void)
{
	for (int i = 0; i < nload; i++)
		edc_io(E, &ld, 1, LD + 1 + (uint64_t)i * (LOADW / SECT), buf, LOADW, &lw[i]);
}

static void drain(void)
{
	for (int i = 0; i < nload; i++)
		edc_wait(E, &lw[i]);
	edc_wait(E, &tw);
}

/* Enough load per attempt for about 4 ms of disk time. */
static void calibrate(void)
{
	nload = 1;
	uint64_t t0 = exo_time();
	load();
	drain();
	uint64_t ns = exo_time_to_ns(exo_time() - t0);
	uint64_t n = ns == 0 ? MAXLOAD : 4000000 / ns + 1;
	nload = n > MAXLOAD ? MAXLOAD : (int)n;
	note("one 256 KB write took %lu us: %d per attempt", (unsigned long)(ns / 1000), nload);
}

struct attempt {
	const char *what;
	int64_t want;
	void (*start)(void);       /* queue the target (after the load)   */
	int64_t (*call)(void);     /* the operation under test            */
	void (*undo)(void);        /* put things back if it went through  */
};

static void run(const struct attempt *a)
{
	int64_t r = 0;
	for (int t = 0; t < TRIES; t++) {
		load();
		a->start();
		r = a->call();
		bool pending = tw == ED_PENDING;
		drain();
		if (r == a->want) {
			expect(r, a->want, "%s (attempt %d)", a->what, t + 1);
			return;
		}
		if (pending) {
			expect(r, a->want, "%s (while it was in flight)", a->what);
			return;
		}
		a->undo();
	}
	check(false, "%s: never caught in flight in %d attempts (last result %ld)", a->what, TRIES, (long)r);
}

/* ---- I/O in flight: D (an extent) and X (an exonode with extent XD) --------- */

static uint64_t DX, X, XD;
static struct ed_protector d, x;

static void write_d(void) { edc_io(E, &d, 1, DX + 1, buf, TW, &tw); }
static void write_x(void) { edc_io(E, &x, 1, XD, buf, TW, &tw); }
static int64_t shrink_d(void) { return edc_extent_shrink(E, &d, TW); }
static void grow_d(void) { edc_extent_grow(E, &d, TW); }
static int64_t dealloc_d(void) { return edc_extent_dealloc(E, &d); }
static void realloc_d(void) { edc_extent_alloc(E, &d); }
static int64_t remove_x(void) { return edc_xn_remove(E, &x, 0); }
static void readd_x(void) { edc_xn_add_extent(E, &x, 0, XD, TW); }
static int64_t dealloc_x(void) { return edc_xn_dealloc(E, &x); }
static void realloc_x(void) { edc_xn_alloc(E, &x); readd_x(); }

/* ---- write-back in flight: B (an extent) and Y (an exonode) ------------------- */

static uint64_t B, Y;
static struct ed_protector b, y;

static void wb_b(void)
{
	edc_extent_grow(E, &b, SECT);        /* make it dirty */
	edc_extent_write(E, &b, &tw);
}
static void wb_y(void)
{
	static uint64_t n;
	uint64_t v = ++n;
	edc_xn_add_data(E, &y, 0, &v, 8);    /* make it dirty */
	edc_xn_write(E, &y, &tw);
}
static int64_t grow_b(void) { return edc_extent_grow(E, &b, SECT); }
static int64_t shrink_b(void) { return edc_extent_shrink(E, &b, SECT); }
static int64_t dealloc_b(void) { return edc_extent_dealloc(E, &b); }
static int64_t write_b(void) { return ext_write(&b); }
static int64_t data_y(void) { uint64_t v = 0; return edc_xn_add_data(E, &y, 0, &v, 8); }
static int64_t write_y(void) { return xn_write(&y); }
static void nothing(void) { }
static void shrink_back_b(void) { edc_extent_shrink(E, &b, SECT); }
static void grow_back_b(void) { edc_extent_grow(E, &b, SECT); }
static void recreate_b(void)
{
	ext_write(&b);                       /* finish the deallocation */
	edc_extent_alloc(E, &b);
}

void t_busy(void)
{
	const uint64_t dlen = 1 + TW / SECT;
	LD = area(1 + MAXLOAD * (LOADW / SECT));
	B = area(256);
	DX = area(dlen);
	X = area(1);
	XD = area(TW / SECT);
	Y = area(1);
	ld = pext(LD, (1 + MAXLOAD * (LOADW / SECT)) * SECT, 800);
	b = pext(B, SECT, 810);
	d = pext(DX, dlen * SECT, 820);
	x = pxn(X, 0, 96, 830);
	y = pxn(Y, 0, 96, 840);
	uint64_t v = 0;
	int ok = edc_extent_alloc(E, &ld) == 0;
	ok += edc_extent_alloc(E, &b) == 0;
	ok += edc_extent_alloc(E, &d) == 0;
	ok += edc_xn_alloc(E, &x) == 0;
	ok += edc_xn_add_extent(E, &x, 0, XD, TW) == 0;
	ok += edc_xn_alloc(E, &y) == 0;
	ok += edc_xn_add_data(E, &y, 0, &v, 8) == 0;
	expect(ok, 7, "the objects: a load extent, B, D, X with an extent, Y with data");
	calibrate();

	const struct attempt io[] = {
		{ "shrink D away from sectors being written", ED_E_IOBUSY, write_d, shrink_d, grow_d },
		{ "deallocate D while it is being written", ED_E_IOBUSY, write_d, dealloc_d, realloc_d },
		{ "remove X's extent while it is being written", ED_E_IOBUSY, write_x, remove_x, readd_x },
		{ "deallocate X while its extent is being written", ED_E_IOBUSY, write_x, dealloc_x, realloc_x },
	};
	const struct attempt wb[] = {
		{ "grow B while it is being written back", ED_E_BUSY, wb_b, grow_b, shrink_back_b },
		{ "shrink B while it is being written back", ED_E_BUSY, wb_b, shrink_b, grow_back_b },
		{ "deallocate B while it is being written back", ED_E_BUSY, wb_b, dealloc_b, recreate_b },
		{ "write B back again while it is being written back", ED_E_BUSY, wb_b, write_b, nothing },
		{ "change Y's data while Y is being written back", ED_E_BUSY, wb_y, data_y, nothing },
		{ "write Y back again while it is being written back", ED_E_BUSY, wb_y, write_y, nothing },
	};
	for (size_t i = 0; i < sizeof io / sizeof io[0]; i++)
		run(&io[i]);
	for (size_t i = 0; i < sizeof wb / sizeof wb[0]; i++)
		run(&wb[i]);

	/* IN_CACHE and POLL see a write-back in flight. */
	bool seen = false;
	for (int t = 0; t < TRIES && !seen; t++) {
		load();
		wb_b();
		int64_t m = edc_in_cache(E, &b), n = edc_pending(E);
		bool pending = tw == ED_PENDING;
		drain();
		seen = pending && (m & ED_IC_BUSY) && n >= 1;
		if (pending && !seen) {
			check(false, "IN_CACHE %#lx and POLL %ld while B's write-back was in flight", (unsigned long)m,
			      (long)n);
			break;
		}
	}
	if (seen)
		check(true, "IN_CACHE says busy and POLL counts it while a write-back is in flight");
	expect(edc_pending(E), 0, "POLL once everything is done");

	/* POLL given a limit sleeps until no more than that are in flight. */
	load();
	struct ed_operation most = { .one = 0 };
	expect(E->t->request(E->ctx, ED_OP_POLL, NULL, NULL, &most), 0,
	       "POLL waiting until none of %d writes is in flight", nload);
	bool all = true;
	for (int i = 0; i < nload; i++)
		all &= lw[i] == 0;
	check(all, "then every result word is final");
	load();
	most.one = 1000;
	int64_t k = E->t->request(E->ctx, ED_OP_POLL, NULL, NULL, &most);
	check(k >= 0 && k <= nload, "POLL with a limit above the count returns at once: %ld", (long)k);
	expect(E->t->request(E->ctx, ED_OP_POLL, NULL, NULL, (struct ed_operation *)0x80200000), K_E_FAULT,
	       "POLL with its limit in kernel memory");
	drain();
	/* POLL given a result word (stuff->two) sleeps until that word is
	 * final: one system call to wait for one request. */
	load();
	struct ed_operation w = { .one = 0, .two = (uint64_t)(uintptr_t)&lw[0] };
	int64_t left = E->t->request(E->ctx, ED_OP_POLL, NULL, NULL, &w);
	check(left >= 0 && lw[0] != ED_PENDING, "POLL given the first write's result word returns once it is final "
	      "(%ld of %d still in flight)", (long)left, nload);
	w.two = 0x80200000;
	left = E->t->request(E->ctx, ED_OP_POLL, NULL, NULL, &w);
	check(left == K_E_FAULT || left == 0, "POLL given a result word in kernel memory: %ld (K_E_FAULT, or 0 if "
	      "nothing was left in flight to wait for)", (long)left);
	w.two = (uint64_t)(uintptr_t)&lw[0] + 1;
	expect(E->t->request(E->ctx, ED_OP_POLL, NULL, NULL, &w), K_E_FAULT, "POLL given a misaligned result word");
	drain();
	/* Issue 17 A2: writes queued without a result word complete too, and
	 * POLL's sleep must end when they do (it slept for ever). */
	for (int i = 0; i < MAXLOAD; i++) {
		struct ed_protector pp = ld;
		struct ed_buf bb = { .b_flags = ED_B_WRITE, .b_dev = ld.unit,
		                     .b_blkno = LD + 1 + (uint64_t)i * (LOADW / SECT), .b_bcount = LOADW,
		                     .b_memaddr = (uint64_t)(uintptr_t)buf, .b_resptr = 0 };
		if (E->t->request(E->ctx, ED_OP_IO, &pp, &bb, NULL) != 0)
			break;
	}
	most.one = 0;
	expect(E->t->request(E->ctx, ED_OP_POLL, NULL, NULL, &most), 0,
	       "POLL waiting until none of %d writes queued without a result word is in flight", MAXLOAD);

	ok = edc_extent_dealloc(E, &ld) == 0;
	ok += edc_extent_dealloc(E, &d) == 0;
	ok += edc_xn_remove(E, &x, 0) == 0;
	ok += edc_xn_dealloc(E, &x) == 0;
	ok += edc_extent_dealloc(E, &b) == 0;
	ok += ext_write(&b) == 0;
	ok += edc_xn_remove(E, &y, 0) == 0;
	ok += edc_xn_dealloc(E, &y) == 0;
	ok += xn_write(&y) == 0;
	expect(ok, 9, "take everything away again");
	check(all_free(LD, 1 + MAXLOAD * (LOADW / SECT)) && all_free(B, 256) && all_free(DX, dlen) &&
	      !allocated(X) && all_free(XD, TW / SECT) && !allocated(Y), "all free");
}
