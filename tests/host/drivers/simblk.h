/*
 * simblk.h - a simulated virtio-blk device for host tests of drivers/vblk.c.
 *
 * It takes chains from the queue (simvirtio.h), checks each request against
 * what the spec and the negotiated limits allow (header, data buffers,
 * status byte, seg_max, size_max, block size, capacity), and executes and
 * returns them when the test says, in any order.  Its disk has a volatile
 * write cache, as QEMU's does: a write lands in `cache` (what reads see) and
 * reaches `durable` (what would survive a power cut) only when a FLUSH is
 * executed after it.  Faults can be injected: an I/O error on a chosen
 * sector, FLUSH unsupported, a short used length, a status never written.
 */
#ifndef TESTS_DRIVERS_SIMBLK_H
#define TESTS_DRIVERS_SIMBLK_H

#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <stdlib.h>
#include "drivers/vblk.h"
#include "simvirtio.h"
#include "check.h"

#define SIMBLK_MAXHELD VQ_MAX_SIZE

struct simblk {
	struct simvq q;
	struct vblk_limits lim;          /* what the device offers                     */
	uint8_t *cache, *durable;
	bool *dirty;                     /* per sector: in cache, not yet durable       */
	struct sim_chain held[SIMBLK_MAXHELD];
	int nheld;
	/* Faults. */
	int64_t fail_sector;             /* IOERR for any request touching it; -1 none  */
	bool flush_unsupp;
	bool short_len;                  /* report one byte less than written, once     */
	bool no_status;                  /* leave the status byte alone, once           */
	/* What it saw. */
	uint32_t nreq, nread, nwrite, nflush, max_data_bufs;
	uint32_t notifies;
};

static void simblk_init(struct simblk *d, const struct virtq *vq, bool indirect,
                        const struct vblk_limits *lim)
{
	memset(d, 0, sizeof(*d));
	simvq_init(&d->q, vq, indirect);
	d->lim = *lim;
	size_t bytes = (size_t)lim->capacity * 512;
	d->cache = calloc(1, bytes);
	d->durable = calloc(1, bytes);
	d->dirty = calloc(lim->capacity, sizeof(bool));
	CHECK(d->cache && d->durable && d->dirty);
	d->fail_sector = -1;
}

static void simblk_free(struct simblk *d)
{
	free(d->cache);
	free(d->durable);
	free(d->dirty);
}

static void simblk_notify(void *arg)
{
	((struct simblk *)arg)->notifies++;
}

/* Take every offered chain; returns how many the device now holds. */
static int simblk_take(struct simblk *d)
{
	while (d->nheld < SIMBLK_MAXHELD && sim_take(&d->q, &d->held[d->nheld]))
		d->nheld++;
	return d->nheld;
}

/* Execute the held request at index i and return it through the used ring. */
static void simblk_complete(struct simblk *d, int i)
{
	CHECK(i >= 0 && i < d->nheld);
	struct sim_chain c = d->held[i];
	d->held[i] = d->held[--d->nheld];

	/* Header: 16 device-readable bytes first; status: 1 writable byte last. */
	CHECK(c.n >= 2);
	CHECK(!c.buf[0].dev_writes && c.buf[0].len == 16);
	CHECK(c.buf[c.n - 1].dev_writes && c.buf[c.n - 1].len == 1);
	struct vblk_hdr h;
	memcpy(&h, (void *)(uintptr_t)c.buf[0].addr, sizeof h);
	uint8_t *status = (uint8_t *)(uintptr_t)c.buf[c.n - 1].addr;
	uint32_t ndata = c.n - 2;
	uint64_t bytes = 0;
	for (uint32_t k = 1; k <= ndata; k++) {
		bytes += c.buf[k].len;
		if (d->lim.size_max)
			CHECK(c.buf[k].len <= d->lim.size_max);
	}
	if (d->lim.seg_max)
		CHECK(ndata <= d->lim.seg_max);
	if (ndata > d->max_data_bufs)
		d->max_data_bufs = ndata;
	d->nreq++;

	uint8_t st = VIRTIO_BLK_S_OK;
	uint32_t written = 1;
	if (h.type == VIRTIO_BLK_T_FLUSH) {
		CHECK_EQ(h.sector, 0);
		CHECK_EQ(ndata, 0);
		CHECK(d->lim.flush);                   /* never sent unless negotiated */
		d->nflush++;
		if (d->flush_unsupp) {
			st = VIRTIO_BLK_S_UNSUPP;
		} else {
			for (uint64_t s = 0; s < d->lim.capacity; s++)
				if (d->dirty[s]) {
					memcpy(d->durable + s * 512, d->cache + s * 512, 512);
					d->dirty[s] = false;
				}
		}
	} else {
		CHECK(h.type == VIRTIO_BLK_T_IN || h.type == VIRTIO_BLK_T_OUT);
		bool in = h.type == VIRTIO_BLK_T_IN;
		for (uint32_t k = 1; k <= ndata; k++)
			CHECK_EQ(c.buf[k].dev_writes, in);
		CHECK(bytes > 0 && bytes % 512 == 0);
		CHECK(bytes % d->lim.blk_size == 0);
		CHECK(h.sector % (d->lim.blk_size / 512) == 0);
		uint64_t n = bytes / 512;
		CHECK(h.sector < d->lim.capacity && n <= d->lim.capacity - h.sector);
		if (!in)
			CHECK(!d->lim.ro);
		if (d->fail_sector >= 0 && (uint64_t)d->fail_sector >= h.sector &&
		    (uint64_t)d->fail_sector < h.sector + n) {
			st = VIRTIO_BLK_S_IOERR;
		} else {
			uint8_t *disk = d->cache + h.sector * 512;
			for (uint32_t k = 1; k <= ndata; k++) {
				void *p = (void *)(uintptr_t)c.buf[k].addr;
				if (in)
					memcpy(p, disk, c.buf[k].len);
				else
					memcpy(disk, p, c.buf[k].len);
				disk += c.buf[k].len;
			}
			if (in) {
				d->nread++;
				written += (uint32_t)bytes;
			} else {
				d->nwrite++;
				for (uint64_t s = h.sector; s < h.sector + n; s++) {
					if (d->lim.flush)
						d->dirty[s] = true;
					else
						memcpy(d->durable + s * 512, d->cache + s * 512, 512);
				}
			}
		}
	}
	if (d->no_status)
		d->no_status = false;
	else
		*status = st;
	if (d->short_len && written > 1) {
		written--;
		d->short_len = false;
	}
	sim_put(&d->q, c.head, written);
}

#endif
