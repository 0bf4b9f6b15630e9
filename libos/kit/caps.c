/*
 * caps.c - the capabilities of a file system's objects, computed from the
 * owner's secret (libos/capkey.h: one master key per secret and type, then
 * a pseudo-random function of purpose and place).  An object's capabilities
 * depend only on where it is, so after a reboot the owner recomputes the
 * ones it allocated with, and nothing secret is ever written to the disk.
 *
 *   exonode (sector, slot):  read cap('r', sector, slot), write cap('w', ...)
 *   extent at sector:        read cap('R', sector, 0),    write cap('W', ...)
 *
 * (The exonode form is the one unixfs and kvfs have always used.)  To share
 * one object, hand out its two capabilities: that reveals no other.
 */
#include "libos/kit/kit.h"

struct ed_protector kit_prot(const struct kit *k, uint64_t sector, uint16_t slot)
{
	struct ed_cap rc = capkey_cap(&k->key, 'r', sector, slot);
	struct ed_cap wc = capkey_cap(&k->key, 'w', sector, slot);
	return edc_prot_xn(k->unit, sector, slot, &rc, &wc);
}

struct ed_protector kit_prot_extent(const struct kit *k, uint64_t sector)
{
	struct ed_cap rc = capkey_cap(&k->key, 'R', sector, 0);
	struct ed_cap wc = capkey_cap(&k->key, 'W', sector, 0);
	return edc_prot_extent(k->unit, sector, &rc, &wc);
}
