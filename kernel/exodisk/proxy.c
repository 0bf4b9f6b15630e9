/*
 * proxy.c - proxy exonodes (thesis sections 2.1.1, 2.2 and 4.2.2): a way to
 * lend part of an extent or exonode to another application without
 * revealing its on-disk capabilities.
 *
 * A proxy lives only in memory (a reboot ends it, and so does its creator's
 * exit).  It has its own capabilities, a back-pointer to its origin (an
 * extent, an exonode, or another proxy), rights no greater than those its
 * creator proved on the origin, and a list of sector ranges that must lie
 * inside what the origin covers (for an extent, never its header sector).
 * It can only shrink: ranges can be removed, nothing can be added.  When
 * the origin shrinks, every proxy of it (and every proxy of those) is cut
 * back to match; when the origin goes away, so do they.  I/O through a proxy
 * is checked against the proxy alone (dataio.c).
 */
#include "kernel/exodisk/edcore.h"
#include "kernel/exodisk/xnode.h"

static struct ed_proxy *proxy_at(struct exodisk *ed, uint32_t i)
{
	return ed_pvec_elem(&ed->proxies, sizeof(struct ed_proxy), i);
}

int ed_proxy_find(struct exodisk *ed, const struct ed_protector *prot, struct ed_proxy **pp)
{
	uint64_t i = prot->blkno & 0xffff;
	if (i >= ed->cfg.nproxy)
		return ED_E_NOPROXY;
	struct ed_proxy *p = proxy_at(ed, (uint32_t)i);
	if (!p->used || ((uint64_t)p->gen << 16 | i) != prot->blkno || p->unit != prot->unit)
		return ED_E_NOPROXY;
	*pp = p;
	return 0;
}

/* Keep only the parts of p's ranges inside cov (normalised).  Pieces that
 * do not fit in the table are dropped: a proxy may always reach less. */
static bool clip(struct ed_proxy *p, const struct ed_rl *cov)
{
	struct ed_range out[ED_PROXY_MAX_RANGES];
	uint32_t n = 0;
	uint64_t before = 0, after = 0;
	for (uint32_t i = 0; i < p->nrange; i++) {
		before += p->r[i].nsectors;
		for (uint32_t j = 0; j < cov->n; j++) {
			uint64_t s = ED_MAX(p->r[i].start, cov->r[j].start);
			uint64_t e = ED_MIN(p->r[i].start + p->r[i].nsectors,
			                    cov->r[j].start + cov->r[j].nsectors);
			if (s < e && n < ED_PROXY_MAX_RANGES) {
				out[n++] = (struct ed_range){ s, e - s };
				after += e - s;
			}
		}
	}
	ed_memcpy(p->r, out, n * sizeof(out[0]));
	p->nrange = n;
	return after != before;
}

static void destroy(struct ed_proxy *p)
{
	p->used = false;
	p->nrange = 0;
}

/* Propagate to proxies of proxies until nothing changes.  A proxy whose
 * origin proxy is gone goes too. */
static void settle(struct exodisk *ed)
{
	bool changed = true;
	struct ed_rl *cov = ed_rl_get(ed);
	while (changed) {
		changed = false;
		for (uint32_t i = 0; i < ed->cfg.nproxy; i++) {
			struct ed_proxy *q = proxy_at(ed, i);
			if (!q->used || q->okind != ED_PK_PROXY)
				continue;
			struct ed_protector pr = { .unit = q->unit, .blkno = q->osector };
			struct ed_proxy *p;
			if (ed_proxy_find(ed, &pr, &p) != 0) {
				destroy(q);
				changed = true;
				continue;
			}
			cov->n = 0;
			for (uint32_t k = 0; k < p->nrange; k++)
				ed_rl_add(cov, p->r[k].start, p->r[k].nsectors);
			ed_rl_norm(cov);
			changed |= clip(q, cov);
		}
	}
	ed_rl_put(ed, cov);
}

/* What an origin in entry e covers now (for an extent, without its header
 * sector); false if the origin is gone. */
static bool origin_coverage(struct ed_entry *e, const struct ed_proxy *p, struct ed_rl *cov)
{
	cov->n = 0;
	if (e->kind == 0 || (e->flags & EF_DEALLOC))
		return false;
	if (p->okind == ED_PK_EXTENT) {
		if (e->kind != ED_KIND_EXTENT)
			return false;
		ed_rl_add(cov, e->sector + 1, ed_ext(e)->nsectors - 1);
	} else {
		if (e->kind != ED_KIND_XNBLK)
			return false;
		struct ed_xnblk *b = (struct ed_xnblk *)e->cur;
		if (p->oslot >= ed_xn_nslots(b->nsect, b->slot_bytes))
			return false;
		struct ed_xnhdr *x = ed_xn_slot(e->cur, p->oslot);
		if (x->state != ED_SLOT_LIVE || x->birth != p->obirth)
			return false;
		ed_refs_slot(x, cov);
	}
	ed_rl_norm(cov);
	return true;
}

void ed_proxy_sync(struct exodisk *ed, struct ed_entry *e)
{
	bool any = false;
	struct ed_rl *cov = ed_rl_get(ed);
	for (uint32_t i = 0; i < ed->cfg.nproxy; i++) {
		struct ed_proxy *p = proxy_at(ed, i);
		if (!p->used || p->okind == ED_PK_PROXY || p->unit != e->unit || p->osector != e->sector)
			continue;
		any = true;
		if (origin_coverage(e, p, cov))
			clip(p, cov);
		else
			destroy(p);
	}
	ed_rl_put(ed, cov);
	if (any)
		settle(ed);
}

void ed_proxy_drop_client(struct exodisk *ed, int32_t cslot)
{
	bool any = false;
	for (uint32_t i = 0; i < ed->cfg.nproxy; i++) {
		struct ed_proxy *p = proxy_at(ed, i);
		if (p->used && p->creator == cslot) {
			destroy(p);
			any = true;
		}
	}
	if (any)
		settle(ed);
}

int64_t ed_op_proxy(struct exodisk *ed, struct ed_client *c, struct ed_args *a)
{
	const struct ed_protector *prot = a->prot;
	const struct ed_operation *st = a->stuff;
	if (st == NULL)
		return ED_E_ARG;
	struct ed_obj o;
	int err = ed_obj_find(ed, prot, &o);
	if (err != 0)
		return err;
	if (o.e != NULL && (o.e->flags & EF_DEALLOC))
		return ED_E_DEALLOC;
	uint64_t rights = st->two;
	if (rights == 0 || (rights & ~(uint64_t)(ED_PROXY_READ | ED_PROXY_WRITE)) != 0)
		return ED_E_ARG;
	/* The creator proves every right it lends. */
	if ((rights & ED_PROXY_READ) && (err = ed_obj_access(ed, &o, prot, false)) != 0)
		return err;
	if ((rights & ED_PROXY_WRITE) && (err = ed_obj_access(ed, &o, prot, true)) != 0)
		return err;
	uint64_t n = st->one;
	if (n == 0)
		return ED_E_ARG;
	if (n > ED_PROXY_MAX_RANGES)
		return ED_E_TOOBIG;
	if (a->data == NULL || a->datalen != n * sizeof(struct ed_range))
		return ED_E_ARG;
	const struct ed_range *want = a->data;

	struct ed_rl *cov = ed_rl_get(ed);
	err = ed_obj_coverage(ed, &o, cov);
	if (err == 0 && o.kind == ED_PK_EXTENT) {
		/* Never the header sector. */
		cov->r[0].start++;
		cov->r[0].nsectors--;
		if (cov->r[0].nsectors == 0)
			cov->n = 0;
	}
	for (uint64_t i = 0; err == 0 && i < n; i++) {
		if (want[i].nsectors == 0)
			err = ED_E_ARG;
		else if (want[i].start + want[i].nsectors < want[i].start ||
		         !ed_rl_covers(cov, want[i].start, want[i].nsectors))
			err = ED_E_NOTSUBSET;
	}
	ed_rl_put(ed, cov);
	if (err != 0)
		return err;

	struct ed_proxy *p = NULL;
	uint32_t idx = 0, nfree = 0, mine = 0;
	for (uint32_t i = 0; i < ed->cfg.nproxy; i++) {
		struct ed_proxy *q = proxy_at(ed, i);
		if (!q->used) {
			nfree++;
			if (p == NULL) {
				p = q;
				idx = i;
			}
		} else {
			mine += q->creator == c->slot;
		}
	}
	if (p == NULL)
		return ED_E_NOPROXY;
	/* Issue 17 A3: beyond its first few, a client makes a proxy only while
	 * more than a reserve are left (docs/exodisk.md, "Shared tables"). */
	if (mine >= ED_SHARE_GUARANTEED && nfree <= ed_share_reserve(ed->cfg.nproxy))
		return ED_E_NOPROXY;
	uint32_t gen = p->gen + 1;
	ed_memset(p, 0, sizeof(*p));
	p->used = true;
	p->gen = gen & 0xffffffffu;
	p->unit = prot->unit;
	p->rights = (uint8_t)rights;
	p->okind = o.kind;
	p->creator = c->slot;
	p->rc = st->rc;
	p->wc = st->wc;
	if (o.kind == ED_PK_PROXY) {
		p->osector = prot->blkno;
	} else {
		p->osector = o.e->sector;
		p->oslot = o.slot;
		p->obirth = o.x != NULL ? o.x->birth : 0;
	}
	struct ed_rl *rl = ed_rl_get(ed);
	for (uint64_t i = 0; i < n; i++)
		ed_rl_add(rl, want[i].start, want[i].nsectors);
	ed_rl_norm(rl);
	ed_memcpy(p->r, rl->r, rl->n * sizeof(struct ed_range));
	p->nrange = rl->n;
	ed_rl_put(ed, rl);
	return (int64_t)(((uint64_t)p->gen << 16) | idx);
}

/* Operations on a proxy itself: only ones that take sectors away. */
int64_t ed_proxy_op(struct exodisk *ed, struct ed_client *c, int op, struct ed_args *a,
                    struct ed_proxy *p)
{
	const struct ed_protector *prot = a->prot;
	if (op != ED_OP_EXONODE_DEALLOCATE && op != ED_OP_EXONODE_REMOVE_ENTRY)
		return ED_E_PROXY;
	/* The proxy's write capability is its owner's, whatever rights it lends. */
	if (!ed_cap_equal(&prot->wc, &p->wc))
		return ED_E_CAP;
	if (op == ED_OP_EXONODE_DEALLOCATE) {
		destroy(p);
	} else {
		if (prot->xn_entry < 0 || (uint32_t)prot->xn_entry >= p->nrange)
			return ED_E_ENTRY;
		uint32_t i = (uint32_t)prot->xn_entry;
		ed_memmove(&p->r[i], &p->r[i + 1], (p->nrange - i - 1) * sizeof(p->r[0]));
		p->nrange--;
	}
	settle(ed);
	return 0;
}
