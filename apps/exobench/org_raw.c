/*
 * org_raw.c - the Raw organization (the thesis's "Disk Driver" row): file
 * data read and written through the benchmark-only raw path
 * (kernel/uapi/rawio.h, boot option rawio=1), no protection and no
 * metadata.  It is built like the exodisk's I/O path (one system call, the
 * buffer pinned in place, a result word), so the two differ by the
 * protection only.  The write phase ends with a flush, so that its data is
 * as durable as the others' (whose last log record is written with FUA).
 */
#include "apps/exobench/bench.h"
#include "apps/exobench/org.h"
#include "apps/rawlib.h"

int raw_sync(int op, uint64_t sector, void *buf, uint32_t nbytes)
{
	volatile int32_t word = RAW_PENDING;
	struct raw_req q;
	raw_req_make(&q, op, (unsigned)B.unit, sector, buf, nbytes, &word);
	long r = raw_submit(&q, 1);
	if (r != 1)
		return r < 0 ? (int)r : -1;
	while (word == RAW_PENDING)
		raw_wait(0);
	return word;
}

static int rw_write(struct sf *s, int i)
{
	return raw_sync(RAW_WRITE, lay_data(&s->L, i), s->buf, s->L.fsect * ED_SECTOR);
}

static int rw_write_end(struct sf *s)
{
	return raw_sync(RAW_FLUSH, 0, NULL, 0);
}

static int rw_read(struct sf *s, int i)
{
	return raw_sync(RAW_READ, lay_data(&s->L, i), s->buf, s->L.fsect * ED_SECTOR);
}

/* Nothing to deallocate: no metadata. */
static int rw_dealloc(struct sf *s, int i)
{
	return 0;
}

static int rw_dealloc_end(struct sf *s)
{
	return 0;
}

uint64_t raw_flush_ns(uint64_t sector, int n)
{
	static uint8_t one[ED_SECTOR];
	uint64_t t[32];
	if (n > 32)
		n = 32;
	for (int i = 0; i < n; i++) {
		raw_sync(RAW_WRITE, sector, one, ED_SECTOR);
		uint64_t t0 = now();
		raw_sync(RAW_FLUSH, 0, NULL, 0);
		t[i] = ns_since(t0);
	}
	return median_u64(t, n);
}

const struct org org_raw = {
	.name = "raw",
	.write = rw_write,
	.write_end = rw_write_end,
	.read = rw_read,
	.dealloc = rw_dealloc,
	.dealloc_end = rw_dealloc_end,
};
