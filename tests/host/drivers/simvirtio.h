/*
 * simvirtio.h - the device's side of a split virtqueue, for host tests.
 *
 * It reads the shared areas the way a device does (it is given only their
 * addresses and the queue size, never the driver's private state), checks
 * every chain against the rules the virtio 1.x spec sets for drivers, and
 * returns chains through the used ring in whatever order the test picks.
 * test_virtqueue uses it directly; simblk.h builds a virtio-blk device on it.
 */
#ifndef TESTS_DRIVERS_SIMVIRTIO_H
#define TESTS_DRIVERS_SIMVIRTIO_H

#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include "drivers/virtqueue.h"
#include "check.h"

#define SIM_MAXCHAIN 1024

/* One chain the device has taken from the available ring. */
struct sim_chain {
	uint16_t head;
	uint32_t n;
	struct vq_buf buf[SIM_MAXCHAIN];
	bool indirect;
};

struct simvq {
	uint16_t size;
	volatile struct vq_desc *desc;
	volatile struct vq_avail *avail;
	volatile struct vq_used *used;
	bool indirect_ok;              /* VIRTIO_F_INDIRECT_DESC negotiated */
	uint16_t last_avail;
	uint16_t used_idx;
	bool held[VQ_MAX_SIZE];        /* heads the device holds           */
	uint32_t nheld, maxheld;
	uint32_t ntaken;
};

static inline void simvq_init(struct simvq *s, const struct virtq *vq, bool indirect_ok)
{
	memset(s, 0, sizeof(*s));
	s->size = vq->size;
	s->desc = vq->desc;
	s->avail = vq->avail;
	s->used = vq->used;
	s->indirect_ok = indirect_ok;
}

/* Read one chain's descriptors, checking the driver-side rules. */
static inline void sim_read_chain(struct simvq *s, uint16_t head, struct sim_chain *c)
{
	CHECK(head < s->size);
	CHECK(!s->held[head]);                         /* offered twice */
	c->head = head;
	c->n = 0;
	c->indirect = false;
	bool writable = false;
	uint16_t i = head;
	volatile struct vq_desc *table = s->desc;
	uint32_t table_len = s->size;
	uint32_t steps = 0;
	for (;;) {
		CHECK(i < table_len);
		struct vq_desc d = { table[i].addr, table[i].len, table[i].flags, table[i].next };
		CHECK((d.flags & ~(VQ_DESC_F_NEXT | VQ_DESC_F_WRITE | VQ_DESC_F_INDIRECT)) == 0);
		if (d.flags & VQ_DESC_F_INDIRECT) {
			CHECK(s->indirect_ok);
			CHECK(table == s->desc);                  /* no table inside a table */
			CHECK(!(d.flags & VQ_DESC_F_NEXT));       /* INDIRECT and NEXT exclusive */
			CHECK(d.len > 0 && d.len % sizeof(struct vq_desc) == 0);
			table = (volatile struct vq_desc *)(uintptr_t)d.addr;
			table_len = d.len / sizeof(struct vq_desc);
			c->indirect = true;
			i = 0;
			continue;
		}
		CHECK(d.len > 0);
		if (d.flags & VQ_DESC_F_WRITE)
			writable = true;
		else
			CHECK(!writable);                         /* readable after writable */
		CHECK(c->n < SIM_MAXCHAIN);
		c->buf[c->n++] = (struct vq_buf){ d.addr, d.len, (d.flags & VQ_DESC_F_WRITE) != 0 };
		CHECK(++steps <= s->size);                    /* chain no longer than the queue */
		if (!(d.flags & VQ_DESC_F_NEXT))
			break;
		i = d.next;
	}
}

/* Take the next offered chain, or return false. */
static inline bool sim_take(struct simvq *s, struct sim_chain *c)
{
	uint16_t avail_idx = s->avail->idx;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (avail_idx == s->last_avail)
		return false;
	CHECK((uint16_t)(avail_idx - s->last_avail) <= s->size);
	uint16_t head = s->avail->ring[s->last_avail % s->size];
	s->last_avail++;
	sim_read_chain(s, head, c);
	s->held[head] = true;
	s->nheld++;
	s->ntaken++;
	if (s->nheld > s->maxheld)
		s->maxheld = s->nheld;
	return true;
}

/* Return a held chain with `len` bytes written. */
static inline void sim_put(struct simvq *s, uint16_t head, uint32_t len)
{
	CHECK(s->held[head]);
	s->held[head] = false;
	s->nheld--;
	volatile struct vq_used_elem *e = &s->used->ring[s->used_idx % s->size];
	e->id = head;
	e->len = len;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	s->used_idx++;
	s->used->idx = s->used_idx;
}

/* Put a used entry naming something the driver never offered. */
static inline void sim_put_bogus(struct simvq *s, uint32_t id)
{
	volatile struct vq_used_elem *e = &s->used->ring[s->used_idx % s->size];
	e->id = id;
	e->len = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	s->used_idx++;
	s->used->idx = s->used_idx;
}

#endif
