/*
 * org_common.c - what the exodisk organizations share: synchronous
 * transfers and the queue of write-backs in flight (org.h).
 */
#include "apps/exobench/bench.h"
#include "apps/exobench/org.h"

int io_sync(const struct ed_protector *p, int write, uint64_t blkno, void *mem, uint64_t bytes)
{
	volatile int32_t word;
	int64_t r = edc_io(B.c, p, write, blkno, mem, bytes, &word);
	if (r < 0)
		return (int)r;
	return edc_wait(B.c, &word);
}

static void wb_retire(struct sf *s)
{
	int32_t r = edc_wait(B.c, &s->wb.word[s->wb.head]);
	if (r < 0 && s->wb.err == 0)
		s->wb.err = r;
	s->wb.head = (s->wb.head + 1) % WB_RING;
	s->wb.n--;
}

/* Issue one write-back, making room first if the ring is full or the
 * kernel has too many operations in flight. */
static int wb_issue(struct sf *s, const struct ed_protector *p)
{
	for (;;) {
		if (s->wb.n == WB_RING)
			wb_retire(s);
		volatile int32_t *w = &s->wb.word[(s->wb.head + s->wb.n) % WB_RING];
		int64_t r = p->kind == ED_PK_EXONODE ? edc_xn_write(B.c, p, w) : edc_extent_write(B.c, p, w);
		if (r == ED_E_NOIO && s->wb.n > 0) {
			wb_retire(s);
			continue;
		}
		if (r < 0)
			return (int)r;
		s->wb.n++;
		return 0;
	}
}

static int wb_flush(struct sf *s)
{
	int err = 0;
	for (int i = 0; i < s->wb.npend; i++) {
		int r = wb_issue(s, &s->wb.pend[i]);
		if (r < 0 && err == 0)
			err = r;
	}
	s->wb.npend = 0;
	return err;
}

static int wb_queue(struct sf *s, const struct ed_protector *p)
{
	if (s->wb.err != 0)
		return s->wb.err;            /* an earlier write-back failed */
	s->wb.pend[s->wb.npend++] = *p;
	return s->wb.npend >= s->wb.batch || s->wb.npend == WB_RING ? wb_flush(s) : 0;
}

int wb_extent(struct sf *s, const struct ed_protector *p) { return wb_queue(s, p); }
int wb_exonode(struct sf *s, const struct ed_protector *p) { return wb_queue(s, p); }

int wb_drain(struct sf *s)
{
	int err = wb_flush(s);
	while (s->wb.n > 0)
		wb_retire(s);
	if (err == 0)
		err = s->wb.err;
	s->wb.err = 0;
	return err;
}
