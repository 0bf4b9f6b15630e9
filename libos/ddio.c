/*
 * ddio.c - disk-directed I/O over the exodisk client library (see ddio.h).
 */
#include <string.h>
#include "libos/ddio.h"

void ddio_init(struct ddio *d, struct edc *c, struct ddio_slot *slots, int cap)
{
	memset(d, 0, sizeof *d);
	d->c = c;
	d->slot = slots;
	d->cap = cap;
	for (int i = 0; i < cap; i++)
		slots[i].busy = 0;
}

int32_t ddio_start(struct ddio *d, const struct ddio_req *r)
{
	if (d->inflight == d->cap)
		return DDIO_FULL;
	struct ddio_slot *s = NULL;
	for (int i = 0; i < d->cap; i++)
		if (!d->slot[i].busy) {
			s = &d->slot[i];
			break;
		}
	s->req = *r;
	int64_t e = edc_io(d->c, r->prot, r->write, r->blkno, r->mem, r->bytes, &s->word);
	if (e < 0)
		return (int32_t)e;
	s->busy = 1;
	d->inflight++;
	d->started++;
	return 0;
}

/* Sleep until one more of this process's exodisk operations has completed.
 * The count includes operations that are not ours (a libFS's write-backs),
 * so ask it first: "at most one fewer than now" wakes at the first
 * completion of any of them, and the caller looks at its words again. */
static void sleep_one(struct ddio *d)
{
	struct edc *c = d->c;
	int64_t n = c->t->request(c->ctx, ED_OP_POLL, NULL, NULL, NULL);
	if (n > 0) {
		struct ed_operation most;
		memset(&most, 0, sizeof most);
		most.one = (uint64_t)n - 1;
		int64_t left = c->t->request(c->ctx, ED_OP_POLL, NULL, NULL, &most);
		d->sleeps++;
		if (left >= 0 && left <= n - 1)
			return;
	}
	/* The transport did not sleep (the host's core only counts), or the
	 * count was already zero: let completions happen its own way. */
	c->t->idle(c->ctx);
}

int32_t ddio_next(struct ddio *d, struct ddio_req *done)
{
	if (d->inflight == 0)
		return DDIO_IDLE;
	for (;;) {
		/* Start each look where the last one stopped, so that no slot
		 * waits behind lower-numbered ones that keep completing. */
		for (int k = 0; k < d->cap; k++) {
			int i = (d->scan + k) % d->cap;
			struct ddio_slot *s = &d->slot[i];
			if (s->busy && s->word != ED_PENDING) {
				s->busy = 0;
				d->inflight--;
				d->completed++;
				d->scan = (i + 1) % d->cap;
				if (done)
					*done = s->req;
				return s->word;
			}
		}
		sleep_one(d);
	}
}

int32_t ddio_run(struct ddio *d, const struct ddio_req *list, int n, ddio_fn process, void *ctx)
{
	int32_t first = 0, stop = 0;
	int next = 0;
	while (next < n || d->inflight > 0) {
		/* Fill every free slot from the list. */
		while (stop == 0 && next < n && d->inflight < d->cap) {
			int32_t r = ddio_start(d, &list[next]);
			if (r == ED_E_NOIO) {
				d->retries++;
				break;          /* take a completion, then try again */
			}
			if (r < 0) {
				stop = r;       /* refused: finish what is in flight */
				break;
			}
			next++;
		}
		if (d->inflight == 0) {
			if (stop != 0)
				break;
			/* ED_E_NOIO with nothing of ours in flight: the table is
			 * full of others' operations; let them drain. */
			d->c->t->idle(d->c->ctx);
			continue;
		}
		struct ddio_req done;
		int32_t r = ddio_next(d, &done);
		if (r < 0 && first == 0)
			first = r;
		if (stop == 0 && process != NULL) {
			int p = process(ctx, &done, r);
			if (p != 0)
				stop = p;
		}
	}
	return stop != 0 ? stop : first;
}
