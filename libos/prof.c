/*
 * prof.c - the profiler's system call and the counters, for applications
 * (libos/prof.h).
 */
#include <string.h>
#include "libos/prof.h"
#include "libos/exo.h"
#include "libos/sys.h"

long exo_prof_start(const struct prof_config *cfg) { return sys_call2(SYS_prof, PROF_START, cfg); }
long exo_prof_stop(void) { return sys_call1(SYS_prof, PROF_STOP); }
long exo_prof_info(struct prof_info *out) { return sys_call2(SYS_prof, PROF_INFO, out); }
long exo_prof_read(uint64_t off, void *buf, uint64_t len) { return sys_call4(SYS_prof, PROF_READ, off, buf, len); }
long exo_prof_free(void) { return sys_call1(SYS_prof, PROF_FREE); }

long exo_prof_image(const char *path, uint64_t off, void *buf, uint64_t len)
{
	return sys_call6(SYS_prof, PROF_IMAGE, (long)path, (long)off, (long)buf, (long)len, 0);
}

int exo_counts(struct exo_counts *out)
{
	return (int)sys_call2(SYS_prof, PROF_COUNTS, out);
}

const struct exo_counts *exo_counts_all(void)
{
	return &exo_kinfo()->counts;
}

void exo_counts_sub(struct exo_counts *d, const struct exo_counts *a, const struct exo_counts *b)
{
	uint64_t *pd = (uint64_t *)d;
	const uint64_t *pa = (const uint64_t *)a, *pb = (const uint64_t *)b;
	for (size_t i = 0; i < sizeof *d / sizeof *pd; i++) pd[i] = pa[i] - pb[i];
}

void exo_counts_print(FILE *f, const char *label, const struct exo_counts *d, uint64_t units)
{
	double u = units ? (double)units : 1.0;
	uint64_t ed = 0;
	for (int i = 0; i < EXO_NEDOPS; i++) ed += d->by_edop[i];
	fprintf(f, "%s: %s%.2f syscalls, %.2f exodisk requests, %.2f disk reads, %.2f writes, %.2f flushes, "
	        "%.1f KB read, %.1f KB written\n", label, units ? "per unit " : "", d->syscalls / u, ed / u,
	        d->disk_reads / u, d->disk_writes / u, d->disk_flushes / u, d->sectors_read / 2.0 / u,
	        d->sectors_written / 2.0 / u);
}

void exo_phase(const char *name, uint64_t units)
{
	sys_call3(SYS_prof, PROF_MARK, name ? name : "", units);
}
