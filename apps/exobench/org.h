/*
 * org.h - file organizations (thesis section 5.2.2) and the layout they
 * share, so that every organization keeps its file data in the same
 * sectors and the differences measured are those of protection alone.
 *
 * Layout: files come in groups of `group`; each group is one sector (the
 * Exonode organization's block holding the group's exonodes) followed by
 * the group's file data, file after file.  The thesis put ten exonodes in a
 * sector; this exodisk's exonode holding one extent entry is 72 bytes, and
 * (512 - 32) / 72 = 6 fit, so group = 6.  Extent and Raw leave that sector
 * unused: one sector skipped every six files.
 *
 * Each operation works on one file and returns 0 or an error code; the
 * *_end functions finish a phase (wait for write-backs, flush) so that
 * what each phase leaves is durable, for every organization alike.
 */
#ifndef APPS_EXOBENCH_ORG_H
#define APPS_EXOBENCH_ORG_H

#include <stdint.h>
#include "apps/exobench/layout.h"
#include "libos/edc.h"

/* Write-backs: the objects whose metadata is complete wait in `pend` until
 * `batch` of them are there, then all are issued at once (asynchronously:
 * the kernel commits write-backs that arrive together in one log record,
 * up to 32 blocks per record); the end of a phase issues the rest and
 * waits for all.  batch 1 writes each object back as soon as it is done. */
#define WB_RING 64

struct wbq {
	volatile int32_t word[WB_RING];
	int head, n;                       /* issued, in flight             */
	struct ed_protector pend[WB_RING]; /* waiting for the batch to fill */
	int npend, batch;
	int32_t err;
};

/* The state one run of one organization works with. */
struct sf {
	struct layout L;
	uint8_t *buf;           /* one file's data                             */
	struct ed_cap rc, wc;
	struct wbq wb;
	uint64_t readins;       /* headers / blocks read in synchronously      */
};

struct org {
	const char *name;
	int (*write)(struct sf *s, int i);          /* allocate and write      */
	int (*write_end)(struct sf *s);
	int (*read)(struct sf *s, int i);
	int (*dealloc)(struct sf *s, int i);
	int (*dealloc_end)(struct sf *s);
};

extern const struct org org_raw, org_extent, org_exonode;

/* What one flush costs on this device (raw path): the median over `n` of a
 * one-sector write to `sector` then RAW_FLUSH, the flush alone timed. */
uint64_t raw_flush_ns(uint64_t sector, int n);

/* Write-back queue helpers (org_common.c): queue an extent's header or an
 * exonode block for write-back; issue the rest and wait for all. */
int wb_extent(struct sf *s, const struct ed_protector *p);
int wb_exonode(struct sf *s, const struct ed_protector *p);
int wb_drain(struct sf *s);
/* One synchronous request on the raw path (RAW_READ, RAW_WRITE, RAW_FLUSH),
 * waiting by sleeping in RAW_WAIT; 0 or an error. */
int raw_sync(int op, uint64_t sector, void *buf, uint32_t nbytes);
/* One synchronous transfer through prot. */
int io_sync(const struct ed_protector *p, int write, uint64_t blkno, void *mem, uint64_t bytes);

#endif
