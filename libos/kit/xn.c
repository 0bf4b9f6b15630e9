/*
 * xn.c - exonode calls and I/O with the retries every call needs.
 *
 * The exodisk cache is the kernel's and shared, so a call on an exonode we
 * used a moment ago can fail for reasons that have nothing to do with the
 * call itself, and each has one fix:
 *
 *   ED_E_NOTCACHED   the block was replaced meanwhile (or never read in
 *                    since boot): read it in (anyone may), call again
 *   ED_E_BUSY        the block is being read in or written back: wait
 *   ED_E_NOIO        too many operations in flight: wait
 *   ED_E_CACHEDIRTY, ED_E_QUOTA
 *                    no room in the cache but for dirty entries, ours among
 *                    them: write ours back (k->writeback), call again
 *   ED_E_DEALLOC     the block's exonodes were all freed and it waits for
 *                    its write-back: write back (k->writeback), call again
 *
 * kit_again applies them; KIT_RETRY wraps any call in it, and the kit_xn_*
 * functions are the usual calls already wrapped.  Everything else is the
 * caller's to handle, with the exodisk's own code.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "libos/kit/kit.h"

#define TRIES      8          /* for fixes that should work at once        */
#define WAITS      (1 << 20)  /* for waits: busy entries always finish      */

int kit_again(struct kit *k, int64_t r, uint64_t sector, uint16_t slot, int *tries)
{
	if (r >= 0)
		return 0;
	/* A new call: kit_why speaks of its block only.  Not during the anchor
	 * search (no anchor yet): there bad_place/bad_code name a well-known
	 * place that could not be read, which the search reports once it has
	 * tried the others (anchor.c), so a later probe must not clear it. */
	if (*tries == 0 && k->anchor != 0)
		k->bad_code = 0;
	int t = (*tries)++;
	if (r == ED_E_BUSY || r == ED_E_NOIO) {
		k->c->t->idle(k->c->ctx);
		return t < WAITS;
	}
	if (t >= TRIES)
		return 0;
	if (r == ED_E_NOTCACHED) {
		struct ed_protector p = kit_prot(k, sector, slot);
		int32_t rr = edc_xn_read_sync(k->c, &p);
		if ((rr == ED_E_CACHEDIRTY || rr == ED_E_QUOTA) && k->writeback && k->writeback(k) == 0)
			rr = edc_xn_read_sync(k->c, &p);
		k->st.retries++;
		/* BUSY: someone else is reading it in; the call will wait. */
		if (rr == 0 || rr == ED_E_BUSY)
			return 1;
		/* It cannot be read in (a damaged block fails its MAC every
		 * time): the call's answer is why (kit_why), not "try again". */
		if (rr != ED_E_CACHEDIRTY && rr != ED_E_QUOTA) {
			k->bad_place = sector;
			k->bad_code = rr;
		}
		return 0;
	}
	if (r == ED_E_CACHEDIRTY || r == ED_E_QUOTA || r == ED_E_DEALLOC) {
		k->st.retries++;
		return k->writeback != NULL && k->writeback(k) == 0;
	}
	return 0;
}

int64_t kit_why(const struct kit *k, int64_t r)
{
	return r == ED_E_NOTCACHED && k->bad_code < 0 ? k->bad_code : r;
}

int kit_say_unmountable(const struct kit *k, int e)
{
	if (e == -EIO && k->bad_code < 0) {
		const char *why = ed_strerror((long)k->bad_code);
		fprintf(stderr, "%s: exonode block at sector %llu: %s; not mounted\n", k->type,
		        (unsigned long long)k->bad_place, why != NULL ? why : "unreadable");
	}
	return e;
}

int64_t kit_xn_alloc(struct kit *k, uint64_t sector, uint16_t slot, uint32_t len)
{
	struct ed_protector p = kit_prot(k, sector, slot);
	p.length = len;
	int64_t r;
	KIT_RETRY(k, sector, slot, r, edc_xn_alloc(k->c, &p));
	return r;
}

int64_t kit_xn_free(struct kit *k, uint64_t sector, uint16_t slot)
{
	struct ed_protector p = kit_prot(k, sector, slot);
	int64_t r;
	KIT_RETRY(k, sector, slot, r, edc_xn_dealloc(k->c, &p));
	return r;
}

int64_t kit_xn_put(struct kit *k, uint64_t sector, uint16_t slot, int ent, const void *data,
                   uint32_t len)
{
	uint8_t pad[ED_XN_MAX_BYTES];
	uint32_t n = (len + 7) & ~7u;
	if (n > sizeof pad)
		return ED_E_TOOBIG;
	memcpy(pad, data, len);
	memset(pad + len, 0, n - len);
	struct ed_protector p = kit_prot(k, sector, slot);
	int64_t r;
	KIT_RETRY(k, sector, slot, r, edc_xn_add_data(k->c, &p, ent, pad, n));
	return r < 0 ? r : 0;
}

int64_t kit_xn_get(struct kit *k, uint64_t sector, uint16_t slot, int ent, void *buf,
                   uint32_t len)
{
	struct ed_protector p = kit_prot(k, sector, slot);
	int64_t r;
	KIT_RETRY(k, sector, slot, r, edc_xn_read_data(k->c, &p, ent, buf, len));
	return r;
}

int64_t kit_xn_extent(struct kit *k, uint64_t sector, uint16_t slot, int ent, uint64_t start,
                      uint64_t nsect)
{
	struct ed_protector p = kit_prot(k, sector, slot);
	int64_t r;
	KIT_RETRY(k, sector, slot, r, edc_xn_add_extent(k->c, &p, ent, start, nsect * ED_SECTOR));
	return r < 0 ? r : 0;
}

int64_t kit_xn_remove(struct kit *k, uint64_t sector, uint16_t slot, int ent)
{
	struct ed_protector p = kit_prot(k, sector, slot);
	int64_t r;
	KIT_RETRY(k, sector, slot, r, edc_xn_remove(k->c, &p, ent));
	return r;
}

int64_t kit_xn_combine(struct kit *k, uint64_t sector, uint16_t slot, int first, int second)
{
	struct ed_protector p = kit_prot(k, sector, slot);
	int64_t r;
	KIT_RETRY(k, sector, slot, r, edc_xn_combine(k->c, &p, first, second));
	return r;
}

int64_t kit_xn_write(struct kit *k, uint64_t sector, uint16_t slot)
{
	struct ed_protector p = kit_prot(k, sector, slot);
	int64_t r;
	KIT_RETRY(k, sector, slot, r, edc_xn_write_sync(k->c, &p));
	return r;
}

/* Copy the map page, the careful way: the kernel rewrites it in place
 * (gen odd while it does) when the exonode changes. */
static int64_t copy_map(struct kit *k, const struct ed_protector *p, int64_t addr, void *page)
{
	const volatile struct ed_xnmap_hdr *h = (const volatile void *)(uintptr_t)addr;
	uint64_t g0, g1;
	do {
		g0 = h->gen;
		memcpy(page, (const void *)(uintptr_t)addr, 4096);
		g1 = h->gen;
	} while ((g0 & 1) || g0 != g1);
	edc_xn_unmap(k->c, p, (uint64_t)addr);
	const struct ed_xnmap_hdr *c = page;
	return c->magic == ED_XNMAP_MAGIC && c->state == ED_XNMAP_LIVE ? 0 : ED_E_CORRUPT;
}

int64_t kit_xn_map_prot(struct kit *k, const struct ed_protector *p, void *page)
{
	int64_t r;
	KIT_RETRY(k, p->blkno, p->xn_num, r, edc_xn_map(k->c, p));
	return r < 0 ? r : copy_map(k, p, r, page);
}

int64_t kit_xn_map(struct kit *k, uint64_t sector, uint16_t slot, void *page)
{
	struct ed_protector p = kit_prot(k, sector, slot);
	return kit_xn_map_prot(k, &p, page);
}

int64_t kit_io_prot(struct kit *k, const struct ed_protector *p, int write, uint64_t blkno,
                    void *buf, uint64_t bytes)
{
	int64_t r;
	if (write) {
		k->unflushed++;
		KIT_RETRY(k, p->blkno, p->xn_num, r, edc_write(k->c, p, blkno, buf, bytes));
	} else {
		KIT_RETRY(k, p->blkno, p->xn_num, r, edc_read(k->c, p, blkno, buf, bytes));
	}
	return r;
}

int64_t kit_io(struct kit *k, uint64_t sector, uint16_t slot, int write, uint64_t blkno,
               void *buf, uint64_t bytes)
{
	struct ed_protector p = kit_prot(k, sector, slot);
	return kit_io_prot(k, &p, write, blkno, buf, bytes);
}
