/*
 * anchor.c - the superblock finder: where a file system is after a reboot,
 * when all its owner has is the secret.
 *
 * The anchor is the exonode a file system starts from (its superblock):
 * slot 0 of a one-sector block, its entry 0 a struct kit_anchor (magic,
 * type, its own sector, the lock sector, a file-system id), the rest of
 * its entries the file system's own.  Where it goes is not stored anywhere:
 * it is derived from the owner's key.  The key gives a sequence of
 * KIT_ANCHOR_PLACES well-known places (multiples of 8, pseudo-random over
 * the disk), and mkfs puts the anchor at the first of them that is free,
 * together with the sector after it, which the mount lock uses (lock.c).
 * A mount tries the places in the same order and takes the first that
 * holds an anchor of this type that opens with the owner's capabilities.
 *
 * So finding it costs at most a few free-map tests (no system call) and
 * one exonode read per place that was taken when mkfs ran - by the
 * sequence's design usually none, and never more than KIT_ANCHOR_PLACES -
 * however large the disk.  A place taken by something else costs no disk
 * read unless it is a stranger's exonode block, which opens with none of
 * our capabilities (ED_E_CAP) and which we let go of again.  Others cannot
 * squat our places on purpose: without the key they cannot compute them.
 * The fallback for a disk so full that every place is taken is sb=SECTOR,
 * at mkfs and at every mount.
 */
#include <errno.h>
#include <string.h>
#include "libos/kit/kit.h"
#include "libos/clock.h"
#include "kernel/exodisk/siphash.h"

uint64_t kit_anchor_place(const struct kit *k, unsigned i)
{
	uint64_t groups = k->fm.nsectors / 8;
	if (groups == 0)
		return UINT64_MAX;
	struct siphash s;
	sip_init(&s, k->key.k, false);
	sip_update(&s, "kit-anchor", 10);
	sip_update64(&s, k->fm.nsectors);
	sip_update64(&s, i);
	return sip_final64(&s) % groups * 8;
}

/* Codes that say "no anchor of ours here", as opposed to a failure. */
static int elsewhere(int64_t r)
{
	return r == ED_E_CAP || r == ED_E_NOTBOUND || r == ED_E_KIND || r == ED_E_SLOT ||
	       r == ED_E_ENTRY || r == ED_E_ENTTYPE || r == ED_E_RANGE || r == ED_E_XNSIZE;
}

/* Is our anchor at s?  0 (and k->anchor, k->a set), -ENODEV, or an error. */
static int probe(struct kit *k, uint64_t s)
{
	struct ed_protector p = kit_prot(k, s, 0);
	int64_t before = edc_in_cache(k->c, &p);
	struct kit_anchor a;
	int64_t r = kit_xn_get(k, s, 0, KIT_ANCHOR_ENTRY, &a, sizeof a);
	k->st.probes++;
	if (r == ED_E_NOTCACHED) {
		/* Reading the block in failed (kit_again): say why, not "try
		 * again" - a block that fails its MAC fails it every time. */
		int64_t why = edc_xn_read_sync(k->c, &p);
		if (why < 0 && why != ED_E_BUSY)
			r = why;
	}
	if (r == sizeof a && a.magic == KIT_ANCHOR_MAGIC && a.self == s &&
	    strncmp(a.type, k->type, sizeof a.type) == 0 && a.lock < k->fm.nsectors) {
		k->anchor = s;
		k->a = a;
		return 0;
	}
	/* Someone else's block that we read in: let it go again, so that our
	 * hold keeps nothing of theirs in the cache. */
	if (!(before > 0 && (before & ED_IC_HELD)) && (edc_in_cache(k->c, &p) & ED_IC_HELD))
		edc_mark_replacement(k->c, &p);
	if (r >= 0 || elsewhere(r))
		return -ENODEV;
	k->bad_place = s;                /* for the file system's message */
	k->bad_code = r;
	return kit_err(r);
}

int kit_anchor_find(struct kit *k, const char *opts)
{
	uint64_t sb;
	if (kit_opt_num(opts, "sb", UINT64_MAX, &sb) < 0)
		return -EINVAL;
	if (sb != UINT64_MAX)
		return sb < k->fm.nsectors ? probe(k, sb) : -EINVAL;
	int err = -ENODEV;
	for (unsigned i = 0; i < KIT_ANCHOR_PLACES; i++) {
		uint64_t s = kit_anchor_place(k, i);
		if (s == UINT64_MAX || !edc_fm_test(&k->fm, s))
			continue;
		int e = probe(k, s);
		if (e == 0)
			return 0;
		if (e != -ENODEV)
			err = e;          /* remember it, but look on */
	}
	return err;
}

int kit_anchor_make(struct kit *k, const char *opts, uint32_t xnlen)
{
	uint64_t sb;
	if (xnlen % 8 != 0 || xnlen < 56 + 8 + sizeof k->a || xnlen > KIT_ANCHOR_MAX_LEN ||
	    kit_opt_num(opts, "sb", UINT64_MAX, &sb) < 0)
		return -EINVAL;
	/* One per owner, type and disk: a second could never be found. */
	if (sb == UINT64_MAX) {
		int e = kit_anchor_find(k, "");
		k->anchor = 0;
		if (e != -ENODEV)
			return e == 0 ? -EEXIST : e;
	}
	for (unsigned i = 0; i < KIT_ANCHOR_PLACES; i++) {
		uint64_t s = sb != UINT64_MAX ? sb : kit_anchor_place(k, i);
		if (s == UINT64_MAX || s + 2 > k->fm.nsectors || edc_fm_run(&k->fm, s, 2) < 2) {
			if (sb != UINT64_MAX)
				return -EEXIST;
			continue;
		}
		uint64_t now = libos_time_ns();
		memset(&k->a, 0, sizeof k->a);
		k->a.magic = KIT_ANCHOR_MAGIC;
		k->a.self = s;
		k->a.lock = s + 1;
		k->a.fsid = siphash64(k->key.k, &now, sizeof now) ^ s;
		k->a.created = now;
		memcpy(k->a.type, k->type, sizeof k->a.type);
		int64_t r = kit_xn_alloc(k, s, 0, xnlen);
		if (r == 0)
			r = kit_xn_put(k, s, 0, KIT_ANCHOR_ENTRY, &k->a, sizeof k->a);
		if (r >= 0) {
			k->anchor = s;
			return 0;
		}
		if (!kit_taken(r) || sb != UINT64_MAX)
			return kit_err(r);
		k->st.raced++;     /* taken between our look and our request */
	}
	return -ENOSPC;
}
