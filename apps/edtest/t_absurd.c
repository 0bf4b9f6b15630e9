/*
 * t_absurd.c - absurd lengths, counts, numbers and flags: each refused with
 * its own documented error; operation numbers that do not fit the ABI;
 * ED_OP_SHUTDOWN from an ordinary process; more operations in flight than
 * the kernel keeps (ED_E_NOIO).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/edtest/edt.h"
#include "libos/sys.h"
#include "libos/exo.h"

#define BIG64 0x4000000000000000ull      /* 2^62 */

static int64_t io_with(const struct ed_protector *p, struct ed_buf *b, void *mem)
{
	volatile int32_t word = 0;
	b->b_memaddr = (uint64_t)(uintptr_t)mem;
	b->b_resptr = (uint64_t)(uintptr_t)&word;
	int64_t r = E->t->request(E->ctx, ED_OP_IO, (struct ed_protector *)p, b, NULL);
	if (r == 0)
		r = edc_wait(E, &word);
	return r;
}

static struct ed_buf plain(const struct ed_protector *p, uint64_t blkno, uint64_t bytes)
{
	struct ed_buf b;
	memset(&b, 0, sizeof b);
	b.b_flags = ED_B_READ;
	b.b_dev = p->unit;
	b.b_blkno = blkno;
	b.b_bcount = bytes;
	return b;
}

static void lengths(void)
{
	static uint8_t buf[2 * SECT];
	uint64_t S = area(16);
	struct ed_protector p = pext(S, 8 * SECT, 1000);
	expect(edc_extent_alloc(E, &p), 0, "an extent for the length checks");
	struct ed_buf b = plain(&p, S, (uint64_t)1 << 63);
	expect(io_with(&p, &b, buf), ED_E_TOOBIG, "I/O of 2^63 bytes");
	b = plain(&p, S, ED_IO_MAX + SECT);
	expect(io_with(&p, &b, buf), ED_E_TOOBIG, "I/O of 1 MiB + 512 bytes");
	b = plain(&p, S, 0);
	expect(io_with(&p, &b, buf), ED_E_ARG, "I/O of 0 bytes");
	b = plain(&p, (uint64_t)1 << 63, SECT);
	expect(io_with(&p, &b, buf), ED_E_RANGE, "I/O at sector 2^63");
	b = plain(&p, UINT64_MAX, 2 * SECT);
	expect(io_with(&p, &b, buf), ED_E_RANGE, "I/O at sector 2^64-1 (would wrap)");
	b = plain(&p, S, SECT);
	b.b_flags = ED_B_READ | ED_B_WRITE;
	expect(io_with(&p, &b, buf), ED_E_ARG, "I/O flagged both read and write");
	b.b_flags = 0;
	expect(io_with(&p, &b, buf), ED_E_ARG, "I/O flagged neither");
	b.b_flags = ED_B_READ;
	b.b_dev = (uint16_t)(p.unit + 1);
	expect(io_with(&p, &b, buf), ED_E_ARG, "I/O whose b_dev is not the protector's unit");
	b.b_dev = p.unit;
	b.b_pad = 1;
	expect(io_with(&p, &b, buf), ED_E_ARG, "I/O with a reserved field set");

	struct ed_protector q = pext(S + 10, BIG64, 1000);
	expect(edc_extent_alloc(E, &q), ED_E_TOOBIG, "allocate an extent of 2^62 bytes");
	q = pext(S + 10, UINT64_MAX - 511, 1000);
	expect(edc_extent_alloc(E, &q), ED_E_TOOBIG, "allocate an extent of 2^64-512 bytes");
	q = pext(UINT64_MAX, SECT, 1000);
	expect(edc_extent_alloc(E, &q), ED_E_RANGE, "allocate at sector 2^64-1");
	expect(edc_extent_grow(E, &p, BIG64), ED_E_TOOBIG, "grow by 2^62 bytes");
	expect(edc_extent_shrink(E, &p, BIG64), ED_E_TOOBIG, "shrink by 2^62 bytes");
	expect(edc_extent_grow(E, &p, UINT64_MAX - 511), ED_E_TOOBIG, "grow by 2^64-512 bytes");

	uint64_t X = area(1);
	struct ed_protector x = pxn(X, 0, (uint64_t)1 << 40, 1010);
	expect(edc_xn_alloc(E, &x), ED_E_XNSIZE, "an exonode of 2^40 bytes");
	x = pxn(X, 0, 96, 1010);
	expect(edc_xn_alloc(E, &x), 0, "an exonode for the entry checks");
	expect(edc_xn_add_extent(E, &x, -1, S + 10, BIG64), ED_E_TOOBIG, "an extent entry of 2^62 bytes");
	expect(edc_xn_add_extent(E, &x, -1, (uint64_t)1 << 63, SECT), ED_E_RANGE, "an extent entry at 2^63");
	expect(edc_xn_add_extent(E, &x, 1 << 30, S + 10, SECT), ED_E_ENTRY, "entry number 2^30");
	expect(edc_xn_add_extent(E, &x, -2, S + 10, SECT), ED_E_ENTRY, "entry number -2");
	struct ed_operation st = { .buf = (uint64_t)(uintptr_t)buf, .one = (uint64_t)1 << 40 };
	struct ed_protector xe = x;
	xe.xn_entry = -1;
	expect(E->t->request(E->ctx, ED_OP_EXONODE_ADD_DATA, &xe, NULL, &st), ED_E_TOOBIG,
	       "ADD_DATA of 2^40 bytes");
	uint8_t d8[8] = "eight!!";
	expect(edc_xn_add_data(E, &x, -1, d8, 8), 0, "ADD_DATA of 8 bytes");
	st = (struct ed_operation){ .buf = (uint64_t)(uintptr_t)buf, .one = (uint64_t)1 << 60 };
	xe.xn_entry = 0;
	expect(E->t->request(E->ctx, ED_OP_EXONODE_READ_DATA, &xe, NULL, &st), 8,
	       "READ_DATA with room for 2^60 bytes copies the 8 there are");
	struct ed_range r[2] = { { S + 1, 2 }, { S + 4, 2 } };
	st = (struct ed_operation){ .buf = (uint64_t)(uintptr_t)r, .one = ((uint64_t)1 << 32) + 1,
	                            .two = ED_PROXY_READ };
	expect(E->t->request(E->ctx, ED_OP_EXONODE_PROXY, &p, NULL, &st), ED_E_TOOBIG,
	       "a proxy of 2^32+1 ranges");
	expect(edc_xn_split(E, &x, 0, BIG64, -1), ED_E_ENTTYPE, "split a data entry");
	expect(edc_xn_remove(E, &x, 0), 0, "remove the data");
	expect(edc_xn_dealloc(E, &x), 0, "deallocate the exonode");
	expect(edc_extent_dealloc(E, &p), 0, "deallocate the extent");
}

/*
 * A process whose parent has exited may not shut the disk down either.
 * The processes signal each other through the free map, which all of them
 * read without system calls: F set = "refused", F+1 = "not refused", F+2 =
 * "go" (set by us once the orphan's parent has been reaped).
 */
struct flags {
	uint64_t f;
	int want;                 /* 1: F or F+1 set; 0: both clear */
};

static bool flags_are(void *arg)
{
	struct flags *fl = arg;
	bool set = allocated(fl->f) || allocated(fl->f + 1);
	return fl->want ? set : !set;
}

static void orphan(void)
{
	uint64_t F = area(3);
	char sf[24];
	snprintf(sf, sizeof sf, "%lu", (unsigned long)F);
	const char *args[] = { sf, NULL };
	expect(child("orphan-parent", args), 0, "a child starts a grandchild and exits at once");
	struct ed_protector go = pext(F + 2, SECT, 1050);
	expect(edc_extent_alloc(E, &go), 0, "tell the orphaned grandchild to try SHUTDOWN");
	struct flags fl = { F, 1 };
	check(wait_until(flags_are, &fl, 5000), "the orphan answered through the free map");
	check(allocated(F) && !allocated(F + 1), "the orphan's SHUTDOWN was refused");
	expect(edc_extent_dealloc(E, &go), 0, "let it exit");
	fl.want = 0;
	check(wait_until(flags_are, &fl, 5000), "it has exited: its uncommitted flag is gone");
}

static void numbers(void)
{
	struct ed_protector p = pext(area(1), 0, 1020);
	struct ed_protector q = p;
	q.unit = 9999;
	expect(edc_in_cache(E, &q), ED_E_UNIT, "unit 9999");
	q = p;
	q.kind = 7;
	expect(edc_extent_alloc(E, &q), ED_E_ARG, "protector kind 7");
	q = p;
	q.pad[1] = 1;
	q.length = SECT;
	expect(edc_extent_alloc(E, &q), ED_E_ARG, "a protector with a reserved byte set");
	q = p;
	q.kind = ED_PK_EXONODE;
	q.xn_num = 65535;
	q.length = 96;
	expect(edc_xn_alloc(E, &q), ED_E_SLOT, "exonode slot 65535");
	expect(rawreq(ED_OP_COUNT, (uint64_t)(uintptr_t)&p, 0, 0), ED_E_OP, "operation %d", ED_OP_COUNT);
	expect(rawreq(1000, (uint64_t)(uintptr_t)&p, 0, 0), ED_E_OP, "operation 1000");
	expect(rawreq((uint64_t)-1, (uint64_t)(uintptr_t)&p, 0, 0), ED_E_OP, "operation -1");
	/* The system call's first argument is 64 bits: numbers that only look
	 * like an operation in their low 32 bits are not one. */
	expect(sys_call4(SYS_exodisk_request, (1ull << 32) | ED_OP_IN_CACHE, &p, 0, 0), ED_E_OP,
	       "operation 2^32 + IN_CACHE");
	volatile int32_t w = 0;
	struct ed_buf b;
	memset(&b, 0, sizeof b);
	b.b_resptr = (uint64_t)(uintptr_t)&w;
	expect(sys_call4(SYS_exodisk_request, (1ull << 32) | ED_OP_SHUTDOWN, &p, &b, 0), ED_E_OP,
	       "operation 2^32 + SHUTDOWN");
	expect(edc_shutdown(E, U, &w), K_E_PERM, "SHUTDOWN from a process that is not the first");
	uint64_t S = area(1);
	struct ed_protector alive = pext(S, SECT, 1030);
	expect(edc_extent_alloc(E, &alive), 0, "the unit still works");
	expect(edc_extent_dealloc(E, &alive), 0, "(and the extent goes again)");
	orphan();
	expect(edc_extent_alloc(E, &alive), 0, "the unit still works");
	expect(edc_extent_dealloc(E, &alive), 0, "(and the extent goes again)");
}

/* More operations than the kernel keeps in flight (nio, 128): 4 KB writes
 * until one is refused.  Only where a pile-up is certain (pileup_certain)
 * must it be refused; elsewhere the count reached is reported. */
static void too_many(void)
{
	enum { N = 1000, SZ = 4096 };
	static uint8_t buf[SZ];
	static volatile int32_t word[N];
	bool strict = pileup_certain();
	uint64_t S = area(SZ / SECT + 1);
	struct ed_protector p = pext(S, SZ + SECT, 1040);
	expect(edc_extent_alloc(E, &p), 0, "an extent to write to");
	int n = 0;
	int64_t r = 0, most = 0;
	for (; n < N; n++) {
		r = edc_io(E, &p, 1, S + 1, buf, SZ, &word[n]);
		if (r < 0)
			break;
		if (n % 16 == 0) {
			int64_t k = edc_pending(E);
			most = k > most ? k : most;
		}
	}
	int64_t pend = edc_pending(E);
	if (strict || r < 0) {
		check(n < N && pend > 64 && pend <= 128, "%ld writes of 4 KB in flight (of %d made), then refused",
		      (long)pend, n);
		expect(r, ED_E_NOIO, "the next write");
	} else {
		note("this disk kept up: at most %ld of %d writes were in flight at once (polled=1 makes "
		     "this check strict)", (long)most, n);
	}
	int ok = 0;
	for (int i = 0; i < n; i++)
		ok += edc_wait(E, &word[i]) == 0;
	expect(ok, n, "the accepted ones complete");
	expect(edc_extent_dealloc(E, &p), 0, "deallocate the extent");
}

void t_absurd(void)
{
	lengths();
	numbers();
	too_many();
}

/* edtest child orphan-parent F: start the orphan and exit at once. */
int c_orphan_parent(int argc, char **argv)
{
	if (argc < 2)
		return 99;
	const char *args[] = { argv[1], NULL };
	int pid = child_start("orphan-shutdown", args);
	return pid > 0 ? 0 : 1;
}

struct bit {
	uint64_t s;
	bool set;
};

static bool bit_is(void *arg)
{
	struct bit *b = arg;
	return allocated(b->s) == b->set;
}

/* edtest child orphan-shutdown F: once F+2 is set, try ED_OP_SHUTDOWN and
 * set F (refused) or F+1 (not); exit once F+2 is clear again. */
int c_orphan_shutdown(int argc, char **argv)
{
	if (argc < 2)
		return 99;
	uint64_t F = strtoull(argv[1], NULL, 10);
	struct bit go = { F + 2, true };
	if (!wait_until(bit_is, &go, 10000))
		return 1;
	volatile int32_t w = 0;
	int64_t r = edc_shutdown(E, U, &w);
	expect(r, K_E_PERM, "orphan: SHUTDOWN");
	struct ed_protector flag = pext(r == K_E_PERM ? F : F + 1, SECT, 1060);
	edc_extent_alloc(E, &flag);
	go.set = false;
	wait_until(bit_is, &go, 10000);
	return r == K_E_PERM ? 0 : 1;
}
