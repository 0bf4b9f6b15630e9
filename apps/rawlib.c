/*
 * rawlib.c - helpers for programs that use the raw disk path (see rawlib.h).
 */
#include <stdint.h>
#include <string.h>
#include "apps/rawlib.h"
#include "libos/exo.h"
#include "libos/sys.h"
#include "kernel/uapi/kinfo.h"
#include "kernel/uapi/layout.h"
#include "kernel/uapi/syscall.h"

long raw_submit(const struct raw_req *v, unsigned n)
{
	return sys_call3(SYS_raw_io, RAW_SUBMIT, v, n);
}

long raw_wait(unsigned max_pending)
{
	return sys_call2(SYS_raw_io, RAW_WAIT, max_pending);
}

long raw_info(unsigned unit, struct raw_info *out)
{
	return sys_call3(SYS_raw_io, RAW_INFO, unit, out);
}

long raw_set(unsigned unit, unsigned what, unsigned long value)
{
	return sys_call4(SYS_raw_io, RAW_SET, unit, what, value);
}

void raw_req_make(struct raw_req *q, int op, unsigned unit, uint64_t sector,
                  void *buf, uint32_t nbytes, volatile int32_t *word)
{
	memset(q, 0, sizeof *q);
	q->op = (uint8_t)op;
	q->unit = (uint16_t)unit;
	q->sector = sector;
	q->buf = (uint64_t)(uintptr_t)buf;
	q->nbytes = nbytes;
	q->resptr = (uint64_t)(uintptr_t)word;
}

bool raw_enabled(void) { return (exo_kinfo()->flags & KINFO_F_RAWIO) != 0; }
bool raw_polled(void)  { return (exo_kinfo()->flags & KINFO_F_POLLED) != 0; }
unsigned raw_ndisks(void) { return exo_kinfo()->ndisks; }

const struct blk_export *raw_queue_page(unsigned unit)
{
	return (const struct blk_export *)UDISKQ(unit);
}

void raw_queue_snapshot(unsigned unit, struct blk_export *out)
{
	while (blkx_snapshot(raw_queue_page(unit), out) != 0)
		;   /* the kernel was rewriting it: look again */
}

uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

#define PAT_MAGIC 0x53544458u   /* "XDTS" */

/* One sector's worth of pattern, written into p. */
static void pat_sector(uint64_t *p, unsigned unit, uint64_t sector, uint32_t pass)
{
	uint64_t s = (sector + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)pass << 32 | unit) ^ 0x1234567;
	p[0] = (uint64_t)PAT_MAGIC | (uint64_t)unit << 32 | (uint64_t)(pass & 0xffff) << 48;
	p[1] = sector;
	for (int i = 2; i < 64; i++)
		p[i] = rnd_next(&s);
}

void pat_fill(void *buf, size_t nbytes, unsigned unit, uint64_t sector, uint32_t pass)
{
	uint64_t tmp[64];
	for (size_t off = 0; off < nbytes; off += 512, sector++) {
		pat_sector(tmp, unit, sector, pass);
		memcpy((uint8_t *)buf + off, tmp, 512);   /* buf need not be aligned */
	}
}

long pat_check(const void *buf, size_t nbytes, unsigned unit, uint64_t sector, uint32_t pass)
{
	uint64_t tmp[64];
	for (size_t off = 0; off < nbytes; off += 512, sector++) {
		pat_sector(tmp, unit, sector, pass);
		if (memcmp((const uint8_t *)buf + off, tmp, 512) != 0)
			return (long)(off / 512);
	}
	return -1;
}

uint64_t raw_ticks_to_ns(uint64_t ticks)
{
	return exo_time_to_ns(ticks);
}
