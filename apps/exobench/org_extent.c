/*
 * org_extent.c - the Extent organization: each file is a self-protected
 * extent whose length counts its header (the first 80 bytes of its first
 * sector), as in the thesis.
 *
 *   write       allocate; one write of the whole file (the kernel puts the
 *               header in front of the data: one request); then the header
 *               is written back (a commit-log record), asynchronously
 *   read        one read of the whole file; a header not in the cache comes
 *               in the same request (checked before the data is delivered)
 *   deallocate  deallocate (a header no longer cached is read in first,
 *               synchronously) and write the header back, asynchronously
 *
 * Each phase ends when every write-back it started is durable.
 */
#include "apps/exobench/bench.h"
#include "apps/exobench/org.h"

static struct ed_protector prot(struct sf *s, int i)
{
	struct ed_protector p = edc_prot_extent(B.unit, lay_data(&s->L, i), &s->rc, &s->wc);
	p.length = (uint64_t)s->L.fsect * ED_SECTOR;
	return p;
}

static int ex_write(struct sf *s, int i)
{
	struct ed_protector p = prot(s, i);
	int64_t r = edc_extent_alloc(B.c, &p);
	if (r == 0)
		r = io_sync(&p, 1, p.blkno, s->buf, p.length);
	if (r == 0)
		r = wb_extent(s, &p);
	return (int)r;
}

static int ex_read(struct sf *s, int i)
{
	struct ed_protector p = prot(s, i);
	return io_sync(&p, 0, p.blkno, s->buf, p.length);
}

static int ex_dealloc(struct sf *s, int i)
{
	struct ed_protector p = prot(s, i);
	int64_t r = edc_extent_dealloc(B.c, &p);
	if (r == ED_E_NOTCACHED) {
		s->readins++;
		r = edc_extent_read_sync(B.c, &p);
		if (r == 0)
			r = edc_extent_dealloc(B.c, &p);
	}
	if (r == 0)
		r = wb_extent(s, &p);
	return (int)r;
}

const struct org org_extent = {
	.name = "extent",
	.write = ex_write,
	.write_end = wb_drain,
	.read = ex_read,
	.dealloc = ex_dealloc,
	.dealloc_end = wb_drain,
};
