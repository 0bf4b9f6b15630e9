/*
 * org_exonode.c - the Exonode organization: each file is an exonode with
 * one extent entry; a group's exonodes share one sector (the block), which
 * precedes the group's data (org.h).
 *
 *   write       allocate the exonode in the group's block (the group's first
 *               creates the block), add the file's extent, write the data
 *               through the exonode; when the group is complete, write the
 *               block back (a commit-log record), asynchronously
 *   read        read through the exonode; a block no longer cached is read
 *               in first, synchronously (once per group)
 *   deallocate  deallocate the exonode (its extent goes with it); when the
 *               group is done, write the block back, asynchronously
 *
 * Each phase ends when every write-back it started is durable.
 */
#include "apps/exobench/bench.h"
#include "apps/exobench/org.h"

static struct ed_protector prot(struct sf *s, int i)
{
	struct ed_protector p = edc_prot_xn(B.unit, lay_block(&s->L, i / s->L.group),
	                                    (uint16_t)(i % s->L.group), &s->rc, &s->wc);
	p.length = s->L.xnlen;
	return p;
}

static int last_of_group(struct sf *s, int i)
{
	return i % s->L.group == s->L.group - 1 || i == s->L.nfiles - 1;
}

/* Do op; if the block is not cached, read it in and do it again. */
static int64_t cached(struct sf *s, const struct ed_protector *p, int64_t (*op)(struct sf *, int),
                      int i)
{
	int64_t r = op(s, i);
	if (r == ED_E_NOTCACHED) {
		s->readins++;
		r = edc_xn_read_sync(B.c, p);
		if (r == 0)
			r = op(s, i);
	}
	return r;
}

static int xo_write(struct sf *s, int i)
{
	struct ed_protector p = prot(s, i);
	uint64_t data = lay_data(&s->L, i), bytes = (uint64_t)s->L.fsect * ED_SECTOR;
	int64_t r = edc_xn_alloc(B.c, &p);
	if (r == 0)
		r = edc_xn_add_extent(B.c, &p, 0, data, bytes);
	if (r == 0)
		r = io_sync(&p, 1, data, s->buf, bytes);
	if (r == 0 && last_of_group(s, i))
		r = wb_exonode(s, &p);
	return (int)r;
}

static int64_t read_once(struct sf *s, int i)
{
	struct ed_protector p = prot(s, i);
	return io_sync(&p, 0, lay_data(&s->L, i), s->buf, (uint64_t)s->L.fsect * ED_SECTOR);
}

static int xo_read(struct sf *s, int i)
{
	struct ed_protector p = prot(s, i);
	return (int)cached(s, &p, read_once, i);
}

static int64_t dealloc_once(struct sf *s, int i)
{
	struct ed_protector p = prot(s, i);
	return edc_xn_dealloc(B.c, &p);
}

static int xo_dealloc(struct sf *s, int i)
{
	struct ed_protector p = prot(s, i);
	int64_t r = cached(s, &p, dealloc_once, i);
	if (r == 0 && last_of_group(s, i))
		r = wb_exonode(s, &p);
	return (int)r;
}

const struct org org_exonode = {
	.name = "exonode",
	.write = xo_write,
	.write_end = wb_drain,
	.read = xo_read,
	.dealloc = xo_dealloc,
	.dealloc_end = wb_drain,
};
