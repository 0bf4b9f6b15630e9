/*
 * alloc.c - allocation over the exported free map, absorbing rivals' races.
 *
 * The kernel exports every unit's free map read-only to every process, so
 * looking costs no system call - but it changes under the reader as other
 * processes allocate, so a look only proposes and the allocation decides.
 * When another process allocated there first, between our look and our
 * request, the exodisk says so with one of these codes (kit_taken):
 *
 *   ED_E_ALLOCATED  some of the sectors are allocated now (an extent, or
 *                   someone's exonode block where we asked for one)
 *   ED_E_SLOT       an exonode block is there and that slot is in use (or
 *                   freed but not yet written back: dead until then)
 *   ED_E_XNSIZE     an exonode block is there whose exonodes have another
 *                   length (every exonode of a block has one length)
 *   ED_E_NOTCACHED  an exonode block is there that has been written back
 *                   and left the cache
 *   ED_E_KIND       the sector holds the other kind of object (an extent
 *                   header where we expected an exonode block)
 *   ED_E_DEALLOC    the block's exonodes were all freed; it is gone once
 *                   its owner writes it back
 *
 * Each means "look again, further on": the free map already shows what
 * the rival took.  The allocator retries a bounded number of times and
 * then says -ENOSPC; any other code is a real error.
 *
 * Placement: data in runs aligned to KIT_UNIT (4 KiB), as long as the free
 * map allows and at least what the caller must have, at or after a goal
 * (right after a file's last extent, so appends extend it); exonodes of
 * one length packed into blocks, a new block near a goal.  No run ever
 * starts at sector 1 of an aligned group of 8, so no allocation of ours
 * takes the lock sector of someone's anchor (lock.c).
 */
#include <errno.h>
#include "libos/kit/kit.h"

#define RACES 32               /* rivals absorbed before giving up */

int kit_taken(int64_t r)
{
	return r == ED_E_ALLOCATED || r == ED_E_SLOT || r == ED_E_XNSIZE || r == ED_E_NOTCACHED ||
	       r == ED_E_KIND || r == ED_E_DEALLOC;
}

uint64_t kit_find(const struct kit *k, uint64_t goal, uint64_t n, uint64_t align)
{
	/* Skip every lock sector, however many: once many one-sector blocks
	 * fill the groups of 8 around the goal, each leaves its lock sector
	 * free, and a fixed number of skips used to end in a false -ENOSPC
	 * (441 blocks).  The search wraps once; stop when it comes round. */
	uint64_t start = goal;
	int wrapped = 0;
	for (;;) {
		uint64_t s = edc_fm_find(&k->fm, goal, n, align);
		if (s == UINT64_MAX || s % 8 != 1)
			return s;
		if (s < goal)
			wrapped = 1;
		if (wrapped && s >= start)
			return UINT64_MAX;
		goal = s + 1;
	}
}

uint64_t kit_find_near(const struct kit *k, uint64_t goal, uint64_t reach, uint64_t n,
                       uint64_t align)
{
	/* A run that starts at most reach past goal ends by `to`. */
	uint64_t to = goal + reach + n > goal ? goal + reach + n : UINT64_MAX;
	for (;;) {
		uint64_t s = edc_fm_find_in(&k->fm, goal, to, n, align);
		if (s == UINT64_MAX || s % 8 != 1)
			return s;
		goal = s + 1;        /* (a lock sector, as in kit_find) */
	}
}

static uint64_t units(uint64_t n)
{
	return (n + KIT_UNIT - 1) / KIT_UNIT * KIT_UNIT;
}

int64_t kit_alloc_extent(struct kit *k, uint64_t sector, uint16_t slot, int ent, uint64_t goal,
                         uint64_t want, uint64_t min, uint64_t *start)
{
	min = units(min ? min : 1);
	want = units(want) < min ? min : units(want);
	uint64_t n = want;
	for (int races = 0; races < RACES;) {
		uint64_t s = kit_find(k, goal, n, KIT_UNIT);
		if (s == UINT64_MAX) {
			if (n == min)
				return -ENOSPC;
			n = n / 2 / KIT_UNIT * KIT_UNIT < min ? min : n / 2 / KIT_UNIT * KIT_UNIT;
			continue;
		}
		int64_t r = kit_xn_extent(k, sector, slot, ent, s, n);
		if (r >= 0) {
			*start = s;
			return (int64_t)n;
		}
		if (r == ED_E_XNFULL)
			return -EFBIG;    /* no room in the exonode for another extent */
		if (r != ED_E_ALLOCATED)
			return kit_err(r);
		k->st.raced++;
		races++;
		goal = s;             /* the map shows the rival's sectors now */
	}
	return -ENOSPC;
}

int kit_alloc_xn(struct kit *k, struct kit_pool *p, uint64_t goal, uint64_t *sector,
                 uint16_t *slot)
{
	uint32_t nsect = (ED_XNBLK_HDR_BYTES + p->len + ED_SECTOR - 1) / ED_SECTOR;
	uint32_t nslots = (nsect * ED_SECTOR - ED_XNBLK_HDR_BYTES) / p->len;
	for (uint16_t s = 0; p->hint != 0 && s < nslots; s++) {
		int64_t r = kit_xn_alloc(k, p->hint, s, p->len);
		if (r == 0) {
			*sector = p->hint;
			*slot = s;
			return 0;
		}
		if (r != ED_E_SLOT)
			break;            /* not a block we can use any more */
	}
	p->hint = 0;
	for (int races = 0; races < RACES; races++) {
		uint64_t b = kit_find(k, goal, nsect, 1);
		if (b == UINT64_MAX)
			return -ENOSPC;
		/* Not kit_xn_alloc: a block that appeared here meanwhile is a
		 * stranger's, not one to read in and move into. */
		struct ed_protector pr = kit_prot(k, b, 0);
		pr.length = p->len;
		int64_t r;
		int tries = 0;
		/* Busy: wait; a cache full of dirty entries: write ours back
		 * (kit_again), then try again. */
		do
			r = edc_xn_alloc(k->c, &pr);
		while ((r == ED_E_BUSY || r == ED_E_CACHEDIRTY || r == ED_E_QUOTA) &&
		       kit_again(k, r, b, 0, &tries));
		if (r == 0) {
			p->hint = *sector = b;
			*slot = 0;
			return 0;
		}
		if (!kit_taken(r))
			return kit_err(r);
		k->st.raced++;
		goal = b + 1;
	}
	return -ENOSPC;
}
