/*
 * edc_host.c - the host transport (see edc_host.h).
 *
 * What the kernel's system-call layer does to a request, this does on the
 * host: it copies the argument structures (so the core never sees the
 * caller's memory change under it), finds the operation's application
 * data where the ABI puts it (stuff->buf and stuff->one), turns the I/O
 * buffer into segments, and calls ed_request.  Exonode maps come back as
 * harness addresses; the caller gets the page's host address instead, as a
 * guest program gets an address it can read.
 */
#include <string.h>
#include "libos/edc_host.h"

static int64_t host_request(void *ctx, int op, struct ed_protector *prot, struct ed_buf *buf,
                            struct ed_operation *stuff)
{
	struct edc_host *eh = ctx;
	struct ed_protector p;
	struct ed_buf b;
	struct ed_operation s;
	if (op == ED_OP_FLUSH)
		eh->nflushes++;
	struct ed_protector *pp = NULL;
	struct ed_buf *bp = NULL;
	struct ed_operation *sp = NULL;
	if (prot) { p = *prot; pp = &p; }
	if (buf) { b = *buf; bp = &b; }
	if (stuff) { s = *stuff; sp = &s; }

	void *iobuf = NULL, *data = NULL;
	uint64_t bytes = 0;
	uint32_t datalen = 0;
	int32_t *result = NULL;
	if (bp != NULL && bp->b_resptr != 0)
		result = (int32_t *)(uintptr_t)bp->b_resptr;
	if (op == ED_OP_IO && bp != NULL) {
		iobuf = (void *)(uintptr_t)bp->b_memaddr;
		bytes = bp->b_bcount;
		if (bytes > ED_IO_MAX || iobuf == NULL)
			return ED_E_TOOBIG;
	}
	if (sp != NULL && (op == ED_OP_EXONODE_ADD_DATA || op == ED_OP_EXONODE_READ_DATA ||
	                   op == ED_OP_UNIT_INFO)) {
		data = (void *)(uintptr_t)sp->buf;
		datalen = (uint32_t)sp->one;
	}
	if (sp != NULL && op == ED_OP_EXONODE_PROXY) {
		data = (void *)(uintptr_t)sp->buf;
		datalen = (uint32_t)(sp->one * sizeof(struct ed_range));
	}
	if (sp != NULL && op == ED_OP_EXONODE_MAP && sp->one == ED_MAP_UNMAP) {
		/* The caller holds a host address: give the core its own. */
		for (int i = 0; i < H_MAXMAPS; i++)
			if (eh->h->maps[i].used && (uintptr_t)eh->h->maps[i].page == sp->two)
				sp->two = eh->h->maps[i].uaddr;
	}
	int64_t r = h_req(eh->h, eh->ed, &eh->client, op, pp, bp, sp, iobuf, bytes, data, datalen,
	                  result);
	if (op == ED_OP_EXONODE_MAP && sp != NULL && sp->one == ED_MAP_MAP && r > 0) {
		void *page = h_map_page(eh->h, (uint64_t)r);
		r = page ? (int64_t)(uintptr_t)page : ED_E_NOMAP;
	}
	if (stuff != NULL)
		*stuff = s;
	return r;
}

static void host_idle(void *ctx)
{
	(void)ctx;
	blk_poll();
}

static const uint64_t *host_fm_page(void *ctx, int unit, uint32_t i)
{
	struct edc_host *eh = ctx;
	return ed_freemap_page(eh->ed, unit, i);
}

static uint64_t host_nsectors(void *ctx, int unit)
{
	struct edc_host *eh = ctx;
	struct ed_protector p;
	struct ed_operation s;
	memset(&p, 0, sizeof p);
	memset(&s, 0, sizeof s);
	p.unit = (uint16_t)unit;
	p.xn_entry = -1;
	if (host_request(eh, ED_OP_GET_FREE_MAP, &p, NULL, &s) < 0)
		return 0;
	return s.one;
}

static const struct edc_transport host_transport = {
	.request = host_request,
	.idle = host_idle,
	.fm_page = host_fm_page,
	.nsectors = host_nsectors,
};

void edc_host_init(struct edc_host *eh, struct harness *h, struct exodisk *ed)
{
	memset(eh, 0, sizeof *eh);
	eh->h = h;
	eh->ed = ed;
	eh->client.slot = -1;
	edc_init(&eh->edc, &host_transport, eh);
}

void edc_host_exit(struct edc_host *eh)
{
	ed_client_exit(eh->ed, &eh->client);
}
