/*
 * edharness.h - what the exodisk host tests and tools provide to the core
 * in place of the kernel: struct ed_env over malloc'd pages, result words in
 * ordinary memory, pins that count themselves, a fake address space for
 * exonode maps - and helpers that build struct ed_args the way the
 * syscall layer will (segments split at page boundaries, room for two more).
 */
#ifndef TESTS_EXODISK_EDHARNESS_H
#define TESTS_EXODISK_EDHARNESS_H

#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernel/exodisk/ed_env.h"
#include "kernel/uapi/exodisk.h"
#include "kernel/exodisk/edcrypt.h"

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); exit(1); } } while (0)
#define CHECK_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); if (_a != _b) { \
	fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, \
	        #a, _a, #b, _b); exit(1); } } while (0)

#define H_MAXMAPS 512

struct hpin;

struct harness {
	struct ed_env env;
	struct hpin *live;         /* pins the core holds */
	long pages;                /* allocated and not yet freed */
	long pins;                 /* pins handed to the core and not released */
	long posts;
	long sleeps;               /* env.sleep calls (h_use_sleep) */
	long pauses;               /* env.pause calls (no time passes in the harness) */
	bool woken;
	long fail_alloc;           /* the page allocation that brings this to 0 fails; <0 never */
	uint64_t rng;
	struct { bool used; struct ed_client *c; void *page; uint64_t uaddr; } maps[H_MAXMAPS];
	uint64_t next_uaddr;
};

/* A pin: the segments of a request's buffer (they must outlive the call). */
struct hpin {
	struct harness *h;
	struct hpin *next, *prev;
	struct blk_seg seg[BLK_MAX_SEGS];
	uint32_t nseg;
};

void h_init(struct harness *h, uint64_t seed);
uint64_t h_rand(struct harness *h);
/* Give the core a sleep() and wakeup() as the kernel's (the next h_core). */
void h_use_sleep(struct harness *h);
struct exodisk *h_core(struct harness *h, const struct ed_config *cfg, const char *key);
/* The machine lost power: the core's pins die with it. */
void h_drop_pins(struct harness *h);
/* Poll until the word is no longer ED_PENDING; returns its value. */
int32_t h_wait(volatile int32_t *word);
/* Poll the block layer a while so background writes finish. */
void h_settle(void);
/* The page an exonode map address stands for, or NULL. */
void *h_map_page(struct harness *h, uint64_t uaddr);

/* One exodisk_request, the way the syscall layer makes it.  buf/bytes is the
 * I/O buffer (ED_OP_IO) or NULL; data/datalen application data; result the
 * completion word or NULL. */
int64_t h_req(struct harness *h, struct exodisk *ed, struct ed_client *c, int op,
              struct ed_protector *prot, struct ed_buf *b, struct ed_operation *stuff,
              void *iobuf, uint64_t bytes, void *data, uint32_t datalen, int32_t *result);

/* Shorthands. */
struct ed_cap h_cap(uint64_t a, uint64_t b);
struct ed_protector h_ext(int unit, uint64_t blkno, uint64_t bytes, struct ed_cap rc, struct ed_cap wc);
struct ed_protector h_xn(int unit, uint64_t blkno, uint16_t slot, uint64_t bytes,
                         struct ed_cap rc, struct ed_cap wc);
/* Asynchronous operation and wait: the immediate result, or the completion. */
int64_t h_sync(struct harness *h, struct exodisk *ed, struct ed_client *c, int op,
               struct ed_protector *prot);
int64_t h_io(struct harness *h, struct exodisk *ed, struct ed_client *c, struct ed_protector *prot,
             int write, uint64_t sector, void *buf, uint64_t bytes);
int64_t h_stuff(struct harness *h, struct exodisk *ed, struct ed_client *c, int op,
                struct ed_protector *prot, struct ed_operation *st);

#endif
