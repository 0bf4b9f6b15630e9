/*
 * pin.h - holding application memory for a device.
 *
 * A disk request that reads into or writes from application memory pins the
 * pages: it takes a reference on each and records their physical addresses
 * as block segments.  The pages then outlive the process if it exits before
 * the device is done (kalloc.c frees a page on its last reference), so a late
 * completion can never scribble on memory someone else now owns.
 */
#ifndef PIN_H
#define PIN_H

#include <stdint.h>
#include <stdbool.h>
#include "kernel/arch.h"
#include "drivers/blk.h"

/* Pin [va, va+len) of pt.  dev_writes: the device will write the memory (a
 * disk read), so the pages must be user-writable; otherwise readable.  Fills
 * segs (one per page piece; at most maxsegs) and returns the count, or
 * K_E_FAULT / K_E_2BIG (nothing stays pinned on error). */
int  pin_user(pagetable_t pt, uint64_t va, uint64_t len, bool dev_writes,
	      struct blk_seg *segs, int maxsegs);
/* Drop the references pin_user took. */
void unpin_segs(const struct blk_seg *segs, int nseg);

/* Pin one aligned 32-bit word the kernel will write later (a completion
 * word).  Returns a kernel pointer to it, or NULL if va is not a writable,
 * 4-byte-aligned user address. */
int32_t *pin_word(pagetable_t pt, uint64_t va);
void     unpin_word(int32_t *word);

#endif
