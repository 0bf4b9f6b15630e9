/*
 * refs.c - which sectors a header or an exonode block refers to.
 *
 * This is the exodisk's whole notion of ownership: a sector is allocated
 * exactly when some bound header or exonode block refers to it (or it is in
 * the exodisk's own region).  A self-protected extent refers to all its
 * sectors, header included.  An exonode block refers to its own sectors
 * (while any exonode in it is live) and to every extent entry of its live
 * exonodes; descendant exonodes are separate blocks with their own bindings.
 * Commits diff the committed image's references against the new ones to
 * learn what they allocate and free.
 */
#include "kernel/exodisk/edcore.h"
#include "kernel/exodisk/xnode.h"

void ed_refs_slot(struct ed_xnhdr *x, struct ed_rl *out)
{
	for (struct ed_xnrec *r = ed_xn_first(x); r != NULL; r = ed_xn_next(x, r))
		if (r->type == ED_ENT_EXTENT)
			ed_rl_add(out, ed_xnrec_u64(r, 0), r->a);
}

void ed_refs(const struct ed_entry *e, const uint8_t *img, bool dealloc, struct ed_rl *out)
{
	out->n = 0;
	out->overflow = false;
	if (dealloc)
		return;
	if (e->kind == ED_KIND_EXTENT) {
		const struct ed_exthdr *h = (const struct ed_exthdr *)img;
		ed_rl_add(out, e->sector, h->nsectors);
		return;
	}
	const struct ed_xnblk *b = (const struct ed_xnblk *)img;
	uint32_t n = ed_xn_nslots(b->nsect, b->slot_bytes);
	bool live = false;
	for (uint32_t i = 0; i < n; i++) {
		struct ed_xnhdr *x = ed_xn_slot((uint8_t *)img, i);
		if (x->state != ED_SLOT_LIVE)
			continue;
		live = true;
		ed_refs_slot(x, out);
	}
	if (live)
		ed_rl_add(out, e->sector, b->nsect);
	ed_rl_norm(out);
}
