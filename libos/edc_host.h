/*
 * edc_host.h - the host transport of the exodisk client library: each
 * request is a direct call into the exodisk core, made the way the kernel's
 * system-call layer makes it (tests/host/exodisk/edharness.c builds the
 * argument block: the I/O buffer becomes segments split at page boundaries,
 * the result word is handed over as pinned memory).  One struct edc_host is
 * one simulated process: its own struct ed_client, so two of them on one
 * core are two applications the core keeps apart.
 *
 * Host tests, tools/exotool and the libFS test suites use it; the guest
 * uses edc_sys.c.  Host builds only.
 */
#ifndef LIBOS_EDC_HOST_H
#define LIBOS_EDC_HOST_H

#include "libos/edc.h"
#include "tests/host/exodisk/edharness.h"

struct edc_host {
	struct harness *h;
	struct exodisk *ed;
	struct ed_client client;
	struct edc edc;
	uint64_t nflushes;        /* flushes made through edc_flush */
};

/* A new process on core ed (whose environment is harness h). */
void edc_host_init(struct edc_host *eh, struct harness *h, struct exodisk *ed);
/* The process exits: the core drops its holds and undoes what it did not
 * write back (ed_client_exit). */
void edc_host_exit(struct edc_host *eh);

#endif
