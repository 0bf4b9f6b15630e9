/*
 * commit.c - ordered commit: never a durable pointer before what it points
 * to.
 *
 * A disk may keep completed writes in a volatile cache (QEMU's virtio disk
 * does), so "written" is not "durable": only a flush makes every write that
 * completed before it durable.  The exodisk makes metadata durable itself
 * (a write-back is a FUA log record), so a file system's order is always
 *
 *   1. write the data (kit_io, kit_bytes_write);
 *   2. the barrier (kit_barrier: ED_OP_FLUSH, skipped when nothing was
 *      written through the kit since the last one);
 *   3. change the metadata that points at it (sizes, extents, names) and
 *      write it back (kit_commit).  kit_publish is 2 and 3.
 *
 * A crash before 3 leaves the old metadata, pointing at old data; after
 * it, the new; never metadata pointing at data that is not there.  The
 * same rule orders metadata among itself: an exonode is written back
 * before the entry (or record) naming it, deepest first for trees
 * (kit_dirty).  And since the exodisk writes back whole blocks - a sibling
 * exonode's write-back, or a full cache, can write ours at any moment -
 * whatever an exonode says must be safe to become durable at any moment:
 * change a size only after its data is durable, add extents early (past
 * the size they mean nothing), remove them only after the smaller size.
 *
 * Sectors freed by a commit are not reused before the commit is durable
 * (the exodisk sees to that), and freed sectors are not scrubbed: whoever
 * allocates them next must not read them before writing (bytes.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/kit/kit.h"

int kit_barrier(struct kit *k)
{
	if (k->unflushed == 0)
		return 0;
	uint64_t pending = k->unflushed;
	int32_t r = edc_flush(k->c, k->unit);
	k->st.flushes++;
	if (r < 0)
		return kit_err(r);
	k->unflushed -= pending;
	return 0;
}

int kit_barrier_start(struct kit *k, struct kit_flush *f)
{
	f->word = ED_PENDING;
	f->pending = k->unflushed;
	if (f->pending == 0)
		return 0;
	int64_t r = edc_flush_start(k->c, k->unit, &f->word);
	if (r < 0) {
		f->pending = 0;
		return kit_err(r);
	}
	return 0;
}

int kit_barrier_end(struct kit *k, struct kit_flush *f)
{
	if (f->pending == 0)
		return 0;
	int32_t r = edc_wait(k->c, &f->word);
	k->st.flushes++;
	if (r < 0)
		return kit_err(r);
	/* Writes made since the start are not covered: they stay counted. */
	k->unflushed -= f->pending;
	f->pending = 0;
	return 0;
}

int kit_commit(struct kit *k, uint64_t sector, uint16_t slot)
{
	int64_t r = kit_xn_write(k, sector, slot);
	k->st.commits++;
	return r == ED_E_CLEAN ? 0 : kit_err(r);
}

int kit_publish(struct kit *k, uint64_t sector, uint16_t slot)
{
	int e = kit_barrier(k);
	return e < 0 ? e : kit_commit(k, sector, slot);
}

static uint32_t dslot(uint64_t sector, uint32_t icap)
{
	return (uint32_t)((sector * 0x9e3779b97f4a7c15ull) >> 32) & (icap - 1);
}

/* (Re)build the index for at least want entries; 0 or -ENOMEM. */
static int dindex(struct kit_dirty *d, uint32_t want)
{
	uint32_t icap = 64;
	while (icap < want * 2)
		icap *= 2;
	uint32_t *idx = calloc(icap, sizeof *idx);
	if (idx == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->n; i++) {
		uint32_t h = dslot(d->v[i].sector, icap);
		while (idx[h] != 0)
			h = (h + 1) & (icap - 1);
		idx[h] = i + 1;
	}
	free(d->idx);
	d->idx = idx;
	d->icap = icap;
	return 0;
}

int kit_dirty_add(struct kit_dirty *d, uint64_t sector, uint16_t slot, int depth)
{
	if ((d->n + 1) * 2 > d->icap && dindex(d, d->n + 1) < 0)
		return -ENOMEM;
	uint32_t h = dslot(sector, d->icap);
	for (; d->idx[h] != 0; h = (h + 1) & (d->icap - 1)) {
		struct kit_dblk *b = &d->v[d->idx[h] - 1];
		if (b->sector == sector) {
			if (depth > b->depth)
				b->depth = (int16_t)depth;
			return 0;
		}
	}
	if (d->n == d->cap) {
		uint32_t cap = d->cap ? d->cap * 2 : 32;
		struct kit_dblk *v = realloc(d->v, cap * sizeof *v);
		if (v == NULL)
			return -ENOMEM;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n] = (struct kit_dblk){ sector, slot, (int16_t)depth };
	d->idx[h] = ++d->n;
	return 0;
}

int kit_dirty_has(struct kit_dirty *d, uint64_t sector)
{
	if (d->n == 0)
		return 0;
	if (d->icap == 0 && dindex(d, d->n) < 0) {
		/* No memory for the index: look through the list. */
		for (uint32_t i = 0; i < d->n; i++)
			if (d->v[i].sector == sector)
				return 1;
		return 0;
	}
	for (uint32_t h = dslot(sector, d->icap); d->idx[h] != 0; h = (h + 1) & (d->icap - 1))
		if (d->v[d->idx[h] - 1].sector == sector)
			return 1;
	return 0;
}

static int deepest_first(const void *x, const void *y)
{
	const struct kit_dblk *a = x, *b = y;
	if (a->depth != b->depth)
		return a->depth > b->depth ? -1 : 1;
	return a->sector < b->sector ? -1 : a->sector > b->sector;
}

int kit_dirty_commit(struct kit *k, struct kit_dirty *d)
{
	qsort(d->v, d->n, sizeof *d->v, deepest_first);
	struct edc_slot slots[32];
	struct edc_batch b;
	uint32_t i = 0;
	int32_t err = 0;
	while (i < d->n && err == 0) {
		/* One depth at a time, all of it durable before the next. */
		uint32_t j = i;
		edc_batch_init(&b, k->c, slots, 32);
		for (; j < d->n && d->v[j].depth == d->v[i].depth; j++) {
			struct ed_protector p = kit_prot(k, d->v[j].sector, d->v[j].slot);
			int32_t r = edc_batch_xn_write(&b, &p);
			/* Clean, or gone (a block whose exonodes were all freed
			 * before it was ever written): nothing to do. */
			if (r < 0 && r != ED_E_CLEAN && r != ED_E_NOTBOUND && r != ED_E_NOTCACHED && err == 0)
				err = r;
		}
		int32_t r = edc_batch_wait(&b);
		if (err == 0)
			err = r;
		k->st.commits += j - i;
		if (err == 0)
			i = j;
	}
	memmove(d->v, d->v + i, (d->n - i) * sizeof *d->v);
	d->n -= i;
	d->icap = 0;               /* v was reordered: index it again when next added to */
	return kit_err(err);
}

void kit_dirty_free(struct kit_dirty *d)
{
	free(d->v);
	free(d->idx);
	memset(d, 0, sizeof *d);
}
