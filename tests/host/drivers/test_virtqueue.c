/*
 * test_virtqueue.c - the split virtqueue (drivers/virtqueue.c) against a
 * simulated device that checks every chain by the spec's rules.
 *
 * Random chains of random length, direct and indirect, are offered and
 * returned in random order for long enough that the 16-bit ring indices wrap
 * several times; the device must see exactly the buffers offered, every
 * descriptor must come back, and the queue must refuse what it cannot take
 * (VQ_E_FULL) or can never take (VQ_E_INVAL) without changing anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drivers/virtqueue.h"
#include "simvirtio.h"
#include "check.h"

static uint8_t ring_mem[65536] __attribute__((aligned(4096)));
static struct vq_desc itab_mem[VQ_MAX_SIZE * VQ_MAX_SIZE];

/* What the test offered under each token. */
struct offer {
	uint32_t n;
	struct vq_buf buf[VQ_MAX_SIZE];
	bool out;
};
static struct offer offers[VQ_MAX_SIZE * 2];

static void make_chain(struct offer *o, uint32_t n)
{
	o->n = n;
	uint32_t nread = (uint32_t)rng_below(n + 1);
	for (uint32_t i = 0; i < n; i++)
		o->buf[i] = (struct vq_buf){ rng_next() | 1, (uint32_t)(1 + rng_below(70000)), i >= nread };
}

static void check_same(const struct offer *o, const struct sim_chain *c)
{
	CHECK_EQ(c->n, o->n);
	for (uint32_t i = 0; i < o->n; i++) {
		CHECK(c->buf[i].addr == o->buf[i].addr);
		CHECK_EQ(c->buf[i].len, o->buf[i].len);
		CHECK_EQ(c->buf[i].dev_writes, o->buf[i].dev_writes);
	}
}

/* The offer whose first buffer the device found at the head of a chain. */
static struct offer *find_offer(const struct sim_chain *c)
{
	for (int k = 0; k < VQ_MAX_SIZE * 2; k++)
		if (offers[k].out && offers[k].buf[0].addr == c->buf[0].addr)
			return &offers[k];
	return NULL;
}

static void run(uint16_t size, bool indirect, uint32_t steps)
{
	static struct virtq vq;
	static struct simvq dev;
	static struct sim_chain taken[VQ_MAX_SIZE];
	int ntaken = 0;
	memset(offers, 0, sizeof offers);
	CHECK(vq_ring_bytes(size) <= sizeof ring_mem);
	CHECK_EQ(vq_init(&vq, size, ring_mem, indirect ? itab_mem : NULL, indirect ? size : 0), 0);
	simvq_init(&dev, &vq, indirect);
	uint32_t maxn = vq_max_chain(&vq);
	CHECK_EQ(maxn, size);

	uint32_t added = 0, returned = 0;
	for (uint32_t step = 0; step < steps; step++) {
		switch (rng_below(4)) {
		case 0: {
			/* Offer a chain: mostly short ones, sometimes as long as allowed. */
			int slot = -1;
			for (int k = 0; k < VQ_MAX_SIZE * 2; k++)
				if (!offers[k].out) { slot = k; break; }
			CHECK(slot >= 0);
			uint32_t n = rng_below(8) == 0 ? 1 + (uint32_t)rng_below(maxn) : 1 + (uint32_t)rng_below(4);
			make_chain(&offers[slot], n);
			uint16_t before = vq.nfree;
			int e = vq_add(&vq, offers[slot].buf, n, &offers[slot]);
			uint32_t need = (indirect && n > 1) ? 1 : n;
			if (need > before) {
				CHECK_EQ(e, VQ_E_FULL);
				CHECK_EQ(vq.nfree, before);
			} else {
				CHECK_EQ(e, 0);
				CHECK_EQ(vq.nfree, before - need);
				offers[slot].out = true;
				added++;
			}
			if (rng_below(2) == 0)
				CHECK(vq_publish(&vq));   /* this device never asks for quiet */
			break;
		}
		case 1:
			/* The device takes whatever has been published, and must find
			 * exactly what was offered. */
			while (sim_take(&dev, &taken[ntaken])) {
				struct offer *o = find_offer(&taken[ntaken]);
				CHECK(o != NULL);
				check_same(o, &taken[ntaken]);
				CHECK_EQ(taken[ntaken].indirect, indirect && o->n > 1);
				ntaken++;
			}
			break;
		case 2:
			/* The device returns one chain it holds, chosen at random. */
			if (ntaken > 0) {
				int k = (int)rng_below((uint64_t)ntaken);
				struct offer *o = find_offer(&taken[k]);
				uint32_t len = o->n + 7;      /* identifies the chain below */
				sim_put(&dev, taken[k].head, len);
				taken[k] = taken[--ntaken];
			}
			break;
		default: {
			void *t;
			uint32_t len;
			while ((t = vq_get(&vq, &len)) != NULL) {
				struct offer *o = t;
				CHECK(o->out);
				CHECK_EQ(len, o->n + 7);
				o->out = false;
				returned++;
			}
			break;
		}
		}
	}
	/* Drain everything. */
	vq_publish(&vq);
	while (sim_take(&dev, &taken[ntaken]))
		ntaken++;
	while (ntaken > 0)
		sim_put(&dev, taken[--ntaken].head, 0);
	void *t;
	while ((t = vq_get(&vq, NULL)) != NULL) {
		((struct offer *)t)->out = false;
		returned++;
	}
	CHECK_EQ(returned, added);
	CHECK_EQ(vq.nfree, size);
	CHECK_EQ(vq.nchains, 0);
	CHECK_EQ(dev.nheld, 0);
	/* Long runs must have wrapped the 16-bit ring indices. */
	CHECK(steps < 100000 || added > 65536);
	printf("  size %3u %-8s: %u chains offered and returned, device held at most %u\n",
	       size, indirect ? "indirect" : "direct", added, dev.maxheld);
}

/* Completion order: a device may return chains in any order. */
static void out_of_order(void)
{
	static struct virtq vq;
	static struct simvq dev;
	CHECK_EQ(vq_init(&vq, 16, ring_mem, NULL, 0), 0);
	simvq_init(&dev, &vq, false);
	static struct offer o[4];
	for (int i = 0; i < 4; i++) {
		make_chain(&o[i], 3);
		CHECK_EQ(vq_add(&vq, o[i].buf, 3, &o[i]), 0);
	}
	CHECK_EQ(vq.nfree, 4);
	vq_publish(&vq);
	static struct sim_chain c[4];
	for (int i = 0; i < 4; i++)
		CHECK(sim_take(&dev, &c[i]));
	CHECK(!sim_take(&dev, &c[0]));
	/* Return 2, 0, 3, 1 with lengths that identify them. */
	int order[4] = { 2, 0, 3, 1 };
	for (int k = 0; k < 4; k++)
		sim_put(&dev, c[order[k]].head, 100 + (uint32_t)order[k]);
	for (int k = 0; k < 4; k++) {
		uint32_t len;
		void *t = vq_get(&vq, &len);
		CHECK(t == &o[order[k]]);
		CHECK_EQ(len, 100 + (uint32_t)order[k]);
	}
	CHECK(vq_get(&vq, NULL) == NULL);
	CHECK_EQ(vq.nfree, 16);
	printf("  out-of-order completion: ok\n");
}

/* What the queue must refuse, and a device that returns nonsense. */
static void refusals(void)
{
	static struct virtq vq;
	static struct simvq dev;
	CHECK_EQ(vq_init(&vq, 0, ring_mem, NULL, 0), VQ_E_INVAL);
	CHECK_EQ(vq_init(&vq, 12, ring_mem, NULL, 0), VQ_E_INVAL);          /* not a power of two */
	CHECK_EQ(vq_init(&vq, 512, ring_mem, NULL, 0), VQ_E_INVAL);         /* above VQ_MAX_SIZE */
	CHECK_EQ(vq_init(&vq, 8, ring_mem + 8, NULL, 0), VQ_E_INVAL);       /* misaligned ring */
	CHECK_EQ(vq_init(&vq, 8, ring_mem, NULL, 0), 0);
	simvq_init(&dev, &vq, false);
	int tok;
	struct vq_buf b[9];
	for (int i = 0; i < 9; i++)
		b[i] = (struct vq_buf){ 0x1000u * (unsigned)(i + 1), 16, i >= 4 };
	CHECK_EQ(vq_add(&vq, b, 0, &tok), VQ_E_INVAL);
	CHECK_EQ(vq_add(&vq, b, 2, NULL), VQ_E_INVAL);
	CHECK_EQ(vq_add(&vq, b, 9, &tok), VQ_E_INVAL);                      /* longer than the queue */
	struct vq_buf bad[2] = { { 0x1000, 16, true }, { 0x2000, 16, false } };
	CHECK_EQ(vq_add(&vq, bad, 2, &tok), VQ_E_INVAL);                    /* readable after writable */
	struct vq_buf zero[1] = { { 0x1000, 0, false } };
	CHECK_EQ(vq_add(&vq, zero, 1, &tok), VQ_E_INVAL);
	CHECK_EQ(vq.nfree, 8);
	CHECK_EQ(vq_add(&vq, b, 6, &tok), 0);
	CHECK_EQ(vq_add(&vq, b, 3, &tok), VQ_E_FULL);                       /* 2 left */
	CHECK_EQ(vq.nfree, 2);
	CHECK(vq_publish(&vq));
	static struct sim_chain c;
	CHECK(sim_take(&dev, &c));
	/* The device returns ids we never offered, then the real one. */
	sim_put_bogus(&dev, 7);
	sim_put_bogus(&dev, 4000);
	sim_put(&dev, c.head, 5);
	uint32_t len;
	CHECK(vq_get(&vq, &len) == &tok);
	CHECK_EQ(len, 5);
	CHECK_EQ(vq.bad_used, 2);
	CHECK_EQ(vq.nfree, 8);
	/* The device asks not to be notified. */
	dev.used->flags = VQ_USED_F_NO_NOTIFY;
	CHECK_EQ(vq_add(&vq, b, 1, &tok), 0);
	CHECK(!vq_publish(&vq));
	vq_set_interrupts(&vq, false);
	CHECK_EQ(dev.avail->flags, VQ_AVAIL_F_NO_INTERRUPT);
	vq_set_interrupts(&vq, true);
	CHECK_EQ(dev.avail->flags, 0);
	printf("  refusals and a confused device: ok\n");
}

int main(void)
{
	rng_seed(42);
	refusals();
	out_of_order();
	run(8, false, 20000);
	run(256, false, 400000);
	run(256, true, 400000);
	run(64, true, 400000);
	printf("test_virtqueue: ok\n");
	return 0;
}
