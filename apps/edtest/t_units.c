/*
 * t_units.c - disk units: a unit with no exodisk is refused everywhere
 * (ED_E_UNIT), and with two units an object on one is nothing on the other
 * (separate free maps, bindings and caches).
 */
#include <string.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"

void t_units(void)
{
	static uint8_t buf[SECT];
	struct ed_protector p = pext(area(1), SECT, 1500);
	struct ed_protector q = p;
	q.unit = 99;
	expect(edc_extent_alloc(E, &q), ED_E_UNIT, "allocate on unit 99");
	expect(io(&q, 0, q.blkno, buf, SECT), ED_E_UNIT, "read from unit 99");
	expect(ext_read(&q), ED_E_UNIT, "EXTENT_READ on unit 99");
	expect(edc_pending(E), 0, "POLL needs no unit");

	unsigned n = exo_kinfo()->ndisks;
	if (n < 2) {
		note("one disk unit: the two-unit checks need DISKS=2");
		return;
	}
	int other = U == 0 ? 1 : 0;
	struct edc_fm ofm;
	if (!check(edc_fm_open(E, other, &ofm) == 0, "unit %d has an exodisk too", other))
		return;
	uint64_t s = p.blkno;
	expect(edc_extent_alloc(E, &p), 0, "an extent at sector %lu of unit %d", (unsigned long)s, U);
	q = p;
	q.unit = (uint16_t)other;
	expect(edc_in_cache(E, &q), 0, "IN_CACHE of the same sector on unit %d", other);
	if (edc_fm_test(&ofm, s)) {
		note("sector %lu of unit %d is in use: skipping the allocation there", (unsigned long)s, other);
	} else {
		expect(io(&q, 0, s, buf, SECT), ED_E_NOTBOUND, "read it on unit %d", other);
		expect(edc_extent_alloc(E, &q), 0, "allocate the same sector number on unit %d", other);
		check(edc_fm_test(&ofm, s) && allocated(s), "both free maps show it");
		expect(edc_extent_dealloc(E, &q), 0, "deallocate it on unit %d", other);
		check(!edc_fm_test(&ofm, s) && allocated(s), "only unit %d's map changed", other);
	}
	expect(edc_extent_dealloc(E, &p), 0, "deallocate it on unit %d", U);
}
