/*
 * edc_sys.c - the guest transport of the exodisk client library: each
 * request is the exodisk_request system call, waiting sleeps in the kernel, and
 * the free map is read where the kernel maps it (UFREEMAP(unit), found with
 * ED_OP_GET_FREE_MAP the first time a unit's map is wanted).
 */
#include <stdint.h>
#include <string.h>
#include "libos/edc.h"
#include "libos/sys.h"
#include "kernel/uapi/layout.h"

#define MAX_UNITS 8

static struct {
	int known;               /* 1: asked the kernel; 2: it answered */
	const uint8_t *base;
	uint64_t nsectors;
} units[MAX_UNITS];

static int64_t sys_request(void *ctx, int op, struct ed_protector *prot, struct ed_buf *buf,
                           struct ed_operation *stuff)
{
	(void)ctx;
	return sys_call4(SYS_exodisk_request, op, prot, buf, stuff);
}

/* Waiting for a result word: sleep in the kernel until one of our
 * operations completes (ED_OP_POLL with a count), rather than spinning.
 * Spinning takes the CPU from other programs and, under the disk model's
 * -icount, makes QEMU execute an instruction per simulated nanosecond where
 * an idle CPU lets it skip ahead. */
static void sys_idle(void *ctx)
{
	long n = sys_request(ctx, ED_OP_POLL, NULL, NULL, NULL);
	if (n > 0) {
		struct ed_operation most;
		memset(&most, 0, sizeof most);
		most.one = (uint64_t)n - 1;
		sys_request(ctx, ED_OP_POLL, NULL, NULL, &most);
	} else {
		sys_yield();
	}
}

/* Waiting for one result word: one system call sleeps until that word is
 * final (ED_OP_POLL with the word's address in stuff->two), where sys_idle
 * counts first and then sleeps.  If nothing of ours is in flight the word
 * belongs to no queued operation: give up the CPU instead, as sys_idle does. */
static void sys_wait_word(void *ctx, volatile int32_t *word)
{
	struct ed_operation w;
	memset(&w, 0, sizeof w);
	w.two = (uint64_t)(uintptr_t)word;
	long n = sys_request(ctx, ED_OP_POLL, NULL, NULL, &w);
	if (n <= 0 && *word == ED_PENDING)
		sys_yield();
}

/* Ask the kernel where unit's free map is, once. */
static int learn(int unit)
{
	if (unit < 0 || unit >= MAX_UNITS)
		return 0;
	if (units[unit].known == 0) {
		struct ed_protector p;
		struct ed_operation s;
		memset(&p, 0, sizeof p);
		memset(&s, 0, sizeof s);
		p.unit = (uint16_t)unit;
		p.xn_entry = -1;
		units[unit].known = 1;
		long r = sys_call4(SYS_exodisk_request, ED_OP_GET_FREE_MAP, &p, 0, &s);
		if (r == 0 && s.one > 0 && s.three != 0) {
			units[unit].base = (const uint8_t *)(uintptr_t)s.three;
			units[unit].nsectors = s.one;
			units[unit].known = 2;
		}
	}
	return units[unit].known == 2;
}

static const uint64_t *sys_fm_page(void *ctx, int unit, uint32_t i)
{
	(void)ctx;
	if (!learn(unit))
		return NULL;
	uint64_t npages = (units[unit].nsectors + 4096 * 8 - 1) / (4096 * 8);
	if (i >= npages)
		return NULL;
	return (const uint64_t *)(units[unit].base + (uint64_t)i * 4096);
}

static uint64_t sys_nsectors(void *ctx, int unit)
{
	(void)ctx;
	return learn(unit) ? units[unit].nsectors : 0;
}

static const struct edc_transport sys_transport = {
	.request = sys_request,
	.idle = sys_idle,
	.fm_page = sys_fm_page,
	.nsectors = sys_nsectors,
};

static struct edc sys_edc;

/* Called from libos_start: make the system call the default transport. */
void edc_sys_init(void)
{
	edc_init(&sys_edc, &sys_transport, NULL);
	edc_set_wait(&sys_edc, sys_wait_word);
	edc_set_default(&sys_edc);
}
