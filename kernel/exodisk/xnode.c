/*
 * xnode.c - entries inside one exonode (see xnode.h).  Entries stay packed
 * and sorted by entry number, so an exonode is canonical: the same contents
 * always have the same bytes, and the unused tail is always zero.
 */
#include "kernel/exodisk/xnode.h"

struct ed_xnrec *ed_xn_first(struct ed_xnhdr *x)
{
	return x->used >= sizeof(struct ed_xnrec) ? (struct ed_xnrec *)ed_xn_entries(x) : NULL;
}

struct ed_xnrec *ed_xn_next(struct ed_xnhdr *x, struct ed_xnrec *r)
{
	uint8_t *next = (uint8_t *)r + ed_xn_recsize(r->type, r->a);
	if (next + sizeof(struct ed_xnrec) > ed_xn_entries(x) + x->used)
		return NULL;
	return (struct ed_xnrec *)next;
}

static bool all_zero(const uint8_t *p, uint32_t n)
{
	uint8_t acc = 0;
	for (uint32_t i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

int ed_xn_check(const struct ed_xnhdr *x, uint32_t slot_bytes)
{
	const uint8_t *bytes = (const uint8_t *)x;
	if (x->state == ED_SLOT_FREE)
		return all_zero(bytes, slot_bytes) ? 0 : ED_E_CORRUPT;
	if (x->state != ED_SLOT_LIVE || x->pad != 0 || x->pad2 != 0 || x->birth == 0)
		return ED_E_CORRUPT;
	if (x->parent == 0 && x->parent_slot != 0)
		return ED_E_CORRUPT;
	uint32_t area = ed_xn_area(slot_bytes);
	if (x->used > area || (x->used & 7) != 0)
		return ED_E_CORRUPT;
	const uint8_t *ent = bytes + ED_XN_HDR_BYTES;
	uint32_t off = 0;
	int last = -1;
	while (off < x->used) {
		if (x->used - off < sizeof(struct ed_xnrec))
			return ED_E_CORRUPT;
		const struct ed_xnrec *r = (const struct ed_xnrec *)(ent + off);
		uint32_t size = ed_xn_recsize(r->type, r->a);
		if (size == 0 || r->flags != 0 || r->idx >= ED_XN_MAX_ENTRIES || (int)r->idx <= last)
			return ED_E_CORRUPT;
		if (r->type == ED_ENT_DATA && r->a > area)
			return ED_E_CORRUPT;
		if (size > x->used - off)
			return ED_E_CORRUPT;
		const uint8_t *pay = (const uint8_t *)(r + 1);
		if (r->type == ED_ENT_EXTENT) {
			uint64_t start = ed_load64(pay);
			if (r->a == 0 || start == 0 || start + r->a < start)
				return ED_E_CORRUPT;
		} else if (r->type == ED_ENT_EXONODE) {
			if (ed_load64(pay) == 0 || ed_load64(pay + 8) == 0 || r->a > 0xffff)
				return ED_E_CORRUPT;
		} else {
			/* Data padding is zero, so the exonode stays canonical. */
			uint32_t padded = (r->a + 7) & ~7u;
			if (!all_zero(pay + r->a, padded - r->a))
				return ED_E_CORRUPT;
		}
		last = r->idx;
		off += size;
	}
	return all_zero(ent + x->used, area - x->used) ? 0 : ED_E_CORRUPT;
}

struct ed_xnrec *ed_xn_find(struct ed_xnhdr *x, int idx)
{
	for (struct ed_xnrec *r = ed_xn_first(x); r != NULL; r = ed_xn_next(x, r)) {
		if (r->idx == idx)
			return r;
		if (r->idx > idx)
			break;
	}
	return NULL;
}

int ed_xn_free_idx(struct ed_xnhdr *x)
{
	int want = 0;
	for (struct ed_xnrec *r = ed_xn_first(x); r != NULL; r = ed_xn_next(x, r)) {
		if (r->idx != want)
			break;
		want++;
	}
	return want < ED_XN_MAX_ENTRIES ? want : -1;
}

struct ed_xnrec *ed_xn_insert(struct ed_xnhdr *x, uint32_t slot_bytes, int idx, uint8_t type,
                              uint32_t a, const void *payload, uint32_t paylen, int *err)
{
	if (idx < 0 || idx >= ED_XN_MAX_ENTRIES || ed_xn_find(x, idx) != NULL) {
		*err = ED_E_ENTRY;
		return NULL;
	}
	uint32_t size = ed_xn_recsize(type, a);
	if (size > ed_xn_area(slot_bytes) - x->used) {
		*err = ED_E_XNFULL;
		return NULL;
	}
	/* Find the insertion point that keeps entry numbers increasing. */
	uint8_t *ent = ed_xn_entries(x);
	uint32_t off = 0;
	for (struct ed_xnrec *r = ed_xn_first(x); r != NULL && r->idx < idx; r = ed_xn_next(x, r))
		off = (uint32_t)((uint8_t *)r - ent) + ed_xn_recsize(r->type, r->a);
	ed_memmove(ent + off + size, ent + off, x->used - off);
	struct ed_xnrec *r = (struct ed_xnrec *)(ent + off);
	ed_memset(r, 0, size);
	r->type = type;
	r->idx = (uint16_t)idx;
	r->a = a;
	if (paylen > 0)
		ed_memcpy(r + 1, payload, paylen);
	x->used += size;
	return r;
}

void ed_xn_remove(struct ed_xnhdr *x, struct ed_xnrec *r)
{
	ed_xn_remove_span(x, r, ed_xn_recsize(r->type, r->a));
}

void ed_xn_remove_span(struct ed_xnhdr *x, struct ed_xnrec *r, uint32_t size)
{
	uint8_t *ent = ed_xn_entries(x);
	uint32_t off = (uint32_t)((uint8_t *)r - ent);
	ed_memmove(ent + off, ent + off + size, x->used - off - size);
	x->used -= size;
	ed_memset(ent + x->used, 0, size);
}

int ed_xn_set_data(struct ed_xnhdr *x, uint32_t slot_bytes, struct ed_xnrec *r,
                   const void *data, uint32_t len)
{
	uint32_t old = ed_xn_recsize(ED_ENT_DATA, r->a);
	uint32_t new = ed_xn_recsize(ED_ENT_DATA, len);
	if (new > old && new - old > ed_xn_area(slot_bytes) - x->used)
		return ED_E_XNFULL;
	uint8_t *ent = ed_xn_entries(x);
	uint32_t off = (uint32_t)((uint8_t *)r - ent);
	/* Move the entries after this one, then rewrite it in place. */
	ed_memmove(ent + off + new, ent + off + old, x->used - off - old);
	x->used = x->used - old + new;
	r->a = len;
	ed_memset(r + 1, 0, new - ED_XN_DATA_HDR);
	ed_memcpy(r + 1, data, len);
	if (old > new)
		ed_memset(ent + x->used, 0, old - new);
	return 0;
}

uint32_t ed_xn_count(struct ed_xnhdr *x, uint8_t type)
{
	uint32_t n = 0;
	for (struct ed_xnrec *r = ed_xn_first(x); r != NULL; r = ed_xn_next(x, r))
		n += r->type == type;
	return n;
}
