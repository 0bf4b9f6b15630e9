/*
 * t_freemap.c - the free map exported read-only at UFREEMAP(unit): found
 * with ED_OP_GET_FREE_MAP, read with no system call (kinfo->syscalls does
 * not move), bit for bit what allocation and deallocation did, freed
 * sectors appearing only once the deallocation is durable; a store into it
 * kills the process that tried.
 */
#include <stdio.h>
#include <stdlib.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"
#include "kernel/uapi/layout.h"

/* Free sectors, counted in the map itself (no system call): the whole map,
 * or on a disk over 32 GiB the first 32 GiB of it (reading 2 GiB of map
 * page by page would take long, and proves nothing more). */
#define COUNT_LIMIT (1ull << 26)
static uint64_t map_free(void)
{
	uint64_t n = 0, end = FM.nsectors < COUNT_LIMIT ? FM.nsectors : COUNT_LIMIT;
	for (uint64_t s = 0; s < end; s += 64) {
		const uint64_t *page = E->t->fm_page(E->ctx, U, (uint32_t)(s / 32768));
		uint64_t bits = page[(s % 32768) / 64];
		if (end - s < 64)
			bits |= ~0ull << (end - s);
		n += (uint64_t)(64 - __builtin_popcountll(bits));
	}
	return n;
}

void t_freemap(void)
{
	struct ed_protector u = pext(0, 0, 0);
	struct ed_operation s = { 0 };
	expect(E->t->request(E->ctx, ED_OP_GET_FREE_MAP, &u, NULL, &s), 0, "GET_FREE_MAP");
	check(s.one == FM.nsectors && s.two >= (s.one + 7) / 8 && s.three == UFREEMAP(U),
	      "it says %lu sectors, %lu bytes, at %#lx", (unsigned long)s.one, (unsigned long)s.two,
	      (unsigned long)s.three);
	expect(E->t->request(E->ctx, ED_OP_GET_FREE_MAP, &u, NULL, NULL), ED_E_ARG,
	       "GET_FREE_MAP with no place for the answer");
	u.unit = 99;
	expect(E->t->request(E->ctx, ED_OP_GET_FREE_MAP, &u, NULL, &s), ED_E_UNIT, "GET_FREE_MAP of unit 99");

	/* Reading the whole map costs no system call. */
	uint64_t sc0 = exo_kinfo()->syscalls;
	uint64_t free0 = map_free();
	bool sector0 = allocated(0);
	uint64_t sc1 = exo_kinfo()->syscalls;
	expect((int64_t)(sc1 - sc0), 0, "system calls made while counting %lu free sectors", (unsigned long)free0);
	check(sector0, "sector 0 (the exodisk's own region) is allocated");
	struct ed_unit_info ui;
	expect(edc_unit_info(E, U, &ui), sizeof ui, "ED_OP_UNIT_INFO");
	if (FM.nsectors <= COUNT_LIMIT)
		check(ui.nsectors == FM.nsectors && ui.nsectors - ui.allocated == free0 &&
		      edc_fm_count_free(&FM) == free0 - ui.reserved,
		      "it counts what the map shows: %lu free, %lu of them kept for the exodisk",
		      (unsigned long)(ui.nsectors - ui.allocated), (unsigned long)ui.reserved);
	else
		check(ui.nsectors == FM.nsectors && ui.nsectors - ui.allocated >= free0 &&
		      edc_fm_count_free(&FM) == ui.nsectors - ui.allocated - ui.reserved,
		      "it counts %lu free, %lu of them in the first 32 GiB, %lu kept for the exodisk",
		      (unsigned long)(ui.nsectors - ui.allocated), (unsigned long)free0,
		      (unsigned long)ui.reserved);

	/* It follows allocation exactly. */
	uint64_t S = area(64);
	struct ed_protector e = pext(S + 8, 24 * SECT, 600);
	expect(edc_extent_alloc(E, &e), 0, "allocate 24 sectors");
	sc0 = exo_kinfo()->syscalls;
	bool exact = all_free(S, 8) && all_allocated(S + 8, 24) && all_free(S + 32, 32);
	uint64_t free1 = map_free();
	sc1 = exo_kinfo()->syscalls;
	check(exact && free1 == free0 - 24, "the map shows exactly those 24 sectors (%lu free now), "
	      "read with %lu system calls", (unsigned long)free1, (unsigned long)(sc1 - sc0));
	uint64_t X = S + 40;
	struct ed_protector x = pxn(X, 0, 96, 610);
	expect(edc_xn_alloc(E, &x), 0, "an exonode");
	expect(edc_xn_add_extent(E, &x, -1, X + 4, 8 * SECT), 0, "with an 8-sector extent");
	check(allocated(X) && all_free(X + 1, 3) && all_allocated(X + 4, 8) && !allocated(X + 12) &&
	      map_free() == free0 - 24 - 9, "the map shows the block and the extent, nothing else");

	/* Never durable: freed at once.  Durable: freed when the change is. */
	expect(edc_xn_remove(E, &x, 0), 0, "remove the extent (never written back)");
	check(all_free(X + 4, 8), "its sectors are free at once");
	expect(ext_write(&e), 0, "write the extent's header back");
	expect(edc_extent_shrink(E, &e, 8 * SECT), 0, "shrink it by 8 sectors");
	check(all_allocated(S + 8, 24), "the 8 sectors stay allocated: a crash could bring the old header back");
	expect(ext_write(&e), 0, "write back");
	check(all_allocated(S + 8, 16) && all_free(S + 24, 8), "now they are free");
	expect(edc_extent_dealloc(E, &e), 0, "deallocate the extent");
	check(all_allocated(S + 8, 16), "still allocated until written back");
	expect(ext_write(&e), 0, "write back");
	expect(edc_xn_dealloc(E, &x), 0, "deallocate the exonode (never written back)");
	check(all_free(S, 64), "everything is free");
	expect((int64_t)map_free(), (int64_t)free0, "free sectors, as at the start");

	char su[8];
	snprintf(su, sizeof su, "%d", U);
	const char *args[] = { su, NULL };
	expect(child("fm-write", args), 128 + 15, "a child that stores into the free map is killed");
	check(map_free() == free0, "the map is unchanged");
}

/* edtest child fm-write UNIT: store into the exported free map. */
int c_fm_write(int argc, char **argv)
{
	volatile uint64_t *p = (volatile uint64_t *)(uintptr_t)UFREEMAP(U);
	note("child: storing into the free map");
	p[0] = 0;
	check(false, "child: the store into the free map went through");
	return 1;
}
