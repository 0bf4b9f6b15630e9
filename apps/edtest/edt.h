/*
 * edt.h - what the edtest groups share (apps/edtest.c is the driver, each
 * apps/edtest/t_*.c one group of checks).
 *
 * Every check prints one line, "ok: WHAT -> RESULT" or "FAIL: WHAT ...", and
 * is counted; edtest exits 1 if any failed.  The exodisk is reached through
 * the client library (libos/edc.h); only the bad-pointer checks go under it,
 * straight to the transport, because the typed wrappers cannot be handed a
 * kernel address.
 */
#ifndef APPS_EDT_H
#define APPS_EDT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "libos/edc.h"
#include "kernel/uapi/exodisk.h"
#include "kernel/uapi/errno.h"

#define SECT ED_SECTOR

extern struct edc *E;        /* the exodisk client of this process       */
extern int U;                /* the disk unit under test (edtest -u UNIT)  */
extern struct edc_fm FM;     /* its free map, read without system calls    */

/* Set up E: the library's system-call client, waiting by sleeping. */
void client_init(void);

/* ---- checks -------------------------------------------------------------- */
/* got must equal want (both kernel results: values or error codes). */
bool expect(int64_t got, int64_t want, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* cond must hold. */
bool check(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line of information, not a check. */
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A group starts: a heading line. */
void group(const char *name);
unsigned long checks_done(void);
unsigned long checks_failed(void);

/* ---- capabilities and places ------------------------------------------- */
/* A capability unique to this run and to n (runs on a kept disk differ). */
struct ed_cap cap(unsigned n);
void cap_seed(uint64_t seed);
bool cap_eq(const struct ed_cap *a, const struct ed_cap *b);
/* Text form for argv: 32 hex digits, and back. */
void cap_fmt(char out[33], const struct ed_cap *c);
bool cap_parse(const char *s, struct ed_cap *out);

/* The first sector of n free sectors (the free map), never overlapping an
 * area handed out earlier in this process. */
uint64_t area(uint64_t n);
/* Whether the exported free map says sector s is allocated. */
bool allocated(uint64_t s);
/* Are all of [s, s+n) allocated / all free? */
bool all_allocated(uint64_t s, uint64_t n);
bool all_free(uint64_t s, uint64_t n);

/* Protectors with capabilities cap(n) (read) and cap(n+1) (write). */
struct ed_protector pext(uint64_t sector, uint64_t bytes, unsigned n);
struct ed_protector pxn(uint64_t sector, uint16_t slot, uint64_t bytes, unsigned n);
struct ed_protector pproxy(int64_t id, unsigned n);

/* ---- I/O ------------------------------------------------------------------ */
/* One synchronous transfer through prot; the final result. */
int32_t io(const struct ed_protector *p, int write, uint64_t blkno, void *mem, uint64_t bytes);
/* Write-back and read-in, waited for. */
int32_t ext_write(const struct ed_protector *p);
int32_t ext_read(const struct ed_protector *p);
int32_t xn_write(const struct ed_protector *p);
int32_t xn_read(const struct ed_protector *p);
/* A request with arbitrary (possibly bad) addresses, through the transport. */
int64_t rawreq(uint64_t op, uint64_t prot, uint64_t buf, uint64_t stuff);

/* Data that names its sector and a seed; compare, ignoring the header area
 * of an extent's first sector if `hdr` (it reads as zeros). */
void fill(void *buf, uint64_t bytes, uint64_t sector, uint32_t seed);
bool same(const void *buf, uint64_t bytes, uint64_t sector, uint32_t seed, bool hdr);

/* Can a process be sure to outpace the disk, so that its operations pile
 * up in flight?  Yes when completions are polled (boot option polled=1:
 * they are noticed only when the CPU idles or at a tick) or the disk is
 * slow (the model); not with interrupts from a virtio disk on a fast host,
 * which may keep up with any rate of system calls.  Checks that need a
 * pile-up are strict only where this says yes. */
bool pileup_certain(void);

/* Physical pages free, plus those the exodisk's tables for unit U take
 * (kmem_bytes): what a leak of application pages (a pin never released)
 * lowers, while the kernel's own sets may grow as data is written (the
 * unwritten set's bitmaps, kernel/exodisk/unwritten.c). */
uint64_t pages_free(void);

/* Wait (yielding) until cond(arg) holds or `ms` pass; whether it held. */
bool wait_until(bool (*cond)(void *), void *arg, unsigned ms);

/* ---- other processes ------------------------------------------------------- */
/* Run "edtest -u U child NAME ARGS..." and wait; its exit status (or a
 * negative error).  Children report with ok/FAIL lines of their own and
 * exit with the number of failures, or a value the caller expects. */
int child(const char *name, const char *const *args);
/* Start one without waiting; its pid. */
int child_start(const char *name, const char *const *args);

/* ---- the groups ----------------------------------------------------------- */
void t_extents(void);
void t_exonodes(void);
void t_descendants(void);
void t_proxies(void);
void t_maps(void);
void t_freemap(void);
void t_cache(void);
void t_pointers(void);
void t_absurd(void);
void t_busy(void);
void t_isolation(void);
void t_exit_inflight(void);
void t_units(void);
void t_nospace(void);       /* not in the default list: fills the unit */

/* Children (edtest child NAME ...). */
int c_stranger(int argc, char **argv);
int c_exit_inflight(int argc, char **argv);
int c_map_write(int argc, char **argv);
int c_fm_write(int argc, char **argv);
int c_proxy_maker(int argc, char **argv);
int c_proxy_user(int argc, char **argv);
int c_orphan_shutdown(int argc, char **argv);
int c_orphan_parent(int argc, char **argv);

/* Persistence across boots (tests/qemu/cases_exodisk.py drives them). */
int p_write(int argc, char **argv);
int p_check(int argc, char **argv);
int p_tampered(int argc, char **argv);
int p_nodisk(int argc, char **argv);
/* Power cuts of the real stack (tools/powercut/crashtest.py -t exodisk). */
int p_powercut_run(int argc, char **argv);
int p_powercut_check(int argc, char **argv);

#endif
