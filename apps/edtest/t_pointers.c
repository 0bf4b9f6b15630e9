/*
 * t_pointers.c - user pointers the kernel must refuse (K_E_FAULT) without
 * touching anything: into the kernel, unmapped, running off the end of the
 * heap, read-only where the kernel would write (program text, exported
 * pages), misaligned result words.  For prot, reqbp and stuff, for the
 * data behind stuff->buf, for I/O buffers and for result words.  Afterwards
 * nothing is pinned or in flight and the data is as it was.
 */
#include <string.h>
#include <unistd.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"
#include "kernel/uapi/layout.h"

#define KADDR    0x80200000ull          /* kernel text                     */
#define UNMAPPED 0x1000000000ull        /* 64 GiB: between heap and exports */
#define PAGE     4096ull

/* The first unmapped byte after the heap (asked each time: printing may
 * grow the heap). */
static uint64_t heap_edge(void)
{
	return ((uint64_t)(uintptr_t)sbrk(0) + PAGE - 1) & ~(PAGE - 1);
}

static struct ed_buf iobuf(const struct ed_protector *p, uint32_t flags, uint64_t blkno,
                           uint64_t mem, uint64_t bytes, uint64_t word)
{
	struct ed_buf b;
	memset(&b, 0, sizeof b);
	b.b_flags = flags;
	b.b_dev = p->unit;
	b.b_blkno = blkno;
	b.b_bcount = bytes;
	b.b_memaddr = mem;
	b.b_resptr = word;
	return b;
}

static void bad_structs(const struct ed_protector *p)
{
	uint64_t good = (uint64_t)(uintptr_t)p;
	uint64_t where[3] = { KADDR, UNMAPPED, 0 };
	const char *what[3] = { "in the kernel", "unmapped", "running off the heap" };
	for (int i = 0; i < 3; i++) {
		if (where[i] == 0)
			where[i] = heap_edge() - 16;
		expect(rawreq(ED_OP_IN_CACHE, where[i], 0, 0), K_E_FAULT, "prot %s (IN_CACHE)", what[i]);
		expect(rawreq(ED_OP_EXTENT_ALLOCATE, where[i], 0, 0), K_E_FAULT, "prot %s (EXTENT_ALLOCATE)", what[i]);
		expect(rawreq(ED_OP_IO, good, where[i], 0), K_E_FAULT, "reqbp %s (IO)", what[i]);
		expect(rawreq(ED_OP_EXTENT_WRITE, good, where[i], 0), K_E_FAULT, "reqbp %s (EXTENT_WRITE)", what[i]);
		expect(rawreq(ED_OP_EXTENT_GROW, good, 0, where[i]), K_E_FAULT, "stuff %s (EXTENT_GROW)", what[i]);
	}
	/* Output structures the kernel cannot write. */
	uint64_t text = (uint64_t)(uintptr_t)&bad_structs;
	expect(rawreq(ED_OP_GET_FREE_MAP, good, 0, text), K_E_FAULT, "stuff in read-only text (GET_FREE_MAP)");
	expect(rawreq(ED_OP_GET_FREE_MAP, good, 0, UKINFO), K_E_FAULT, "stuff in the kinfo page (GET_FREE_MAP)");
}

static void bad_data(void)
{
	uint64_t X = area(2);
	struct ed_protector x = pxn(X, 0, 120, 900);
	expect(edc_xn_alloc(E, &x), 0, "an exonode for the data checks");
	x.xn_entry = -1;
	uint64_t where[3] = { KADDR, UNMAPPED, 0 };
	const char *what[3] = { "in the kernel", "unmapped", "running off the heap" };
	for (int i = 0; i < 3; i++) {
		if (where[i] == 0)
			where[i] = heap_edge() - 8;
		struct ed_operation st = { .buf = where[i], .one = 16 };
		expect(rawreq(ED_OP_EXONODE_ADD_DATA, (uint64_t)(uintptr_t)&x, 0, (uint64_t)(uintptr_t)&st),
		       K_E_FAULT, "ADD_DATA from data %s", what[i]);
	}
	uint8_t d[16] = "sixteen bytes!!";
	expect(edc_xn_add_data(E, &x, -1, d, 16), 0, "ADD_DATA from good memory");
	x.xn_entry = 0;
	const uint64_t out[3] = { KADDR, UNMAPPED, (uint64_t)(uintptr_t)&bad_data };
	const char *owhat[3] = { "in the kernel", "unmapped", "in read-only text" };
	for (int i = 0; i < 3; i++) {
		struct ed_operation st = { .buf = out[i], .one = 16 };
		expect(rawreq(ED_OP_EXONODE_READ_DATA, (uint64_t)(uintptr_t)&x, 0, (uint64_t)(uintptr_t)&st),
		       K_E_FAULT, "READ_DATA into %s", owhat[i]);
	}
	/* Proxy ranges. */
	for (int i = 0; i < 2; i++) {
		struct ed_operation st = { .buf = where[i], .one = 2, .two = ED_PROXY_READ };
		expect(rawreq(ED_OP_EXONODE_PROXY, (uint64_t)(uintptr_t)&x, 0, (uint64_t)(uintptr_t)&st),
		       K_E_FAULT, "PROXY ranges %s", what[i]);
	}
	/* CAP_DISCOVER writes stuff back. */
	struct ed_cap crc = cap(910), cwc = cap(911);
	expect(edc_xn_add_exonode(E, &x, -1, X + 1, 0, 96, &crc, &cwc), 1, "give the exonode a descendant");
	x.xn_entry = 1;
	expect(rawreq(ED_OP_EXONODE_CAP_DISCOVER, (uint64_t)(uintptr_t)&x, 0, (uint64_t)(uintptr_t)&bad_data),
	       K_E_FAULT, "CAP_DISCOVER with stuff in read-only text");
	expect(edc_xn_remove(E, &x, 1), 0, "remove the descendant");
	expect(edc_xn_remove(E, &x, 0), 0, "and the data");
	expect(edc_xn_dealloc(E, &x), 0, "deallocate the exonode");
}

static void bad_buffers(const struct ed_protector *p, uint64_t S, uint8_t *good)
{
	uint64_t gp = (uint64_t)(uintptr_t)p;
	volatile int32_t word = 77;
	uint64_t gw = (uint64_t)(uintptr_t)&word;
	struct {
		const char *what;
		uint32_t flags;
		uint64_t mem, bytes;
	} cases[] = {
		{ "read into the kernel", ED_B_READ, KADDR, SECT },
		{ "write from the kernel", ED_B_WRITE, KADDR, SECT },
		{ "read into unmapped memory", ED_B_READ, UNMAPPED, SECT },
		{ "write from unmapped memory", ED_B_WRITE, UNMAPPED, SECT },
		{ "read into a buffer running off the heap", ED_B_READ, 0, 2 * SECT },
		{ "write from a buffer running off the heap", ED_B_WRITE, 0, 2 * SECT },
		{ "read into read-only program text", ED_B_READ, (uint64_t)(uintptr_t)&bad_buffers & ~(PAGE - 1), SECT },
		{ "read into the kinfo page", ED_B_READ, UKINFO, SECT },
		{ "read into the exported free map", ED_B_READ, UFREEMAP(U), SECT },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (cases[i].mem == 0)
			cases[i].mem = heap_edge() - SECT;
		struct ed_buf b = iobuf(p, cases[i].flags, S + 1, cases[i].mem, cases[i].bytes, gw);
		word = 77;
		expect(rawreq(ED_OP_IO, gp, (uint64_t)(uintptr_t)&b, 0), K_E_FAULT, "%s", cases[i].what);
		if (word != 77)
			check(false, "the result word was touched: %d", word);
	}
	/* Result words. */
	const uint64_t wp[5] = { KADDR, UNMAPPED, gw + 1, (uint64_t)(uintptr_t)&bad_buffers & ~3ull, UKINFO };
	const char *wwhat[5] = { "in the kernel", "unmapped", "misaligned", "in read-only text",
	                         "in the kinfo page" };
	for (int i = 0; i < 5; i++) {
		struct ed_buf b = iobuf(p, ED_B_WRITE, S + 1, (uint64_t)(uintptr_t)good, SECT, wp[i]);
		expect(rawreq(ED_OP_IO, gp, (uint64_t)(uintptr_t)&b, 0), K_E_FAULT, "write with its result word %s",
		       wwhat[i]);
		b = iobuf(p, 0, 0, 0, 0, wp[i]);
		expect(rawreq(ED_OP_EXTENT_WRITE, gp, (uint64_t)(uintptr_t)&b, 0), K_E_FAULT,
		       "EXTENT_WRITE with its result word %s", wwhat[i]);
	}
}

void t_pointers(void)
{
	static uint8_t w[8 * SECT], r[8 * SECT];
	uint64_t S = area(8);
	struct ed_protector p = pext(S, 8 * SECT, 950);
	expect(edc_extent_alloc(E, &p), 0, "an extent for the pointer checks");
	fill(w, sizeof w, S, 13);
	expect(io(&p, 1, S, w, sizeof w), 0, "with data");
	uint64_t free0 = pages_free();

	bad_structs(&p);
	bad_data();
	static uint8_t junk[SECT];
	memset(junk, 0x5a, sizeof junk);
	bad_buffers(&p, S, junk);

	expect(edc_pending(E), 0, "nothing of ours is in flight");
	expect(edc_in_cache(E, &p), ED_IC_CACHED | ED_IC_DIRTY | ED_IC_HELD,
	       "the extent is still dirty: no refused write-back went ahead");
	memset(r, 0, sizeof r);
	expect(io(&p, 0, S, r, sizeof r), 0, "read the extent");
	check(same(r, sizeof r, S, 13, true), "its data is untouched");
	expect((int64_t)pages_free(), (int64_t)free0, "free pages, as before (nothing stays pinned)");
	expect(edc_extent_dealloc(E, &p), 0, "deallocate it");
}
