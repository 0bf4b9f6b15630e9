/*
 * virtio_scsi.c - virtio-scsi over any virtio transport: setup, the clock
 * and timer for the SCSI layer's delayed retries, and the console messages
 * for what the SCSI layer reports.
 *
 * The adapter gets its event queue (stocked with a few buffers, so the
 * device can announce units that come, go or change) and its first request
 * queue (256 entries with indirect descriptors); the control queue is not
 * used (no task-management functions are sent).  Then DRIVER_OK, and the
 * scan: each disk LUN becomes a block unit, in target and LUN order.
 * Completions arrive by interrupt, or in polled mode from the block layer's
 * poll, as with virtio-blk.
 */
#include <stdint.h>
#include <stdbool.h>
#include "drivers/blk.h"
#include "drivers/scsi.h"
#include "drivers/vscsi.h"
#include "drivers/virtio.h"
#include "drivers/virtio_scsi.h"
#include "kernel/bootinfo.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/trap.h"
#include "kernel/vm.h"

#define NS_PER_S      1000000000ull
#define EVENT_QSIZE   8

struct vscsi_dev {
	struct vscsi vs;           /* first: the SCSI host is its first member */
	struct virtio_dev *vd;
	struct virtq vq, evq;
	struct timer_event timer;  /* the earliest delayed retry */
	bool polled, ready;
};

static struct scsi_disk *by_unit[BLK_MAX_UNITS];
static struct vscsi_dev *dev_of_unit[BLK_MAX_UNITS];

static uint64_t now_ns(void)
{
	uint64_t t = rdtime(), hz = bootinfo.timebase_hz;
	return t / hz * NS_PER_S + t % hz * NS_PER_S / hz;
}

static uint64_t vs_clock(struct scsi_host *h)
{
	(void)h;
	return now_ns();
}

/* The timer fires: send the retries that are due. */
static void vs_timer(struct timer_event *e)
{
	struct vscsi_dev *d = e->arg;
	scsi_advance(&d->vs.host, now_ns());
}

static void vs_rearm(struct scsi_host *h)
{
	struct vscsi_dev *d = (struct vscsi_dev *)h;
	if (d->polled)
		return;                 /* the block layer's polls advance them */
	uint64_t next = scsi_next_event(h);
	if (next == UINT64_MAX) {
		timer_event_cancel(&d->timer);
		return;
	}
	uint64_t now = now_ns(), hz = bootinfo.timebase_hz;
	uint64_t delta = next > now ? next - now : 0;
	uint64_t ticks = delta / NS_PER_S * hz + (delta % NS_PER_S * hz + NS_PER_S - 1) / NS_PER_S;
	timer_event_add(&d->timer, rdtime() + ticks);
}

static const char *op_name(uint8_t op)
{
	switch (op) {
	case SCSI_OP_TEST_UNIT_READY:  return "TEST UNIT READY";
	case SCSI_OP_INQUIRY:          return "INQUIRY";
	case SCSI_OP_START_STOP_UNIT:  return "START STOP UNIT";
	case SCSI_OP_READ_CAPACITY_10: return "READ CAPACITY(10)";
	case SCSI_OP_SYNC_CACHE_10:    return "SYNCHRONIZE CACHE(10)";
	case SCSI_OP_MODE_SENSE_10:    return "MODE SENSE(10)";
	case SCSI_OP_READ_16:          return "READ(16)";
	case SCSI_OP_WRITE_16:         return "WRITE(16)";
	case SCSI_OP_SERVICE_IN_16:    return "READ CAPACITY(16)";
	case SCSI_OP_REPORT_LUNS:      return "REPORT LUNS";
	default:                       return "command";
	}
}

/* "UNIT ATTENTION, power on occurred (29/01)" or the host's own complaint. */
static void why(const struct scsi_verdict *v, char *buf, size_t size)
{
	if (!v->has_sense) {
		ksnprintf(buf, size, "%s", v->what);
		return;
	}
	const char *asc = scsi_asc_name(v->sense.asc, v->sense.ascq);
	ksnprintf(buf, size, "%s, %s (%02x/%02x)", scsi_key_name(v->sense.key),
	          asc != NULL ? asc : "additional sense code", v->sense.asc, v->sense.ascq);
}

static void vs_report(struct scsi_host *h, const struct scsi_event *ev)
{
	char who[40], w[120];
	if (ev->unit >= 0)
		ksnprintf(who, sizeof who, "scsi %u:%u (disk %d)", ev->target, ev->lun, ev->unit);
	else
		ksnprintf(who, sizeof who, "scsi %u:%u", ev->target, ev->lun);
	if (ev->kind == SCSI_EV_NOTICE) {
		kprintf("%s: %s\n", who, ev->text);
		return;
	}
	/* The unit attention every unit reports after the reset at boot is
	 * expected; the scan's retry of it is not worth a line. */
	if (ev->kind == SCSI_EV_RETRY && ev->unit < 0 && ev->v->has_sense &&
	    ev->v->sense.key == SCSI_K_UNIT_ATTENTION && !bootopt_flag("scsilog"))
		return;
	why(ev->v, w, sizeof w);
	const char *op = op_name(ev->opcode);
	bool rw = ev->opcode == SCSI_OP_READ_16 || ev->opcode == SCSI_OP_WRITE_16;
	char at[32] = "";
	if (rw)
		ksnprintf(at, sizeof at, " at block %lu", (unsigned long)ev->lba);
	switch (ev->kind) {
	case SCSI_EV_RETRY:
		kprintf("%s: %s%s: %s: retrying (attempt %u failed)\n", who, op, at, w, ev->attempt);
		break;
	case SCSI_EV_RECOVERED:
		kprintf("%s: %s%s: %s: the device recovered the data\n", who, op, at, w);
		break;
	case SCSI_EV_FAILED:
		kprintf("%s: %s%s: %s: failed after %u attempt%s (error %d)\n", who, op, at, w,
		        ev->attempt, ev->attempt == 1 ? "" : "s", ev->error);
		break;
	default:
		break;
	}
}

static void vs_event(struct vscsi *v, uint32_t event, uint16_t target, uint32_t lun, uint32_t reason)
{
	uint32_t kind = event & ~VSCSI_T_EVENTS_MISSED;
	if (event & VSCSI_T_EVENTS_MISSED)
		kprintf("virtio-scsi: the device dropped events (no buffers)\n");
	if (kind == VSCSI_T_TRANSPORT_RESET)
		kprintf("virtio-scsi: target %u lun %u %s; units are found only at boot\n", target, lun,
		        reason == VSCSI_EVT_RESET_REMOVED ? "was removed" : "appeared");
	else if (kind == VSCSI_T_PARAM_CHANGE)
		kprintf("virtio-scsi: target %u lun %u: parameters changed (%02x/%02x)\n", target, lun,
		        reason & 0xff, (reason >> 8) & 0xff);
}

static void vs_notify(void *arg, uint32_t queue)
{
	struct vscsi_dev *d = arg;
	virtio_notify(d->vd, queue);
}

static void vs_intr(void *arg, uint32_t why)
{
	struct vscsi_dev *d = arg;
	if (d->ready && (why & VIRTIO_INT_USED))
		vscsi_reap(&d->vs);
}

static uint64_t pages_for(uint64_t bytes)
{
	return (bytes + PGSIZE - 1) / PGSIZE;
}

int virtio_scsi_attach(struct virtio_dev *vd, bool polled)
{
	uint64_t pages = pages_for(sizeof(struct vscsi_dev));
	struct vscsi_dev *d = kalloc_contig(pages);
	if (d == NULL)
		return VIO_E_NOMEM;
	d->vd = vd;
	d->polled = polled;
	uint64_t want = VIO_BIT(VIRTIO_F_VERSION_1) | VIO_BIT(VIRTIO_F_INDIRECT_DESC) |
	                VIO_BIT(VIRTIO_SCSI_F_HOTPLUG) | VIO_BIT(VIRTIO_SCSI_F_CHANGE);
	int e = virtio_negotiate(vd, want, VIO_BIT(VIRTIO_F_VERSION_1));
	struct vscsi_limits lim = { 0 };
	if (e == 0) {
		lim = (struct vscsi_limits){
			.seg_max = virtio_config32(vd, VSCSI_CFG_SEG_MAX),
			.max_sectors = virtio_config32(vd, VSCSI_CFG_MAX_SECTORS),
			.cmd_per_lun = virtio_config32(vd, VSCSI_CFG_CMD_PER_LUN),
			.cdb_size = virtio_config32(vd, VSCSI_CFG_CDB_SIZE),
			.sense_size = virtio_config32(vd, VSCSI_CFG_SENSE_SIZE),
			.max_target = virtio_config16(vd, VSCSI_CFG_MAX_TARGET),
			.max_lun = virtio_config32(vd, VSCSI_CFG_MAX_LUN),
		};
		if (virtio_config32(vd, VSCSI_CFG_NUM_QUEUES) == 0)
			e = VIO_E_CONFIG;
	}
	if (e == 0 && !polled)
		e = virtio_irq_setup(vd, vs_intr, d);
	if (e == 0)
		e = virtio_queue_setup(vd, VSCSI_Q_EVENT, &d->evq, EVENT_QSIZE, false);
	if (e == 0)
		e = virtio_queue_setup(vd, VSCSI_Q_REQUEST, &d->vq, VQ_MAX_SIZE,
		                       (vd->features & VIO_BIT(VIRTIO_F_INDIRECT_DESC)) != 0);
	if (e == 0 && vscsi_init(&d->vs, &d->vq, &d->evq, &lim, vs_notify, d) != 0)
		e = VIO_E_CONFIG;      /* CDB or sense area sizes we cannot use */
	if (e != 0) {
		virtio_fail(vd);        /* queue pages, if any, stay with the dead device */
		kfree_contig(d, pages);
		return e;
	}
	struct scsi_host *h = &d->vs.host;
	h->clock = vs_clock;
	h->rearm = vs_rearm;
	h->report = vs_report;
	d->vs.on_event = vs_event;
	d->timer.fn = vs_timer;
	d->timer.arg = d;
	vq_set_interrupts(&d->vq, !polled);
	vq_set_interrupts(&d->evq, !polled);
	d->ready = true;
	virtio_driver_ok(vd);

	/* Room for as many disks as there are block units left. */
	int room = BLK_MAX_UNITS - blk_nunits();
	if (room <= 0)
		return 0;
	uint64_t dpages = pages_for((uint64_t)room * sizeof(struct scsi_disk));
	struct scsi_disk *disks = kalloc_contig(dpages);
	if (disks == NULL)
		return VIO_E_NOMEM;
	int n = scsi_scan(h, disks, room);
	uint64_t used = pages_for((uint64_t)n * sizeof(struct scsi_disk));
	if (used < dpages)
		kfree_contig((char *)disks + used * PGSIZE, dpages - used);
	for (struct scsi_disk *sd = h->disks; sd != NULL; sd = sd->next) {
		by_unit[sd->unit] = sd;
		dev_of_unit[sd->unit] = d;
	}
	return n;
}

bool virtio_scsi_describe(int unit, char *buf, int size)
{
	struct scsi_disk *sd = unit >= 0 && unit < BLK_MAX_UNITS ? by_unit[unit] : NULL;
	if (sd == NULL)
		return false;
	char where[64];
	virtio_describe(dev_of_unit[unit]->vd, where, sizeof where);
	ksnprintf(buf, (size_t)size, "target %u lun %u, %s %s %s, block %u%s%s%s, %s", sd->target, sd->lun,
	          sd->vendor, sd->product, sd->revision, sd->block_size,
	          sd->wce ? ", write cache" : "", sd->dpofua ? ", FUA" : "", sd->wp ? ", write-protected" : "",
	          where);
	return true;
}
