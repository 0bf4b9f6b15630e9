/*
 * t_persist.c - persistence across a reboot of the same disk image, in
 * steps that tests/qemu/cases_exodisk.py runs in separate boots:
 *
 *   persist-write [crash]   make objects at fixed places in the middle of
 *                           the disk: some written back (and flushed), some
 *                           not; then power off while still holding the
 *                           unwritten ones (the kernel checkpoints what is
 *                           committed), or with "crash" print a marker and
 *                           spin until the host kills QEMU (no checkpoint:
 *                           the next mount replays the commit log)
 *   persist-check           after the reboot: what was written back is
 *                           there, data and bindings; what was not is gone
 *                           and its sectors are free again
 *   persist-tampered        after the host flipped bytes in the extent's
 *                           header and the exonode block: both are refused
 *                           (ED_E_BADMAC), the rest works
 *   persist-nodisk          after the host damaged both superblocks: the
 *                           unit is not mounted (ED_E_UNIT), nothing breaks
 *
 * Capabilities come from a fixed seed, so each boot presents the same ones.
 */
#include <stdio.h>
#include <string.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"

#define SEED 0x70657273697374ull     /* "persist" */

static uint64_t B;                    /* the base: the middle of the disk */

/* Where everything is, relative to B. */
#define E1   0      /* extent, 16 sectors, written back                     */
#define XB   100    /* exonode block: slot 0 written back                   */
#define CB   101    /* its descendant's block, written back                 */
#define XD   110    /* X's extent, 16 sectors                               */
#define CD   130    /* the descendant's extent, 4 sectors                   */
#define XL   150    /* an extent added to X after its write-back (2)        */
#define E2   200    /* extent, 8 sectors, data written, never written back  */
#define X2   300    /* exonode never written back ...                       */
#define X2D  310    /* ... and its extent (8)                               */
#define E3   400    /* extent written back, then deallocated and written back */
#define SPAN 512

static const char xdata[16] = "persistent-data";

static void setup(void)
{
	cap_seed(SEED);
	B = (FM.nsectors / 2) & ~1023ull;
}

static struct ed_protector e1(void) { return pext(B + E1, 16 * SECT, 10); }
static struct ed_protector x(void) { return pxn(B + XB, 0, 200, 20); }
static struct ed_protector cx(void) { return pxn(B + CB, 0, 96, 30); }
static struct ed_protector e2(void) { return pext(B + E2, 8 * SECT, 40); }
static struct ed_protector x2(void) { return pxn(B + X2, 0, 96, 50); }
static struct ed_protector e3(void) { return pext(B + E3, 4 * SECT, 60); }

static void write_data(const struct ed_protector *p, uint64_t s, uint64_t n, uint32_t seed)
{
	static uint8_t buf[16 * SECT];
	fill(buf, n * SECT, s, seed);
	expect(io(p, 1, s, buf, n * SECT), 0, "write %lu sectors at %lu", (unsigned long)n, (unsigned long)s);
}

static bool read_data(const struct ed_protector *p, uint64_t s, uint64_t n, uint32_t seed, bool hdr)
{
	static uint8_t buf[16 * SECT];
	memset(buf, 0, sizeof buf);
	return expect(io(p, 0, s, buf, n * SECT), 0, "read %lu sectors at %lu", (unsigned long)n,
	              (unsigned long)s) && check(same(buf, n * SECT, s, seed, hdr), "they hold what was written");
}

int p_write(int argc, char **argv)
{
	setup();
	bool crash = argc > 1 && strcmp(argv[1], "crash") == 0;
	if (!check(all_free(B, SPAN), "sectors %lu..%lu are free (a fresh disk)", (unsigned long)B,
	           (unsigned long)(B + SPAN - 1)))
		return 1;
	printf("persist: base %lu extent %lu exonode-block %lu\n", (unsigned long)B, (unsigned long)(B + E1),
	       (unsigned long)(B + XB));

	struct ed_protector pe1 = e1(), px = x(), pcx = cx(), pe2 = e2(), px2 = x2(), pe3 = e3();
	expect(edc_extent_alloc(E, &pe1), 0, "extent E1");
	write_data(&pe1, B + E1, 16, 1);
	expect(ext_write(&pe1), 0, "E1 written back");

	expect(edc_xn_alloc(E, &px), 0, "exonode X");
	expect(edc_xn_add_extent(E, &px, -1, B + XD, 16 * SECT), 0, "X's extent");
	expect(edc_xn_add_data(E, &px, -1, xdata, sizeof xdata), 1, "X's data");
	struct ed_cap crc = pcx.rc, cwc = pcx.wc;
	expect(edc_xn_add_exonode(E, &px, -1, B + CB, 0, 96, &crc, &cwc), 2, "X's descendant C");
	expect(edc_xn_add_extent(E, &pcx, -1, B + CD, 4 * SECT), 0, "C's extent");
	write_data(&px, B + XD, 16, 2);
	write_data(&pcx, B + CD, 4, 3);
	expect(xn_write(&pcx), 0, "C written back");
	expect(xn_write(&px), 0, "X written back");

	expect(edc_extent_alloc(E, &pe3), 0, "extent E3");
	expect(ext_write(&pe3), 0, "E3 written back");
	expect(edc_extent_dealloc(E, &pe3), 0, "E3 deallocated");
	expect(ext_write(&pe3), 0, "E3's deallocation written back");

	/* Make everything so far durable: the data writes are in the device's
	 * volatile cache until a flush (ED_OP_FLUSH). */
	expect(edc_flush(E, U), 0, "flush");

	/* Changes never written back. */
	expect(edc_xn_add_extent(E, &px, -1, B + XL, 2 * SECT), 3, "add an extent to X, not written back");
	expect(edc_extent_alloc(E, &pe2), 0, "extent E2, not written back");
	write_data(&pe2, B + E2, 8, 4);
	expect(edc_xn_alloc(E, &px2), 0, "exonode X2, not written back");
	expect(edc_xn_add_extent(E, &px2, -1, B + X2D, 8 * SECT), 0, "X2's extent");
	write_data(&px2, B + X2D, 8, 5);
	check(all_allocated(B + XL, 2) && all_allocated(B + E2, 8) && allocated(B + X2) &&
	      all_allocated(B + X2D, 8), "the free map shows the unwritten allocations");
	check(all_free(B + E3, 4), "and E3's sectors free");

	if (crash) {
		printf("EDTEST-CRASH-NOW (%lu checks, %lu failed)\n", checks_done(), checks_failed());
		for (;;)
			exo_yield();
	}
	printf("persist-write: %lu checks, %lu failed; powering off while holding the unwritten changes\n",
	       checks_done(), checks_failed());
	exo_poweroff(checks_failed() == 0 ? 0 : 1);
}

int p_check(int argc, char **argv)
{
	static uint8_t sec[SECT];
	setup();
	struct ed_protector pe1 = e1(), px = x(), pcx = cx(), pe2 = e2(), px2 = x2(), pe3 = e3();
	check(all_allocated(B + E1, 16) && allocated(B + XB) && allocated(B + CB) &&
	      all_allocated(B + XD, 16) && all_allocated(B + CD, 4), "the written-back objects are allocated");
	check(all_free(B + XL, 2) && all_free(B + E2, 8) && all_free(B + X2, 1) && all_free(B + X2D, 8) &&
	      all_free(B + E3, 4), "what was not written back, or was deallocated, is free");
	expect(edc_in_cache(E, &pe1), 0, "E1's header is not cached after the reboot");
	read_data(&pe1, B + E1, 16, 1, true);
	check(edc_in_cache(E, &pe1) & ED_IC_COMMITTED, "that read left E1's verified header in the cache");

	/* The descendant first: its own capabilities work at once, its
	 * ancestor's only once the ancestor is cached too. */
	struct ed_protector c_by_x = pcx;
	c_by_x.rc = px.rc;
	c_by_x.wc = px.wc;
	expect(io(&pcx, 0, B + CD, sec, SECT), ED_E_NOTCACHED, "I/O through C before reading it in");
	expect(xn_read(&pcx), 0, "read C in");
	read_data(&pcx, B + CD, 4, 3, false);
	expect(io(&c_by_x, 0, B + CD, sec, SECT), ED_E_NOTCACHED, "C with X's capabilities while X is not cached");
	expect(io(&px, 0, B + XD, sec, SECT), ED_E_NOTCACHED, "I/O through X before reading it in");
	expect(xn_read(&px), 0, "read X in");
	read_data(&px, B + XD, 16, 2, false);
	read_data(&c_by_x, B + CD, 4, 3, false);
	char back[16];
	expect(edc_xn_read_data(E, &px, 1, back, sizeof back), 16, "X's data");
	check(memcmp(back, xdata, 16) == 0, "as written");
	expect(io(&px, 0, B + XL, sec, SECT), ED_E_RANGE, "the extent added after the write-back is not there");

	expect(io(&pe2, 0, B + E2, sec, SECT), ED_E_NOTBOUND, "E2 (never written back)");
	expect(ext_read(&pe2), ED_E_NOTBOUND, "EXTENT_READ of E2");
	expect(xn_read(&px2), ED_E_NOTBOUND, "EXONODE_READ of X2 (never written back)");
	expect(ext_read(&pe3), ED_E_NOTBOUND, "EXTENT_READ of E3 (deallocated)");
	struct ed_protector again = pext(B + E2, 8 * SECT, 80);
	expect(edc_extent_alloc(E, &again), 0, "E2's sectors can be allocated again");
	expect(edc_extent_dealloc(E, &again), 0, "(and given back)");
	printf("persist-check: %lu checks, %lu failed\n", checks_done(), checks_failed());
	return checks_failed() == 0 ? 0 : 1;
}

int p_tampered(int argc, char **argv)
{
	setup();
	struct ed_protector pe1 = e1(), px = x(), pcx = cx();
	static uint8_t buf[16 * SECT];
	memset(buf, 0xcc, sizeof buf);
	expect(io(&pe1, 0, B + E1, buf, 16 * SECT), ED_E_BADMAC, "read E1, whose header was tampered with");
	bool untouched = true;
	for (size_t i = 0; i < sizeof buf; i++)
		untouched &= buf[i] == 0xcc;
	check(untouched, "nothing was delivered");
	expect(ext_read(&pe1), ED_E_BADMAC, "EXTENT_READ of E1");
	expect(xn_read(&px), ED_E_BADMAC, "EXONODE_READ of X, whose block was tampered with");
	expect(io(&px, 0, B + XD, buf, SECT), ED_E_NOTCACHED, "I/O through X (never trusted, never cached)");
	expect(xn_read(&pcx), 0, "C's block (untouched) reads in");
	read_data(&pcx, B + CD, 4, 3, false);
	check(allocated(B + E1) && allocated(B + XB), "the tampered objects' sectors stay allocated");
	uint64_t S = area(4);
	struct ed_protector n = pext(S, 4 * SECT, 90);
	expect(edc_extent_alloc(E, &n), 0, "the disk still works: a new extent");
	write_data(&n, S, 4, 6);
	read_data(&n, S, 4, 6, true);
	expect(edc_extent_dealloc(E, &n), 0, "(given back)");
	printf("persist-tampered: %lu checks, %lu failed\n", checks_done(), checks_failed());
	return checks_failed() == 0 ? 0 : 1;
}

int p_nodisk(int argc, char **argv)
{
	struct edc_fm fm;
	expect(edc_fm_open(E, U, &fm), ED_E_UNIT, "the free map of the damaged unit");
	struct ed_protector p = pext(1 << 20, SECT, 10);
	expect(edc_extent_alloc(E, &p), ED_E_UNIT, "allocate on it");
	expect(ext_read(&p), ED_E_UNIT, "read a header from it");
	printf("persist-nodisk: %lu checks, %lu failed\n", checks_done(), checks_failed());
	return checks_failed() == 0 ? 0 : 1;
}
