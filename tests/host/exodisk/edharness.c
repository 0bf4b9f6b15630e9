/*
 * edharness.c - the host stand-in for the kernel around the exodisk core
 * (see edharness.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "tests/host/exodisk/edharness.h"
#include <string.h>

static void *h_page_alloc(void *ctx)
{
	struct harness *h = ctx;
	if (h->fail_alloc >= 0 && h->fail_alloc-- == 0)
		return NULL;
	void *p = aligned_alloc(4096, 4096);
	if (p != NULL) {
		memset(p, 0, 4096);
		h->pages++;
	}
	return p;
}

static void h_page_free(void *ctx, void *page)
{
	struct harness *h = ctx;
	h->pages--;
	free(page);
}

static void h_post(void *ctx, int32_t *word, int32_t value)
{
	struct harness *h = ctx;
	h->posts++;
	*(volatile int32_t *)word = value;
}

static void pin_unlink(struct harness *h, struct hpin *p)
{
	if (p->prev != NULL)
		p->prev->next = p->next;
	else
		h->live = p->next;
	if (p->next != NULL)
		p->next->prev = p->prev;
	h->pins--;
	free(p);
}

static void h_release(void *ctx, void *pin)
{
	pin_unlink(ctx, pin);
}

void h_drop_pins(struct harness *h)
{
	while (h->live != NULL)
		pin_unlink(h, h->live);
}

static int h_map(void *ctx, struct ed_client *c, void *page, uint64_t *uaddr)
{
	struct harness *h = ctx;
	for (int i = 0; i < H_MAXMAPS; i++)
		if (!h->maps[i].used) {
			h->maps[i].used = true;
			h->maps[i].c = c;
			h->maps[i].page = page;
			h->maps[i].uaddr = h->next_uaddr;
			h->next_uaddr += 4096;
			*uaddr = h->maps[i].uaddr;
			return 0;
		}
	return -4;   /* K_E_NOMEM */
}

static void h_unmap(void *ctx, struct ed_client *c, uint64_t uaddr)
{
	struct harness *h = ctx;
	for (int i = 0; i < H_MAXMAPS; i++)
		if (h->maps[i].used && h->maps[i].uaddr == uaddr && h->maps[i].c == c)
			h->maps[i].used = false;
}

uint64_t h_rand(struct harness *h)
{
	h->rng ^= h->rng >> 12;
	h->rng ^= h->rng << 25;
	h->rng ^= h->rng >> 27;
	return h->rng * 2685821657736338717ull;
}

static uint64_t h_entropy(void *ctx)
{
	return h_rand(ctx);
}

static void h_waitfn(void *ctx)
{
	(void)ctx;
	blk_poll();
}

/* The kernel's sleep (h_use_sleep): block until wakeup() is called, the
 * disk completing requests meanwhile.  A sleep nobody ends is a hang in
 * the kernel: the test fails. */
static int h_sleepfn(void *ctx)
{
	struct harness *h = ctx;
	h->sleeps++;
	h->woken = false;
	for (long i = 0; !h->woken; i++) {
		if (i > 20000000) {
			fprintf(stderr, "h_sleep: asleep, and nothing woke it\n");
			exit(1);
		}
		blk_poll();
	}
	return 0;
}

static void h_wakefn(void *ctx)
{
	((struct harness *)ctx)->woken = true;
}

static void h_pausefn(void *ctx, uint32_t ms)
{
	(void)ms;
	((struct harness *)ctx)->pauses++;
}

void h_use_sleep(struct harness *h)
{
	h->env.sleep = h_sleepfn;
	h->env.wakeup = h_wakefn;
}

void h_init(struct harness *h, uint64_t seed)
{
	memset(h, 0, sizeof(*h));
	h->rng = seed ? seed : 1;
	h->fail_alloc = -1;
	h->next_uaddr = 0x2400000000ull;
	h->env.ctx = h;
	h->env.page_alloc = h_page_alloc;
	h->env.page_free = h_page_free;
	h->env.post = h_post;
	h->env.release = h_release;
	h->env.map_page = h_map;
	h->env.unmap_page = h_unmap;
	h->env.entropy = h_entropy;
	h->env.wait = h_waitfn;
	h->env.pause = h_pausefn;
}

struct exodisk *h_core(struct harness *h, const struct ed_config *cfg, const char *key)
{
	int err = 0;
	uint8_t k[16];
	memcpy(k, key ? key : ED_DEV_KEY, 16);
	struct exodisk *ed = ed_create(&h->env, cfg, k, &err);
	if (ed == NULL) {
		fprintf(stderr, "ed_create failed: %d\n", err);
		exit(1);
	}
	return ed;
}

int32_t h_wait(volatile int32_t *word)
{
	for (long i = 0; *word == ED_PENDING; i++) {
		if (i > 50000000) {
			fprintf(stderr, "h_wait: operation never completed\n");
			exit(1);
		}
		blk_poll();
	}
	return *word;
}

void h_settle(void)
{
	for (int i = 0; i < 2000; i++)
		blk_poll();
}

void *h_map_page(struct harness *h, uint64_t uaddr)
{
	for (int i = 0; i < H_MAXMAPS; i++)
		if (h->maps[i].used && h->maps[i].uaddr == uaddr)
			return h->maps[i].page;
	return NULL;
}

int64_t h_req(struct harness *h, struct exodisk *ed, struct ed_client *c, int op,
              struct ed_protector *prot, struct ed_buf *b, struct ed_operation *stuff,
              void *iobuf, uint64_t bytes, void *data, uint32_t datalen, int32_t *result)
{
	struct ed_args a;
	memset(&a, 0, sizeof(a));
	a.prot = prot;
	a.buf = b;
	a.stuff = stuff;
	a.data = data;
	a.datalen = datalen;
	a.result = result;
	struct hpin *pin = calloc(1, sizeof(*pin));
	CHECK(pin != NULL);
	pin->h = h;
	if (iobuf != NULL) {
		/* Split at page boundaries, as pinning user pages does. */
		uint8_t *p = iobuf;
		uint64_t left = bytes;
		while (left > 0 && pin->nseg < BLK_MAX_SEGS - 2) {
			uint64_t k = 4096 - ((uintptr_t)p & 4095);
			if (k > left)
				k = left;
			pin->seg[pin->nseg++] = (struct blk_seg){ (uint64_t)(uintptr_t)p, (uint32_t)k };
			p += k;
			left -= k;
		}
		a.seg = pin->seg;
		a.nseg = pin->nseg;
		a.segcap = BLK_MAX_SEGS;
	}
	a.pin = pin;
	h->pins++;
	pin->next = h->live;
	if (h->live != NULL)
		h->live->prev = pin;
	h->live = pin;
	int64_t r = ed_request(ed, c, op, &a);
	if (!a.pin_taken)
		pin_unlink(h, pin);
	return r;
}

struct ed_cap h_cap(uint64_t a, uint64_t b)
{
	struct ed_cap c = { { a, b } };
	return c;
}

struct ed_protector h_ext(int unit, uint64_t blkno, uint64_t bytes, struct ed_cap rc, struct ed_cap wc)
{
	struct ed_protector p;
	memset(&p, 0, sizeof(p));
	p.unit = (uint16_t)unit;
	p.kind = ED_PK_EXTENT;
	p.blkno = blkno;
	p.length = bytes;
	p.xn_entry = -1;
	p.rc = rc;
	p.wc = wc;
	return p;
}

struct ed_protector h_xn(int unit, uint64_t blkno, uint16_t slot, uint64_t bytes,
                         struct ed_cap rc, struct ed_cap wc)
{
	struct ed_protector p = h_ext(unit, blkno, bytes, rc, wc);
	p.kind = ED_PK_EXONODE;
	p.xn_num = slot;
	return p;
}

int64_t h_sync(struct harness *h, struct exodisk *ed, struct ed_client *c, int op,
               struct ed_protector *prot)
{
	int32_t res = 12345;
	struct ed_buf b;
	memset(&b, 0, sizeof(b));
	int64_t r = h_req(h, ed, c, op, prot, &b, NULL, NULL, 0, NULL, 0, &res);
	if (r < 0)
		return r;
	return h_wait(&res);
}

int64_t h_io(struct harness *h, struct exodisk *ed, struct ed_client *c, struct ed_protector *prot,
             int write, uint64_t sector, void *buf, uint64_t bytes)
{
	int32_t res = 12345;
	struct ed_buf b;
	memset(&b, 0, sizeof(b));
	b.b_flags = write ? ED_B_WRITE : ED_B_READ;
	b.b_dev = prot->unit;
	b.b_blkno = sector;
	b.b_bcount = bytes;
	b.b_memaddr = (uint64_t)(uintptr_t)buf;
	int64_t r = h_req(h, ed, c, ED_OP_IO, prot, &b, NULL, buf, bytes, NULL, 0, &res);
	if (r < 0)
		return r;
	return h_wait(&res);
}

int64_t h_stuff(struct harness *h, struct exodisk *ed, struct ed_client *c, int op,
                struct ed_protector *prot, struct ed_operation *st)
{
	return h_req(h, ed, c, op, prot, NULL, st, NULL, 0, NULL, 0, NULL);
}
