/*
 * shseg.h - shared segments: the one primitive the kernel adds so that
 * library OSes in several processes can share state (docs/sharing.md).
 *
 * A segment is a run of zeroed pages named by 16 bytes the processes agree
 * on - for a file system, bytes derived from its secret, so the name is a
 * capability: whoever can compute it may attach.  Every process that
 * attaches sees the segment at the same address (USHSEG(index)), so
 * pointers inside it mean the same everywhere.  The kernel keeps the pages
 * while anyone is attached and frees them with the last.
 *
 * The kernel reads one word of it, the lock word at offset 0 (struct
 * shseg_hdr), for one reason: when a process exits (or is killed) while
 * the word says it holds the lock, the kernel writes SHSEG_LOCK_DEAD there
 * and wakes the waiters, so the next holder knows to repair what the dead
 * one may have left half done.  Taking and releasing the lock are the
 * library's atomic instructions; the kernel is entered only to sleep
 * (SHSEG_WAIT) and to wake (SHSEG_WAKE), as with Linux's futexes.
 *
 *   shseg(SHSEG_ATTACH, name, npages)  -> address   (joins if it exists;
 *                                                    npages on creation)
 *   shseg(SHSEG_GROW, address, npages) -> npages    (every sharer sees the
 *                                                    new pages at once)
 *   shseg(SHSEG_DETACH, address)       -> 0
 *   shseg(SHSEG_WAIT, word, value)     -> 0         (sleeps while the 32-bit
 *                                                    word at `word` == value)
 *   shseg(SHSEG_WAKE, word)            -> 0         (wakes every sleeper on it)
 */
#ifndef UAPI_SHSEG_H
#define UAPI_SHSEG_H

#include <stdint.h>

#define SHSEG_ATTACH 1
#define SHSEG_GROW   2
#define SHSEG_DETACH 3
#define SHSEG_WAIT   4
#define SHSEG_WAKE   5

#define SHSEG_NAME      16        /* bytes in a name                          */
#define SHSEG_MAX       32        /* segments in the system                   */
#define SHSEG_MAX_PAGES 512       /* pages in one segment (2 MiB)             */

/* The lock word: 0 free; else the holder's pid, with SHSEG_LOCK_WAITERS
 * when someone may be asleep on it; SHSEG_LOCK_DEAD: free, but its last
 * holder died holding it. */
#define SHSEG_LOCK_PID     0x3fffffffu
#define SHSEG_LOCK_DEAD    0x40000000u
#define SHSEG_LOCK_WAITERS 0x80000000u

/* The first bytes of every segment.  The kernel writes `sharers` and
 * `npages` for the library's information and never trusts what they say. */
struct shseg_hdr {
	uint32_t lock;
	uint32_t sharers;             /* processes attached now                   */
	uint32_t npages;              /* the segment's size in pages              */
	uint32_t spare;
};

#endif
