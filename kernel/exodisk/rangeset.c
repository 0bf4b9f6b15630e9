/*
 * rangeset.c - lists of sector ranges: what a header or exonode refers to,
 * what a proxy may reach, what a commit allocates and frees.  Lists are
 * small (an exonode block refers to at most a few hundred ranges), so plain
 * insertion sort and linear merges are the clearest choice.  A list that
 * runs out of room records the overflow instead of writing past its store;
 * callers size lists so that this cannot happen, and check it anyway.
 */
#include "kernel/exodisk/edcore.h"

void ed_rl_init(struct ed_rl *l, struct ed_range *store, uint32_t cap)
{
	l->r = store;
	l->n = 0;
	l->cap = cap;
	l->overflow = false;
}

void ed_rl_add(struct ed_rl *l, uint64_t start, uint64_t count)
{
	if (count == 0)
		return;
	if (l->n == l->cap) {
		l->overflow = true;
		return;
	}
	l->r[l->n].start = start;
	l->r[l->n].nsectors = count;
	l->n++;
}

void ed_rl_norm(struct ed_rl *l)
{
	for (uint32_t i = 1; i < l->n; i++) {
		struct ed_range t = l->r[i];
		uint32_t j = i;
		while (j > 0 && l->r[j - 1].start > t.start) {
			l->r[j] = l->r[j - 1];
			j--;
		}
		l->r[j] = t;
	}
	uint32_t out = 0;
	for (uint32_t i = 0; i < l->n; i++) {
		if (out > 0) {
			struct ed_range *p = &l->r[out - 1];
			if (l->r[i].start <= p->start + p->nsectors) {
				uint64_t end = ED_MAX(p->start + p->nsectors, l->r[i].start + l->r[i].nsectors);
				p->nsectors = end - p->start;
				continue;
			}
		}
		l->r[out++] = l->r[i];
	}
	l->n = out;
}

bool ed_rl_covers(const struct ed_rl *l, uint64_t start, uint64_t count)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (start >= l->r[i].start && start - l->r[i].start <= l->r[i].nsectors &&
		    count <= l->r[i].nsectors - (start - l->r[i].start))
			return true;
	return false;
}

bool ed_rl_overlaps(const struct ed_rl *l, uint64_t start, uint64_t count)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (ed_overlap(l->r[i].start, l->r[i].nsectors, start, count))
			return true;
	return false;
}

void ed_rl_diff(const struct ed_rl *a, const struct ed_rl *b, struct ed_rl *out)
{
	out->n = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		uint64_t s = a->r[i].start, e = s + a->r[i].nsectors;
		/* b is sorted: cut b's ranges out of [s, e) from left to right. */
		for (uint32_t j = 0; j < b->n && s < e; j++) {
			uint64_t bs = b->r[j].start, be = bs + b->r[j].nsectors;
			if (be <= s || bs >= e)
				continue;
			if (bs > s)
				ed_rl_add(out, s, bs - s);
			s = ED_MAX(s, be);
		}
		if (s < e)
			ed_rl_add(out, s, e - s);
	}
}

void ed_rl_intersect(const struct ed_rl *a, const struct ed_rl *b, struct ed_rl *out)
{
	out->n = 0;
	for (uint32_t i = 0; i < a->n; i++)
		for (uint32_t j = 0; j < b->n; j++) {
			uint64_t s = ED_MAX(a->r[i].start, b->r[j].start);
			uint64_t e = ED_MIN(a->r[i].start + a->r[i].nsectors, b->r[j].start + b->r[j].nsectors);
			if (s < e)
				ed_rl_add(out, s, e - s);
		}
	ed_rl_norm(out);
}

uint64_t ed_rl_total(const struct ed_rl *l)
{
	uint64_t t = 0;
	for (uint32_t i = 0; i < l->n; i++)
		t += l->r[i].nsectors;
	return t;
}

/* ---- the scratch pool ------------------------------------------------------------ */

struct ed_rl *ed_rl_get(struct exodisk *ed)
{
	if (ed->scratch_top == ED_NSCRATCH)
		return NULL;    /* nesting deeper than any caller uses: a bug */
	uint8_t *page = ed_pvec_page(&ed->scratch, ed->scratch_top++);
	struct ed_rl *l = (struct ed_rl *)page;
	ed_rl_init(l, (struct ed_range *)(page + 64), (ED_PAGE - 64) / sizeof(struct ed_range));
	return l;
}

void ed_rl_put(struct exodisk *ed, struct ed_rl *l)
{
	(void)l;
	ed->scratch_top--;
}
