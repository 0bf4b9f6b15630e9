/*
 * ed_env.h - the boundary between the portable exodisk core and whatever
 * hosts it: the kernel (kernel/sys_exodisk.c) or a host test or tool.
 *
 * The core is portable C: it never allocates with malloc, never prints,
 * never touches a process or a page table.  What it needs from its host is
 * this small set of functions (struct ed_env).  What the host calls is the
 * short list of entry points at the bottom.  docs/exodisk.md ("The kernel
 * interface") explains the rules; in brief:
 *
 *  - The host runs the core with interrupts disabled on one hart.  Block
 *    completions (done() callbacks from drivers/blk.h) call back into the
 *    core, also with interrupts disabled.  env.lock/unlock bracket every
 *    entry and every callback; they may be no-ops on one hart, and must be
 *    recursive for the holder on SMP (a synchronous device completes inside
 *    blk_submit, while the core already holds the lock).
 *  - The host copies prot, reqbp and stuff in from user memory before the
 *    call and copies stuff (and data) out after it.  For ED_OP_IO it pins the
 *    application's buffer and hands it over as physical segments; for any
 *    asynchronous operation it pins the result word.  A single opaque `pin`
 *    stands for both; the core calls env.release(pin) exactly once, when the
 *    device is done with them, if it took the pin (args.pin_taken).
 *  - A struct ed_client is kept by the host, one per process.  The core keeps
 *    its own per-client state inside it.  When a process exits, the host calls
 *    ed_client_exit(); operations still in flight then complete into pinned
 *    memory and are discarded, and the client struct may be freed at once.
 */
#ifndef ED_ENV_H
#define ED_ENV_H

#include <stdint.h>
#include <stdbool.h>
#include "drivers/blk.h"
#include "kernel/uapi/exodisk.h"

struct exodisk;
struct ed_client;

struct ed_env {
	void *ctx;                                    /* passed back to every function */
	/* One zeroed 4096-byte page that a device can also address (the kernel:
	 * a physical page, identity-mapped), or NULL.  Cache entries, free maps,
	 * binding tables, log buffers, bounce buffers and exonode map pages. */
	void *(*page_alloc)(void *ctx);
	void  (*page_free)(void *ctx, void *page);
	/* Store a result word (0 or a negative error, or ED_PENDING) and wake
	 * anyone waiting for it.  word is inside memory the host pinned. */
	void  (*post)(void *ctx, int32_t *word, int32_t value);
	/* The core is done with an operation's pinned memory: unpin it. */
	void  (*release)(void *ctx, void *pin);
	/* Map `page` read-only into client c; return its user address in *uaddr.
	 * 0 or a negative error.  unmap_page undoes it (page is still the core's). */
	int   (*map_page)(void *ctx, struct ed_client *c, void *page, uint64_t *uaddr);
	void  (*unmap_page)(void *ctx, struct ed_client *c, uint64_t uaddr);
	/* 64 bits of the best entropy the host has (mixed into mount nonces). */
	uint64_t (*entropy)(void *ctx);
	/* Bracket the core against other harts; NULL = single hart. */
	void  (*lock)(void *ctx);
	void  (*unlock)(void *ctx);
	/* Used only by the synchronous paths (format, mount, check): let device
	 * completions happen, e.g. blk_poll() or wait for an interrupt. */
	void  (*wait)(void *ctx);
	/* Optional, synchronous paths only: let about `ms` milliseconds pass
	 * (a mount waits between its tries of a read the disk failed, so that
	 * a fault that clears by itself has time to).  NULL: no pause. */
	void  (*pause)(void *ctx, uint32_t ms);
	/* Inside ed_request, when the request needs a page of the binding tree
	 * that is being read: block the calling process until wakeup() (other
	 * processes and completions run meanwhile); the core then retries the
	 * request.  Return 0, or an error to give up with (the process was
	 * killed).  NULL: the core calls wait() instead. */
	int   (*sleep)(void *ctx);
	void  (*wakeup)(void *ctx);
	/* Optional: the page behind page `page` of a unit's exported free map
	 * changed (ed_freemap_page returns another): unmap the old one from
	 * every process that mapped it. */
	void  (*fm_remap)(void *ctx, int unit, uint64_t page);
	/* Optional: an asynchronous operation of a client completed (post()
	 * was called too if it named a result word).  Whoever sleeps until a
	 * client has fewer operations in flight (ED_OP_POLL with stuff) counts
	 * again: an operation queued without a result word completes too. */
	void  (*op_done)(void *ctx);
};

/* Sizes chosen when the core is created; 0 in any field means the default. */
struct ed_config {
	uint32_t cache_entries;   /* prime; default 281 (the thesis's size)            */
	uint32_t nio;             /* asynchronous operations in flight; default 128     */
	uint32_t bounce_bytes;    /* per bounce buffer (uncached extent reads); 128 KiB */
	uint32_t nbounce;         /* bounce buffers; default 2                          */
	uint32_t nproxy;          /* proxy exonodes; default 64                         */
	uint32_t nmaps;           /* exonode mappings, all clients; default 256         */
	uint32_t client_quota;    /* cache entries one client may hold; default 3/4     */
	uint32_t meta_pages;      /* clean binding-tree pages kept per unit; default 1024 */
};

#define ED_MAX_CLIENTS 64     /* processes using the exodisk at the same time */

/* Per-process state.  The host allocates it (zeroed) and keeps it; the core
 * fills it in at the client's first request. */
struct ed_client {
	int32_t  slot;            /* the core's index for this client; -1 = none yet   */
	bool     registered;
	uint32_t pending;         /* operations in flight (ED_OP_POLL)                 */
	uint32_t nheld;           /* cache entries held                                */
	uint32_t nmaps;           /* exonode maps installed                            */
};

/* Everything one exodisk_request carries, already copied into the kernel. */
struct ed_args {
	struct ed_protector *prot;    /* or NULL when the caller passed none           */
	struct ed_buf       *buf;     /* or NULL                                       */
	struct ed_operation *stuff;   /* or NULL; outputs are written back here        */
	/* ED_OP_IO: the application buffer as pinned segments covering b_bcount
	 * bytes.  The array has room for segcap >= nseg + 2 entries: the core
	 * rewrites it in place (to put an extent header's sector in front). */
	struct blk_seg *seg;
	uint32_t nseg, segcap;
	int32_t *result;              /* pinned result word (b_resptr), or NULL        */
	void    *pin;                 /* what env.release() undoes                     */
	bool     pin_taken;           /* out: the core keeps pin until it completes    */
	/* ADD_DATA: the data (datalen bytes).  READ_DATA: room for datalen bytes,
	 * filled in.  PROXY: an array of struct ed_range (datalen bytes). */
	void    *data;
	uint32_t datalen;
};

/* ---- entry points ----------------------------------------------------------- */

/* Create the core: page pools, the cache, control blocks.  key is the
 * 128-bit boot key (ED_DEV_KEY in edcrypt.h is the development default).
 * Returns NULL and sets *err on failure. */
struct exodisk *ed_create(const struct ed_env *env, const struct ed_config *cfg,
                          const uint8_t key[16], int *err);
/* Free everything (host tests and tools; the kernel never destroys it).
 * Nothing may be in flight. */
void ed_destroy(struct exodisk *ed);

/* Format options.  0 = default. */
struct ed_format_opts {
	uint64_t nsectors;        /* sectors to use; default: the unit's capacity        */
	uint64_t log_sectors;     /* commit log size; default nsectors/256, 64..2048     */
	uint8_t  uuid[16];        /* the disk's identity; all zero = derive from entropy */
};

/* The sizes a unit may have: at least ed_format_min_sectors() (the
 * exodisk's region and room to work in), at most ED_MAX_SECTORS (what the
 * exported free map can show: 32 TiB). */
#define ED_MAX_SECTORS (1ull << 36)
uint64_t ed_format_min_sectors(void);

/* Write an empty exodisk to a registered block unit.  Synchronous, and it
 * writes a few pages whatever the size.  ED_E_RANGE: too small;
 * ED_E_TOOBIG: too big (or a log too big for it). */
int ed_format(struct exodisk *ed, int unit, const struct ed_format_opts *o);
/* Mount a unit: read its superblock and trees (the binding tree only at its
 * root), replay the commit log, rewrite any block the log says is newer
 * than its home copy.  Synchronous (boot time).  Returns 0 or a negative
 * ED_E_* / BLK_E_* code (ED_E_FORMAT: no exodisk; ED_E_VERSION: another
 * format version; ED_E_BADMAC: another key, or damaged). */
int ed_mount(struct exodisk *ed, int unit);

/* One system call.  Returns >= 0 (0, or a count, id or address as the
 * operation documents) or a negative error.  For asynchronous operations a
 * return of 0 means queued; the result word receives the outcome. */
int64_t ed_request(struct exodisk *ed, struct ed_client *c, int op, struct ed_args *a);

/* A process is exiting: forget c.  Its in-flight operations finish quietly,
 * its cache holds are dropped (uncommitted changes nobody else holds are
 * rolled back), its proxies and maps disappear.  c may be freed afterwards. */
void ed_client_exit(struct exodisk *ed, struct ed_client *c);

/* Host tests and tools only: forget a mounted unit without writing anything,
 * as a crash would.  Nothing of that unit may be in flight. */
void ed_unmount_forget(struct exodisk *ed, int unit);

/* What a mounted unit looks like and what it has done since it was
 * mounted (ED_OP_UNIT_INFO; boot messages and measurements).  0 or
 * ED_E_UNIT.  c may be NULL (then the client fields are 0). */
int ed_unit_info(struct exodisk *ed, int unit, struct ed_client *c, struct ed_unit_info *out);
/* Sectors the last ed_format wrote (format cost, for measurements). */
uint64_t ed_format_sectors(struct exodisk *ed);
/* The sector of the last metadata that did not verify or could not be
 * read (a mount, a check, a lookup), for messages; UINT64_MAX if none. */
uint64_t ed_bad_sector(struct exodisk *ed);

/* For the kernel's exported pages: the free map of a mounted unit is
 * ed_freemap_npages() pages; ed_freemap_page(i) is the i-th, to be mapped
 * read-only when a process first reads it.  A page that is all free or
 * all allocated is one page shared by every such page; when page i gets a
 * page of its own (or back), env.fm_remap says so, and the old mapping
 * must go.  Page contents change in place. */
uint32_t ed_freemap_npages(struct exodisk *ed, int unit);
void    *ed_freemap_page(struct exodisk *ed, int unit, uint32_t i);

#endif
