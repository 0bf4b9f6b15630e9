/*
 * devices.c - bring the disks up at boot (see devices.h).
 *
 * Boot options (kernel command line; `make qemu` passes DISK as disk= and
 * BOOTARGS verbatim):
 *   disk=virtio|model|ram   what unit 0 is (default virtio: no unit of its own;
 *                           virtio-blk and virtio-scsi disks are found on the bus)
 *   model=rz25              the model's parameter table (the only one so far)
 *   ramdisk=MIB             size of the RAM disk (default 64)
 *   polled=1                complete requests by polling instead of interrupts
 *   rawio=1                 enable the benchmark-only raw path (kernel/uapi/rawio.h)
 *   sched=clook|fifo        initial queue policy of every unit (default clook)
 *   depth=N                 initial device depth of every unit (default 2)
 * Units are numbered in this order: the model or RAM disk first, if any, then
 * the virtio devices in bus slot order: a virtio-blk disk is one unit, a
 * virtio-scsi adapter one unit per disk LUN (in target and LUN order).
 */
#include <stdint.h>
#include <stdbool.h>
#include "drivers/blk.h"
#include "drivers/devices.h"
#include "drivers/diskmodel.h"
#include "drivers/modeldev.h"
#include "drivers/ramdisk.h"
#include "drivers/rawio.h"
#include "drivers/virtio.h"
#include "drivers/virtio_blk.h"
#include "drivers/virtio_scsi.h"
#include "kernel/bootinfo.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/kshare.h"
#include "kernel/arch.h"
#include "kernel/trap.h"
#include "kernel/uapi/kinfo.h"
#include "kernel/uapi/layout.h"

#define RAMDISK_DEFAULT_MIB 64

static bool polled;
static struct ramdisk rd;
static int model_unit = -1, ram_unit = -1;

bool devices_polled(void)
{
	return polled;
}

void devices_wait(void)
{
	if (polled) {
		blk_poll();
		return;
	}
	intr_wait();
}

/* A decimal number, or dflt if s is missing or not a number. */
static uint64_t number(const char *s, uint64_t dflt)
{
	if (s == NULL || *s == '\0')
		return dflt;
	uint64_t v = 0;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > UINT64_MAX / 10 - 9)
			return dflt;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	return v;
}

static void attach_model(const char *name)
{
	if (name != NULL && strcmp(name, "rz25") != 0 && strcmp(name, "RZ25") != 0)
		kprintf("disk: unknown model=%s; using the RZ25\n", name);
	model_unit = modeldev_attach(&dm_rz25, polled);
	if (model_unit < 0)
		kprintf("disk: cannot attach the disk model (error %d; it needs %lu MiB of RAM)\n",
		        model_unit, (unsigned long)((uint64_t)dm_rz25.cylinders * dm_rz25.heads *
		                                    dm_rz25.spt * 512 >> 20));
}

static void attach_ramdisk(uint64_t mib)
{
	if (mib == 0 || mib > 1024) {
		kprintf("disk: ramdisk=%lu MiB is out of range (1..1024); using %u\n",
		        (unsigned long)mib, RAMDISK_DEFAULT_MIB);
		mib = RAMDISK_DEFAULT_MIB;
	}
	uint64_t pages = mib << 8;
	void *mem = kalloc_contig(pages);
	if (mem == NULL) {
		kprintf("disk: no memory for a %lu MiB RAM disk\n", (unsigned long)mib);
		return;
	}
	ram_unit = ramdisk_attach(&rd, mem, mib << 20, polled ? RAMDISK_POLLED : RAMDISK_SYNC);
	if (ram_unit < 0) {
		kprintf("disk: cannot attach the RAM disk (error %d)\n", ram_unit);
		kfree_contig(mem, pages);
	}
}

/* One virtio device the platform has (drivers/virtio.h, virtio_scan). */
static void attach_virtio_dev(struct virtio_dev *d, int err, const char *where)
{
	if (d == NULL) {
		if (err == VIO_E_LEGACY)
			kprintf("disk: %s has the legacy virtio interface; start QEMU with "
			        "-global virtio-mmio.force-legacy=false (tools/qemu-disks.sh does)\n", where);
		else
			kprintf("disk: %s not usable (error %d)\n", where, err);
		return;
	}
	int e;
	switch (d->device_id) {
	case VIRTIO_ID_BLOCK:
		e = virtio_blk_attach(d, polled);
		if (e < 0)
			kprintf("disk: virtio-blk at %s not usable (error %d)\n", where, e);
		break;
	case VIRTIO_ID_SCSI:
		e = virtio_scsi_attach(d, polled);
		if (e < 0)
			kprintf("disk: virtio-scsi at %s not usable (error %d)\n", where, e);
		else if (e == 0)
			kprintf("disk: virtio-scsi at %s has no disks\n", where);
		break;
	default:
		break;               /* not a disk: someone else's device */
	}
}

static void describe(int unit, const struct blk_unit_stat *st)
{
	char more[160];
	if (unit == model_unit)
		modeldev_describe(more, sizeof more);
	else if (unit == ram_unit)
		ksnprintf(more, sizeof more, "%s completion", polled ? "polled" : "synchronous");
	else if (!virtio_blk_describe(unit, more, sizeof more) &&
	         !virtio_scsi_describe(unit, more, sizeof more))
		ksnprintf(more, sizeof more, "no description");
	kprintf("disk %d: %s, %lu sectors (%lu MiB), %s\n", unit, st->info.name,
	        (unsigned long)st->info.nsectors, (unsigned long)(st->info.nsectors >> 11), more);
}

void devices_init(void)
{
	bool quiet = bootopt_flag("quiet");
	polled = bootopt_flag("polled");
	bool raw = bootopt_flag("rawio");
	const char *kind = bootopt("disk");
	const char *sched = bootopt("sched");
	uint64_t depth = number(bootopt("depth"), 0);
	/* Each kind's own option is known whichever kind boots (bootopt_check). */
	bootopt_declare("model");
	bootopt_declare("ramdisk");

	if (kind != NULL && strcmp(kind, "model") == 0)
		attach_model(bootopt("model"));
	else if (kind != NULL && strcmp(kind, "ram") == 0)
		attach_ramdisk(number(bootopt("ramdisk"), RAMDISK_DEFAULT_MIB));
	else if (kind != NULL && *kind != '\0' && strcmp(kind, "virtio") != 0 &&
	         strcmp(kind, "scsi") != 0)
		kprintf("disk: unknown disk=%s; using the virtio disks only\n", kind);
	virtio_scan(attach_virtio_dev);

	int n = blk_nunits();
	for (int u = 0; u < n; u++) {
		/* The queue page every process sees read-only at UDISKQ(u). */
		void *page = kalloc();
		if (page == NULL || blk_export_attach(u, page) != 0 || kshare_register(UDISKQ(u), page, 1) != 0)
			panic("devices: cannot export the queue of disk %d", u);
		if (sched != NULL && strcmp(sched, "fifo") == 0)
			blk_set_sched(u, BLK_SCHED_FIFO);
		if (depth > 0)
			blk_set_depth(u, depth > BLK_MAX_DEPTH ? BLK_MAX_DEPTH : (uint32_t)depth);
		struct blk_unit_stat st;
		if (!quiet && blk_stat(u, &st) == 0)
			describe(u, &st);
	}
	if (sched != NULL && strcmp(sched, "fifo") != 0 && strcmp(sched, "clook") != 0)
		kprintf("disk: unknown sched=%s; using clook\n", sched);

	if (polled)
		kpoll_register(blk_poll);
	raw = rawio_init(raw, polled);
	kinfo->ndisks = (uint32_t)n;
	kinfo->flags |= (raw ? KINFO_F_RAWIO : 0) | (polled ? KINFO_F_POLLED : 0);
	if (!quiet)
		kprintf("disks: %d unit%s, completion by %s, raw path %s\n", n, n == 1 ? "" : "s",
		        polled ? "polling" : "interrupt", raw ? "ON (benchmarks only: no protection)" : "off");
}
