/*
 * modeldisk.h - a block device whose timing is the mechanical disk model.
 *
 * The data lives in memory (as on the RAM disk); what the model adds is
 * *when* each request completes, in virtual nanoseconds.  Whoever owns the
 * clock (the kernel, or a host simulation) asks for the next completion
 * time, advances virtual time to it, and the requests due by then complete
 * in order.  Because the model is a pure function of its state, the virtual
 * time and the request, a run gives the same times on any host.
 */
#ifndef MODELDISK_H
#define MODELDISK_H

#include <stdint.h>
#include <stdbool.h>
#include "drivers/blk.h"
#include "drivers/diskmodel.h"

/* Requests the drive may hold at once (it serves them in the order given). */
#define MODELDISK_MAX_INFLIGHT 16

struct modeldisk {
	struct dm_disk disk;
	struct dm_state st;
	uint8_t *mem;
	uint64_t now;             /* virtual time, ns */
	/* Started requests and their completion times, oldest first (a ring). */
	struct { struct blkreq *r; uint64_t done; } q[MODELDISK_MAX_INFLIGHT];
	uint32_t qhead, qlen;
	int unit;
	char name[24];
	struct blkdev_info info;

	/* Optional, for an owner whose clock runs by itself (the kernel):
	 * clock() gives the current virtual time, read when a request arrives
	 * from outside a completion; rearm() runs whenever the next completion
	 * time may have changed, so the owner can set its timer.  Host
	 * simulations leave both NULL and move time with modeldisk_advance. */
	uint64_t (*clock)(struct modeldisk *md);
	void (*rearm)(struct modeldisk *md);
	void *owner;
	bool advancing;           /* inside modeldisk_advance */
};

/* A unit with the model's geometry over `bytes` of memory at mem, which must
 * hold the whole modelled disk.  Returns the unit number or a BLK_E_* error. */
int      modeldisk_attach(struct modeldisk *md, const struct dm_params *p, void *mem, uint64_t bytes);
/* Virtual time of the next completion, or UINT64_MAX if the drive is idle. */
uint64_t modeldisk_next_event(const struct modeldisk *md);
/* Move virtual time forward to t (never back), completing every request due
 * by then; each completes at its own time, so requests it lets the block
 * layer start arrive at the drive at that time.  Polling the unit advances
 * to clock() (or does nothing more than deliver what is due, without one). */
void     modeldisk_advance(struct modeldisk *md, uint64_t t);

#endif /* MODELDISK_H */
