/*
 * prof.h - the profiler and the kernel's counters, for applications
 * (kernel/uapi/prof.h is the system call, docs/profiling.md the guide).
 *
 * A benchmark that wants per-phase numbers calls exo_phase() as each phase
 * starts; under `prof` that splits the report by phase (top functions and
 * counts per unit of work), and otherwise costs one cheap system call.  It
 * can also read its own counters around a phase with exo_counts() and print
 * the difference with exo_counts_print().
 */
#ifndef LIBOS_PROF_H
#define LIBOS_PROF_H

#include <stdint.h>
#include <stdio.h>
#include "kernel/uapi/prof.h"

/* This process's counters (system calls, exodisk requests, disk requests). */
int  exo_counts(struct exo_counts *out);
/* The system's, since boot (the kernel-information page; no system call). */
const struct exo_counts *exo_counts_all(void);
/* d = a - b */
void exo_counts_sub(struct exo_counts *d, const struct exo_counts *a, const struct exo_counts *b);
/* One line: "LABEL: N syscalls, N exodisk, N reads, N writes, N flushes, KB" per unit if units > 0. */
void exo_counts_print(FILE *f, const char *label, const struct exo_counts *d, uint64_t units);
/* Start a phase NAME of UNITS units of work (0: not counted) for the
 * profiler; NULL or "" ends the current phase without starting another. */
void exo_phase(const char *name, uint64_t units);

/* The raw operations (results as the kernel returns them). */
long exo_prof_start(const struct prof_config *cfg);
long exo_prof_stop(void);
long exo_prof_info(struct prof_info *out);
long exo_prof_read(uint64_t off, void *buf, uint64_t len);
long exo_prof_free(void);
long exo_prof_image(const char *path, uint64_t off, void *buf, uint64_t len);

#endif
