/*
 * edc.c - the exodisk client library (see edc.h): typed wrappers, result
 * words, batches and the free-map view, over whichever transport the
 * program uses.
 */
#include <string.h>
#include "libos/edc.h"

void edc_init(struct edc *c, const struct edc_transport *t, void *ctx)
{
	memset(c, 0, sizeof *c);
	c->t = t;
	c->ctx = ctx;
}

void edc_set_wait(struct edc *c, void (*wait)(void *ctx, volatile int32_t *word))
{
	c->wait = wait;
}

static struct edc *default_edc;

struct edc *edc_default(void)
{
	return default_edc;
}

void edc_set_default(struct edc *c)
{
	default_edc = c;
}

static int64_t req(struct edc *c, int op, struct ed_protector *p, struct ed_buf *b,
                   struct ed_operation *s)
{
	c->nrequests++;
	return c->t->request(c->ctx, op, p, b, s);
}

struct ed_protector edc_prot_extent(int unit, uint64_t blkno, const struct ed_cap *rc,
                                    const struct ed_cap *wc)
{
	struct ed_protector p;
	memset(&p, 0, sizeof p);
	p.unit = (uint16_t)unit;
	p.kind = ED_PK_EXTENT;
	p.blkno = blkno;
	p.xn_entry = -1;
	if (rc)
		p.rc = *rc;
	if (wc)
		p.wc = *wc;
	return p;
}

struct ed_protector edc_prot_xn(int unit, uint64_t blkno, uint16_t slot, const struct ed_cap *rc,
                                const struct ed_cap *wc)
{
	struct ed_protector p = edc_prot_extent(unit, blkno, rc, wc);
	p.kind = ED_PK_EXONODE;
	p.xn_num = slot;
	return p;
}

/* Most operations take a protector the caller may not want changed and an
 * entry number: work on a copy. */
static int64_t op_entry(struct edc *c, int op, const struct ed_protector *prot, int entry,
                        struct ed_operation *s)
{
	struct ed_protector p = *prot;
	p.xn_entry = entry;
	return req(c, op, &p, NULL, s);
}

static int64_t op_plain(struct edc *c, int op, const struct ed_protector *prot,
                        struct ed_operation *s)
{
	struct ed_protector p = *prot;
	return req(c, op, &p, NULL, s);
}

/* ---- extents ------------------------------------------------------------- */

int64_t edc_extent_alloc(struct edc *c, const struct ed_protector *prot)
{
	return op_plain(c, ED_OP_EXTENT_ALLOCATE, prot, NULL);
}

int64_t edc_extent_dealloc(struct edc *c, const struct ed_protector *prot)
{
	return op_plain(c, ED_OP_EXTENT_DEALLOCATE, prot, NULL);
}

int64_t edc_extent_grow(struct edc *c, const struct ed_protector *prot, uint64_t bytes)
{
	struct ed_operation s = { .one = bytes };
	return op_plain(c, ED_OP_EXTENT_GROW, prot, &s);
}

int64_t edc_extent_shrink(struct edc *c, const struct ed_protector *prot, uint64_t bytes)
{
	struct ed_operation s = { .one = bytes };
	return op_plain(c, ED_OP_EXTENT_SHRINK, prot, &s);
}

/* ---- exonodes ---------------------------------------------------------------- */

int64_t edc_xn_alloc(struct edc *c, const struct ed_protector *prot)
{
	return op_plain(c, ED_OP_EXONODE_ALLOCATE, prot, NULL);
}

int64_t edc_xn_dealloc(struct edc *c, const struct ed_protector *prot)
{
	return op_plain(c, ED_OP_EXONODE_DEALLOCATE, prot, NULL);
}

int64_t edc_xn_add_extent(struct edc *c, const struct ed_protector *prot, int entry,
                          uint64_t start, uint64_t bytes)
{
	struct ed_operation s = { .one = start, .two = bytes };
	return op_entry(c, ED_OP_EXONODE_ADD_EXTENT, prot, entry, &s);
}

int64_t edc_xn_add_exonode(struct edc *c, const struct ed_protector *prot, int entry,
                           uint64_t sector, uint16_t slot, uint64_t length,
                           const struct ed_cap *rc, const struct ed_cap *wc)
{
	struct ed_operation s = { .one = sector, .two = slot, .three = length };
	s.rc = *rc;
	s.wc = *wc;
	return op_entry(c, ED_OP_EXONODE_ADD_EXONODE, prot, entry, &s);
}

int64_t edc_xn_add_data(struct edc *c, const struct ed_protector *prot, int entry,
                        const void *data, uint32_t len)
{
	struct ed_operation s = { .buf = (uint64_t)(uintptr_t)data, .one = len };
	return op_entry(c, ED_OP_EXONODE_ADD_DATA, prot, entry, &s);
}

int64_t edc_xn_read_data(struct edc *c, const struct ed_protector *prot, int entry,
                         void *buf, uint32_t len)
{
	struct ed_operation s = { .buf = (uint64_t)(uintptr_t)buf, .one = len };
	return op_entry(c, ED_OP_EXONODE_READ_DATA, prot, entry, &s);
}

int64_t edc_xn_remove(struct edc *c, const struct ed_protector *prot, int entry)
{
	return op_entry(c, ED_OP_EXONODE_REMOVE_ENTRY, prot, entry, NULL);
}

int64_t edc_xn_remove_range(struct edc *c, const struct ed_protector *prot, int first, int n)
{
	struct ed_operation s = { .one = (uint64_t)(int64_t)n };
	return op_entry(c, ED_OP_EXONODE_REMOVE_RANGE, prot, first, &s);
}

int64_t edc_xn_combine(struct edc *c, const struct ed_protector *prot, int first, int second)
{
	struct ed_operation s = { .one = (uint64_t)second };
	return op_entry(c, ED_OP_EXONODE_COMBINE, prot, first, &s);
}

int64_t edc_xn_split(struct edc *c, const struct ed_protector *prot, int entry, uint64_t off,
                     int newent)
{
	struct ed_operation s = { .one = off, .two = (uint64_t)newent };
	return op_entry(c, ED_OP_EXONODE_SPLIT, prot, entry, &s);
}

int64_t edc_xn_map(struct edc *c, const struct ed_protector *prot)
{
	struct ed_operation s = { .one = ED_MAP_MAP };
	return op_plain(c, ED_OP_EXONODE_MAP, prot, &s);
}

int64_t edc_xn_unmap(struct edc *c, const struct ed_protector *prot, uint64_t addr)
{
	struct ed_operation s = { .one = ED_MAP_UNMAP, .two = addr };
	return op_plain(c, ED_OP_EXONODE_MAP, prot, &s);
}

int64_t edc_xn_proxy(struct edc *c, const struct ed_protector *prot, const struct ed_range *ranges,
                     uint32_t nranges, uint32_t rights, const struct ed_cap *rc,
                     const struct ed_cap *wc)
{
	struct ed_operation s = { .buf = (uint64_t)(uintptr_t)ranges, .one = nranges, .two = rights };
	s.rc = *rc;
	s.wc = *wc;
	return op_plain(c, ED_OP_EXONODE_PROXY, prot, &s);
}

int64_t edc_xn_cap_discover(struct edc *c, const struct ed_protector *prot, int entry,
                            struct ed_cap *rc, struct ed_cap *wc)
{
	struct ed_operation s;
	memset(&s, 0, sizeof s);
	int64_t r = op_entry(c, ED_OP_EXONODE_CAP_DISCOVER, prot, entry, &s);
	if (r >= 0) {
		*rc = s.rc;
		*wc = s.wc;
	}
	return r;
}

int64_t edc_mark_replacement(struct edc *c, const struct ed_protector *prot)
{
	return op_plain(c, ED_OP_MARK_REPLACEMENT, prot, NULL);
}

int64_t edc_pending(struct edc *c)
{
	return req(c, ED_OP_POLL, NULL, NULL, NULL);
}

int64_t edc_in_cache(struct edc *c, const struct ed_protector *prot)
{
	return op_plain(c, ED_OP_IN_CACHE, prot, NULL);
}

int64_t edc_drop_cache(struct edc *c, int unit, uint64_t *busy)
{
	struct ed_protector p = edc_prot_extent(unit, 0, NULL, NULL);
	struct ed_operation s;
	memset(&s, 0, sizeof s);
	int64_t r = req(c, ED_OP_DROP_CACHE, &p, NULL, &s);
	if (busy != NULL)
		*busy = r >= 0 ? s.one : 0;
	return r;
}

/* ---- asynchronous operations ----------------------------------------------- */

/* Make an asynchronous request whose only notification is the word in buf. */
static int64_t async_req(struct edc *c, int op, struct ed_protector *p, struct ed_buf *b,
                         volatile int32_t *word)
{
	*word = ED_PENDING;
	b->b_resptr = (uint64_t)(uintptr_t)word;
	int64_t r = req(c, op, p, b, NULL);
	if (r < 0)
		*word = (int32_t)r;
	return r < 0 ? r : 0;
}

int64_t edc_io(struct edc *c, const struct ed_protector *prot, int write, uint64_t blkno,
               void *mem, uint64_t bytes, volatile int32_t *word)
{
	struct ed_protector p = *prot;
	struct ed_buf b;
	memset(&b, 0, sizeof b);
	b.b_flags = write ? ED_B_WRITE : ED_B_READ;
	b.b_dev = p.unit;
	b.b_blkno = blkno;
	b.b_bcount = bytes;
	b.b_memaddr = (uint64_t)(uintptr_t)mem;
	c->nios++;
	c->io_bytes += bytes;
	return async_req(c, ED_OP_IO, &p, &b, word);
}

static int64_t async_meta(struct edc *c, int op, const struct ed_protector *prot,
                          volatile int32_t *word)
{
	struct ed_protector p = *prot;
	struct ed_buf b;
	memset(&b, 0, sizeof b);
	b.b_dev = p.unit;
	return async_req(c, op, &p, &b, word);
}

int64_t edc_extent_read(struct edc *c, const struct ed_protector *prot, volatile int32_t *word)
{
	return async_meta(c, ED_OP_EXTENT_READ, prot, word);
}

int64_t edc_extent_write(struct edc *c, const struct ed_protector *prot, volatile int32_t *word)
{
	return async_meta(c, ED_OP_EXTENT_WRITE, prot, word);
}

int64_t edc_xn_read(struct edc *c, const struct ed_protector *prot, volatile int32_t *word)
{
	return async_meta(c, ED_OP_EXONODE_READ, prot, word);
}

int64_t edc_xn_write(struct edc *c, const struct ed_protector *prot, volatile int32_t *word)
{
	return async_meta(c, ED_OP_EXONODE_WRITE, prot, word);
}

int64_t edc_shutdown(struct edc *c, int unit, volatile int32_t *word)
{
	struct ed_protector p;
	memset(&p, 0, sizeof p);
	p.unit = (uint16_t)unit;
	p.xn_entry = -1;
	return async_meta(c, ED_OP_SHUTDOWN, &p, word);
}

int32_t edc_wait(struct edc *c, volatile int32_t *word)
{
	while (*word == ED_PENDING) {
		c->nwaits++;
		if (c->wait != NULL)
			c->wait(c->ctx, word);
		else
			c->t->idle(c->ctx);
	}
	return *word;
}

int32_t edc_wait_all(struct edc *c, volatile int32_t *const *words, int n)
{
	int32_t first = 0;
	for (int i = 0; i < n; i++) {
		int32_t r = edc_wait(c, words[i]);
		if (r < 0 && first == 0)
			first = r;
	}
	return first;
}

int edc_wait_any(struct edc *c, volatile int32_t *const *words, int n)
{
	if (n <= 0)
		return -1;
	for (;;) {
		for (int i = 0; i < n; i++)
			if (*words[i] != ED_PENDING)
				return i;
		c->nwaits++;
		c->t->idle(c->ctx);
	}
}

int32_t edc_read(struct edc *c, const struct ed_protector *prot, uint64_t blkno, void *mem,
                 uint64_t bytes)
{
	struct edc_slot slots[4];
	struct edc_batch b;
	edc_batch_init(&b, c, slots, 4);
	int32_t r = edc_batch_io(&b, prot, 0, blkno, mem, bytes);
	int32_t w = edc_batch_wait(&b);
	return r < 0 ? r : w;
}

int32_t edc_write(struct edc *c, const struct ed_protector *prot, uint64_t blkno,
                  const void *mem, uint64_t bytes)
{
	struct edc_slot slots[4];
	struct edc_batch b;
	edc_batch_init(&b, c, slots, 4);
	/* The kernel only reads the buffer of a write. */
	int32_t r = edc_batch_io(&b, prot, 1, blkno, (void *)(uintptr_t)mem, bytes);
	int32_t w = edc_batch_wait(&b);
	return r < 0 ? r : w;
}

static int32_t meta_sync(struct edc *c, int op, const struct ed_protector *prot)
{
	volatile int32_t word;
	int64_t r = async_meta(c, op, prot, &word);
	if (r < 0)
		return (int32_t)r;
	return edc_wait(c, &word);
}

int32_t edc_xn_read_sync(struct edc *c, const struct ed_protector *prot)
{
	return meta_sync(c, ED_OP_EXONODE_READ, prot);
}

int32_t edc_xn_write_sync(struct edc *c, const struct ed_protector *prot)
{
	return meta_sync(c, ED_OP_EXONODE_WRITE, prot);
}

int32_t edc_extent_read_sync(struct edc *c, const struct ed_protector *prot)
{
	return meta_sync(c, ED_OP_EXTENT_READ, prot);
}

int32_t edc_extent_write_sync(struct edc *c, const struct ed_protector *prot)
{
	return meta_sync(c, ED_OP_EXTENT_WRITE, prot);
}

/* ---- durability ------------------------------------------------------------------ */

int32_t edc_flush(struct edc *c, int unit)
{
	struct ed_protector p;
	memset(&p, 0, sizeof p);
	p.unit = (uint16_t)unit;
	p.xn_entry = -1;
	return meta_sync(c, ED_OP_FLUSH, &p);
}

int64_t edc_flush_start(struct edc *c, int unit, volatile int32_t *word)
{
	struct ed_protector p;
	memset(&p, 0, sizeof p);
	p.unit = (uint16_t)unit;
	p.xn_entry = -1;
	return async_meta(c, ED_OP_FLUSH, &p, word);
}

int32_t edc_checkpoint(struct edc *c, int unit)
{
	struct ed_protector p;
	memset(&p, 0, sizeof p);
	p.unit = (uint16_t)unit;
	p.xn_entry = -1;
	return meta_sync(c, ED_OP_CHECKPOINT, &p);
}

/* ---- batches ------------------------------------------------------------------ */

void edc_batch_init(struct edc_batch *b, struct edc *c, struct edc_slot *slots, int cap)
{
	memset(b, 0, sizeof *b);
	b->c = c;
	b->slot = slots;
	b->cap = cap;
	for (int i = 0; i < cap; i++)
		slots[i].used = 0;
}

/* Wait for the oldest request in flight and free its slot. */
static void retire_oldest(struct edc_batch *b)
{
	struct edc_slot *s = &b->slot[b->head];
	int32_t r = edc_wait(b->c, &s->word);
	if (r < 0 && b->err == 0)
		b->err = r;
	s->used = 0;
	b->head = (b->head + 1) % b->cap;
	b->n--;
}

/* A free slot, waiting for the oldest request if there is none. */
static struct edc_slot *take_slot(struct edc_batch *b)
{
	if (b->n == b->cap)
		retire_oldest(b);
	struct edc_slot *s = &b->slot[(b->head + b->n) % b->cap];
	s->used = 1;
	b->n++;
	return s;
}

/* The request in the newest slot was refused: give the slot back. */
static void untake_slot(struct edc_batch *b)
{
	b->n--;
	b->slot[(b->head + b->n) % b->cap].used = 0;
}

/* Issue one request through the batch.  ED_E_NOIO (the kernel's table of
 * operations in flight is full) is not an error: wait for one of ours to
 * finish and try again; with none of ours in flight, the table is full of
 * other programs' requests, so idle until it drains. */
static int32_t batch_issue(struct edc_batch *b, int kind, const struct ed_protector *prot,
                           int write, uint64_t blkno, void *mem, uint64_t bytes)
{
	for (;;) {
		struct edc_slot *s = take_slot(b);
		int64_t r;
		if (kind == 0)
			r = edc_io(b->c, prot, write, blkno, mem, bytes, &s->word);
		else if (kind == 1)
			r = edc_xn_write(b->c, prot, &s->word);
		else
			r = edc_xn_read(b->c, prot, &s->word);
		b->submitted++;
		if (r == ED_E_NOIO) {
			untake_slot(b);
			if (b->n > 0)
				retire_oldest(b);
			else
				b->c->t->idle(b->c->ctx);
			continue;
		}
		if (r < 0) {
			/* Refused outright: give the slot back and tell the caller,
			 * who may fix the cause and try again (ED_E_NOTCACHED: read
			 * the exonode in).  It is not recorded as the batch's error. */
			untake_slot(b);
			return (int32_t)r;
		}
		return 0;
	}
}

int32_t edc_batch_io(struct edc_batch *b, const struct ed_protector *prot, int write,
                     uint64_t blkno, void *mem, uint64_t bytes)
{
	uint8_t *p = mem;
	while (bytes > 0) {
		uint64_t n = bytes > ED_IO_MAX ? ED_IO_MAX : bytes;
		int32_t r = batch_issue(b, 0, prot, write, blkno, p, n);
		if (r < 0)
			return r;
		blkno += n / ED_SECTOR;
		p += n;
		bytes -= n;
	}
	return 0;
}

int32_t edc_batch_xn_write(struct edc_batch *b, const struct ed_protector *prot)
{
	return batch_issue(b, 1, prot, 0, 0, NULL, 0);
}

int32_t edc_batch_xn_read(struct edc_batch *b, const struct ed_protector *prot)
{
	return batch_issue(b, 2, prot, 0, 0, NULL, 0);
}

int32_t edc_batch_wait(struct edc_batch *b)
{
	while (b->n > 0)
		retire_oldest(b);
	int32_t r = b->err;
	b->err = 0;
	return r;
}

/* ---- the free map ------------------------------------------------------------- */

#define FM_BITS_PER_PAGE (4096u * 8u)

int edc_fm_open(struct edc *c, int unit, struct edc_fm *fm)
{
	fm->c = c;
	fm->unit = unit;
	fm->nsectors = c->t->nsectors(c->ctx, unit);
	if (fm->nsectors == 0)
		return ED_E_UNIT;
	return 0;
}

static const uint64_t *fm_word(const struct edc_fm *fm, uint64_t sector)
{
	const uint64_t *page = fm->c->t->fm_page(fm->c->ctx, fm->unit,
	                                         (uint32_t)(sector / FM_BITS_PER_PAGE));
	if (page == NULL)
		return NULL;
	return &page[(sector % FM_BITS_PER_PAGE) / 64];
}

int edc_fm_test(const struct edc_fm *fm, uint64_t sector)
{
	if (sector >= fm->nsectors)
		return 1;
	const uint64_t *w = fm_word(fm, sector);
	return w == NULL || ((*(const volatile uint64_t *)w >> (sector % 64)) & 1);
}

/* The map's page holding sector s, with *words set to the words of it
 * that cover the unit from s's word on (the last page may be short); NULL
 * outside the map.  The searches below look a page up once and then go a
 * word at a time within it: a page lookup is a call through the
 * transport, which cost more than the word's test when made per word. */
static const uint64_t *fm_words(const struct edc_fm *fm, uint64_t s, uint64_t *words)
{
	const uint64_t *page = fm->c->t->fm_page(fm->c->ctx, fm->unit, (uint32_t)(s / FM_BITS_PER_PAGE));
	if (page == NULL)
		return NULL;
	uint64_t base = s - s % FM_BITS_PER_PAGE;
	uint64_t end = fm->nsectors - base < FM_BITS_PER_PAGE ? fm->nsectors - base : FM_BITS_PER_PAGE;
	uint64_t i = (s % FM_BITS_PER_PAGE) / 64;
	*words = (end + 63) / 64 - i;
	return page + i;
}

uint64_t edc_fm_run(const struct edc_fm *fm, uint64_t start, uint64_t max)
{
	uint64_t n = 0;
	while (n < max && start + n < fm->nsectors) {
		uint64_t s = start + n, nw;
		const uint64_t *w = fm_words(fm, s, &nw);
		if (w == NULL)
			break;
		/* A word at a time: the free sectors up to the first allocated
		 * one (a search for a long run counts every free sector of the
		 * shorter runs it passes, one call each before). */
		uint64_t bits = *(const volatile uint64_t *)w >> (s % 64);
		if (bits != 0) {
			n += (uint64_t)__builtin_ctzll(bits);
			break;
		}
		n += 64 - s % 64;
		uint64_t i = 1;
		for (; i < nw && n < max; i++, n += 64) {
			bits = *(const volatile uint64_t *)&w[i];
			if (bits != 0) {
				n += (uint64_t)__builtin_ctzll(bits);
				break;
			}
		}
		if (i < nw && n < max)
			break;                /* an allocated sector ended the run */
	}
	if (n > max)
		n = max;
	if (start + n > fm->nsectors)
		n = fm->nsectors - start;
	return n;
}

/* The first free sector in [s, to) (to if none), skipping fully
 * allocated words at a time; to is at most fm->nsectors. */
static uint64_t next_free(const struct edc_fm *fm, uint64_t s, uint64_t to)
{
	while (s < to) {
		uint64_t nw;
		const uint64_t *w = fm_words(fm, s, &nw);
		if (w == NULL)
			return to;
		/* The free bits from s on, as ones (the shift brings in zeros:
		 * nothing past the word is taken for free). */
		uint64_t freebits = ~*(const volatile uint64_t *)w >> (s % 64);
		if (freebits == 0) {
			s += 64 - s % 64;
			for (uint64_t i = 1; freebits == 0 && i < nw && s < to; i++, s += 64)
				freebits = ~*(const volatile uint64_t *)&w[i];
			if (freebits == 0)
				continue;     /* full to the page's end (or to): go on */
			s -= 64;              /* (the loop stepped past the word it found) */
		}
		s += (uint64_t)__builtin_ctzll(freebits);
		return s < to ? s : to;
	}
	return to;
}

uint64_t edc_fm_next_used(const struct edc_fm *fm, uint64_t s)
{
	while (s < fm->nsectors) {
		const uint64_t *page = fm->c->t->fm_page(fm->c->ctx, fm->unit,
		                                         (uint32_t)(s / FM_BITS_PER_PAGE));
		if (page == NULL)
			return s;                 /* outside the map: treated as allocated */
		uint64_t i = (s % FM_BITS_PER_PAGE) / 64;
		uint64_t bits = *(const volatile uint64_t *)&page[i] >> (s % 64);
		if (bits != 0) {
			s += (uint64_t)__builtin_ctzll(bits);
			return s < fm->nsectors ? s : fm->nsectors;
		}
		/* The rest of the page a word at a time: on a big disk most of
		 * the map is free pages. */
		s = s - s % FM_BITS_PER_PAGE + (i + 1) * 64;
		for (i++; i < FM_BITS_PER_PAGE / 64 && s < fm->nsectors; i++, s += 64) {
			bits = *(const volatile uint64_t *)&page[i];
			if (bits != 0) {
				s += (uint64_t)__builtin_ctzll(bits);
				return s < fm->nsectors ? s : fm->nsectors;
			}
		}
	}
	return fm->nsectors;
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

uint64_t edc_fm_find_in(const struct edc_fm *fm, uint64_t from, uint64_t to, uint64_t count,
                        uint64_t align)
{
	if (count == 0)
		return UINT64_MAX;
	if (align == 0)
		align = 1;
	if (to > fm->nsectors)
		to = fm->nsectors;
	uint64_t s = round_up(from, align);
	while (s < to && to - s >= count) {
		uint64_t f = next_free(fm, s, to);
		if (f != s) {
			s = round_up(f, align);
			continue;
		}
		uint64_t run = edc_fm_run(fm, s, count);
		if (run >= count)
			return s;
		s = round_up(s + run + 1, align);
	}
	return UINT64_MAX;
}

uint64_t edc_fm_find(const struct edc_fm *fm, uint64_t goal, uint64_t count, uint64_t align)
{
	if (count == 0 || count > fm->nsectors)
		return UINT64_MAX;
	if (align == 0)
		align = 1;
	if (goal >= fm->nsectors)
		goal = 0;
	uint64_t r = edc_fm_find_in(fm, goal, fm->nsectors, count, align);
	if (r == UINT64_MAX && goal > 0) {
		uint64_t to = goal + count < fm->nsectors ? goal + count : fm->nsectors;
		r = edc_fm_find_in(fm, 0, to, count, align);
	}
	return r;
}

int64_t edc_unit_info(struct edc *c, int unit, struct ed_unit_info *out)
{
	struct ed_protector p;
	struct ed_operation s;
	memset(&p, 0, sizeof p);
	memset(&s, 0, sizeof s);
	memset(out, 0, sizeof *out);
	p.unit = (uint16_t)unit;
	p.xn_entry = -1;
	s.buf = (uint64_t)(uintptr_t)out;
	s.one = sizeof *out;
	return req(c, ED_OP_UNIT_INFO, &p, NULL, &s);
}

uint64_t edc_fm_count_free(const struct edc_fm *fm)
{
	/* The kernel keeps the count: no need to read a map that may be
	 * terabytes long. */
	struct ed_unit_info u;
	if (edc_unit_info(fm->c, fm->unit, &u) >= 0 && u.nsectors == fm->nsectors)
		return u.nsectors - u.allocated > u.reserved ? u.nsectors - u.allocated - u.reserved : 0;
	uint64_t n = 0;
	for (uint64_t s = 0; s < fm->nsectors; ) {
		const uint64_t *w = fm_word(fm, s);
		if (w == NULL)
			break;
		uint64_t bits = *(const volatile uint64_t *)w;
		uint64_t k = fm->nsectors - s < 64 ? fm->nsectors - s : 64;
		if (k < 64)
			bits |= ~0ull << k;
		n += (uint64_t)(64 - __builtin_popcountll(bits));
		s += 64;
	}
	return n;
}
