/*
 * check.h - the exodisk invariant checker, used by tools/exotool and the
 * host tests.
 *
 * It verifies what thesis section 2.2 requires of storage integrity, and
 * what this implementation adds:
 *   - every page of the binding and free-map trees verifies and lies in the
 *     data area, allocated; the superblock's counts match;
 *   - every bound header and exonode block verifies (MAC, disk, sector,
 *     current version stamp) and is well formed;
 *   - an allocated sector is in exactly one self-protected extent or is
 *     referred to by exactly one exonode block (as its own sector or through
 *     one extent entry); nothing unallocated is referred to; nothing
 *     allocated is referred to by nothing (no leaks); the exodisk's own
 *     region is allocated;
 *   - descendant links agree in both directions (a mismatch after a crash is
 *     reported as a note: such links are never followed);
 *   - for a mounted unit, also the cache: the conservative free map holds the
 *     durable one plus exactly the uncommitted allocations of cached
 *     entries, cached entries do not overlap, and proxies stay inside their
 *     origins.
 * Findings are reported through a callback; the core never prints.
 */
#ifndef ED_CHECK_H
#define ED_CHECK_H

#include <stdint.h>
#include "kernel/exodisk/ed_env.h"

#define ED_CHK_VIOLATION 1
#define ED_CHK_NOTE      2

typedef void (*ed_check_report_fn)(void *arg, int severity, const char *what,
                                   uint64_t sector, uint64_t detail);

/* Called for every binding the checker could verify, with its decoded
 * contents (capabilities in the clear): struct ed_exthdr for an extent,
 * the whole exonode block for an exonode block. */
typedef void (*ed_check_visit_fn)(void *arg, uint8_t kind, uint64_t sector, uint32_t nsect,
                                  const uint8_t *plain);

struct ed_check_stats {
	uint64_t gen;              /* checkpoint generation */
	uint64_t nsectors, data_start;
	uint64_t log_records;      /* live records in the log */
	uint64_t bindings, extents, xnblocks, exonodes, descendants, data_entries;
	uint64_t allocated;        /* sectors allocated (durable map), region included */
	uint64_t tree_pages;       /* pages of the binding and free-map trees */
	uint64_t violations, notes;
};

/* Check an unmounted unit, reading only (a crashed disk is checked as the
 * next mount would see it).  Returns 0 if it could be read at all (then
 * see stats->violations), or the error that stopped it. */
int ed_check_disk(struct exodisk *ed, int unit, ed_check_report_fn report, ed_check_visit_fn visit,
                  void *arg, struct ed_check_stats *stats);

/* Check a mounted unit with nothing in flight: its disk and its memory. */
int ed_check_live(struct exodisk *ed, int unit, ed_check_report_fn report, void *arg,
                  struct ed_check_stats *stats);

/* The durable free map of an unmounted unit, one bit per sector, for
 * listing: calls fn for every run of equal bits. */
int ed_check_freemap(struct exodisk *ed, int unit,
                     void (*fn)(void *arg, uint64_t start, uint64_t count, int allocated),
                     void *arg);

/* Every page the exodisk's own trees hold in a mounted unit's exported free
 * map (8 sectors from each sector given), for tests that model that map. */
int ed_check_meta_pages(struct exodisk *ed, int unit, void (*fn)(void *arg, uint64_t sector),
                        void *arg);

#endif
