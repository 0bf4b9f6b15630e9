/*
 * modeldev.c - the disk model in the kernel (see modeldev.h).
 *
 * The model works in virtual nanoseconds from its attach time; the kernel
 * reads rdtime for "now", so the model's clock is whatever clock QEMU gives
 * the guest.  Under `-icount shift=0,sleep=off` (what tools/qemu-disks.sh
 * passes for DISK=model) that clock counts executed instructions and jumps
 * over idle time, so a run's timings depend only on what the guest executes,
 * not on how fast or busy the host is.
 *
 * When a request is started the model decides its completion time at once;
 * a one-shot timer event is kept armed for the earliest one, and when it
 * fires everything due is completed (each at its own virtual time, so the
 * requests its completion lets the block layer start reach the drive then).
 * In polled mode there is no timer: polls complete what is due by now.
 */
#include <stdint.h>
#include <stdbool.h>
#include "drivers/blk.h"
#include "drivers/diskmodel.h"
#include "drivers/modeldisk.h"
#include "drivers/modeldev.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/arch.h"
#include "kernel/trap.h"
#include "kernel/bootinfo.h"

#define NS_PER_S 1000000000ull

static struct modeldev {
	struct modeldisk md;
	struct timer_event ev;
	uint64_t t0;              /* rdtime at virtual time 0 */
	uint64_t hz;
	bool polled;
} mdev;

static uint64_t ticks_to_ns(uint64_t t)
{
	return t / mdev.hz * NS_PER_S + t % mdev.hz * NS_PER_S / mdev.hz;
}

/* The first tick at or after ns, so the event never fires early. */
static uint64_t ns_to_ticks_up(uint64_t ns)
{
	return ns / NS_PER_S * mdev.hz + (ns % NS_PER_S * mdev.hz + NS_PER_S - 1) / NS_PER_S;
}

static uint64_t model_clock(struct modeldisk *md)
{
	(void)md;
	return ticks_to_ns(rdtime() - mdev.t0);
}

static void model_rearm(struct modeldisk *md)
{
	if (mdev.polled)
		return;
	uint64_t next = modeldisk_next_event(md);
	if (next == UINT64_MAX)
		timer_event_cancel(&mdev.ev);
	else
		timer_event_add(&mdev.ev, mdev.t0 + ns_to_ticks_up(next));
}

/* The timer event: complete everything due (advance re-arms for the rest). */
static void model_due(struct timer_event *e)
{
	(void)e;
	modeldisk_advance(&mdev.md, model_clock(&mdev.md));
}

int modeldev_attach(const struct dm_params *p, bool polled)
{
	struct dm_disk probe;
	if (dm_init(&probe, p) != 0)
		return BLK_E_INVAL;
	uint64_t bytes = probe.nsectors * BLK_SECTOR_SIZE;
	uint64_t pages = (bytes + PGSIZE - 1) / PGSIZE;
	void *mem = kalloc_contig(pages);
	if (mem == NULL)
		return BLK_E_INVAL;
	int unit = modeldisk_attach(&mdev.md, p, mem, bytes);
	if (unit < 0) {
		kfree_contig(mem, pages);
		return unit;
	}
	mdev.hz = bootinfo.timebase_hz;
	mdev.t0 = rdtime();
	mdev.polled = polled;
	mdev.ev.fn = model_due;
	mdev.md.clock = model_clock;
	mdev.md.rearm = model_rearm;
	mdev.md.owner = &mdev;
	return unit;
}

void modeldev_describe(char *buf, int size)
{
	const struct dm_disk *d = &mdev.md.disk;
	ksnprintf(buf, (size_t)size, "%u cyl x %u heads x %u sectors, %u rpm, %lu ms mean seek, data in RAM",
	          d->p.cylinders, d->p.heads, d->p.spt, d->p.rpm,
	          (unsigned long)(d->p.seek_avg_ns / 1000000));
}
