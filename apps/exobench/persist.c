/*
 * persist.c - exobench persist: application-chosen persistence (thesis
 * section 5.4.3, Table A.6).  FILES files of 10 KB (default 1,000) are
 * allocated and written, read, and deallocated under three models, with
 * the Exonode organization's layout (a group's exonodes in one sector,
 * then the group's data: org.h):
 *
 *   memory    exonodes (and their extents) allocated and deallocated
 *             through the exodisk but never written back; file data kept
 *             in a buffer in this program's memory
 *   metadata  as memory, but each group's exonode block is written back
 *             (committed, durable) as soon as its exonodes are allocated,
 *             and again when they are deallocated, waiting each time
 *   data      as metadata, and every file's data is written to its extent
 *             and read from it, one synchronous request each, the data
 *             before the block that names it
 *
 *   exobench persist [-u UNIT] [-r RUNS] [-n FILES] [-m memory,metadata,data]
 *
 * Each model's runs alternate with the others' in one boot; the figures
 * are milliseconds per file.  Reads are checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/exobench/bench.h"
#include "apps/exobench/org.h"
#include "libos/exo.h"

#define FILE_BYTES 10240u
#define NPHASE 3

enum { M_MEMORY, M_METADATA, M_DATA };
static const char *const model_name[3] = { "memory", "metadata", "data" };
static const char *const phase_name[NPHASE] = { "write", "read", "dealloc" };

static struct sf s;
static uint8_t *store;                   /* the memory models' file data */

static struct ed_protector xprot(int i)
{
	struct ed_protector p = edc_prot_xn(B.unit, lay_block(&s.L, i / s.L.group),
	                                    (uint16_t)(i % s.L.group), &s.rc, &s.wc);
	p.length = s.L.xnlen;
	return p;
}

static int last_of_group(int i)
{
	return i % s.L.group == s.L.group - 1 || i == s.L.nfiles - 1;
}

static int one(int model, int ph, int i, uint64_t tag)
{
	struct ed_protector p = xprot(i);
	uint8_t *mem = model == M_DATA ? s.buf : store + (size_t)i * FILE_BYTES;
	int64_t r = 0;
	if (ph == 0) {
		r = edc_xn_alloc(B.c, &p);
		if (r == 0)
			r = edc_xn_add_extent(B.c, &p, 0, lay_data(&s.L, i), FILE_BYTES);
		if (r < 0)
			return (int)r;
		if (model == M_DATA) {
			stamp_block(mem, tag, (uint64_t)i);
			r = io_sync(&p, 1, lay_data(&s.L, i), mem, FILE_BYTES);
		} else {
			memcpy(mem, s.buf, FILE_BYTES);
			stamp_block(mem, tag, (uint64_t)i);
		}
	} else if (ph == 1) {
		if (model == M_DATA)
			r = io_sync(&p, 0, lay_data(&s.L, i), mem, FILE_BYTES);
		else
			memcpy(s.buf, mem, FILE_BYTES);
		if (r == 0 && !stamp_ok(s.buf, tag, (uint64_t)i))
			return -1;
	} else {
		r = edc_xn_dealloc(B.c, &p);
	}
	/* Metadata and Data: the group's block goes to disk at once. */
	if (r == 0 && ph != 1 && model != M_MEMORY && last_of_group(i))
		r = edc_xn_write_sync(B.c, &p);
	return (int)r;
}

static void usage(void)
{
	fprintf(stderr, "usage: exobench persist [-u UNIT] [-r RUNS] [-n FILES] [-m memory,metadata,data]\n");
	exit(2);
}

int persist_main(int argc, char **argv)
{
	int unit = 0, runs = 5, nfiles = 1000;
	const char *which = "memory,metadata,data";
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		const char *o = argv[i++];
		if (strcmp(o, "-m") == 0) {
			which = argv[i];
			continue;
		}
		long v = arg_num(argv[i], usage);
		if (strcmp(o, "-u") == 0)
			unit = (int)v;
		else if (strcmp(o, "-r") == 0)
			runs = (int)v;
		else if (strcmp(o, "-n") == 0)
			nfiles = (int)v;
		else
			usage();
	}
	if (runs < 1 || runs > BENCH_MAXRUNS || nfiles < 1 || nfiles > 20000)
		usage();
	const char *err = bench_open(unit);
	if (err != NULL) {
		printf("persist: unit %d: %s\n", unit, err);
		return 1;
	}
	memset(&s, 0, sizeof s);
	s.L.nfiles = nfiles;
	s.L.fsect = FILE_BYTES / ED_SECTOR;
	s.L.xnlen = ED_XN_HDR_BYTES + ED_XN_EXTENT_BYTES;
	s.L.group = (int)((ED_SECTOR - ED_XNBLK_HDR_BYTES) / s.L.xnlen);
	uint64_t span = lay_span(&s.L);
	s.L.start = edc_fm_find(&B.fm, 0, span, 8);
	s.buf = malloc(FILE_BYTES);
	store = malloc((size_t)nfiles * FILE_BYTES);
	if (s.L.start == UINT64_MAX || s.buf == NULL || store == NULL) {
		printf("persist: no room (%lu free sectors in a row, or memory)\n", (unsigned long)span);
		return 1;
	}
	memset(s.buf, 0x3c, FILE_BYTES);
	for (int i = 0; i < 16; i++) {
		s.rc.w[i / 8] = s.rc.w[i / 8] * 131 + now();
		s.wc.w[i / 8] = s.wc.w[i / 8] * 137 + now() + 1;
	}
	emit_meta("persist", runs);
	printf("persist: %d files of %u bytes, %d per exonode sector, sectors %lu-%lu of unit %d (%s); %d run%s\n",
	       nfiles, FILE_BYTES, s.L.group, (unsigned long)s.L.start, (unsigned long)(s.L.start + span - 1), unit,
	       B.dev, runs, runs > 1 ? "s" : "");
	static uint64_t ns[3][NPHASE][BENCH_MAXRUNS];
	for (int run = 0; run < runs; run++)
		for (int m = 0; m < 3; m++) {
			if (strstr(which, model_name[m]) == NULL)
				continue;
			uint64_t tag = 0x9e55000000ull + (uint64_t)run * 4 + (uint64_t)m;
			for (int ph = 0; ph < NPHASE; ph++) {
				uint64_t t0 = now();
				for (int i = 0; i < nfiles; i++) {
					int r = one(m, ph, i, tag);
					if (r != 0) {
						printf("persist: %s %s of file %d: %s\n", model_name[m], phase_name[ph], i,
						       r == -1 ? "read back wrong" : exo_strerror(r));
						return 1;
					}
				}
				uint64_t t = ns_since(t0);
				ns[m][ph][run] = t;
				char a[24];
				printf("  run %d %-8s %-7s %s ms/file\n", run + 1, model_name[m], phase_name[ph],
				       fmt_milli(a, sizeof a, t / (uint64_t)nfiles / 1000));
				emit("\"bench\":\"persist\",\"dev\":\"%s\",\"model\":\"%s\",\"phase\":\"%s\",\"run\":%d,\"ns\":%lu,"
				     "\"files\":%d,\"ns_per_file\":%lu", B.dev, model_name[m], phase_name[ph], run,
				     (unsigned long)t, nfiles, (unsigned long)(t / (uint64_t)nfiles));
			}
			if (edc_fm_run(&B.fm, s.L.start, span) != span) {
				printf("persist: %s left sectors allocated in the area\n", model_name[m]);
				return 1;
			}
		}
	printf("\npersistence models, %s: ms per file, mean ± sd\n", B.dev);
	for (int m = 0; m < 3; m++) {
		if (strstr(which, model_name[m]) == NULL)
			continue;
		printf("  %-8s", model_name[m]);
		for (int ph = 0; ph < NPHASE; ph++) {
			struct summary sm;
			summarize(ns[m][ph], runs, &sm);
			char a[24], b[24];
			printf("  %s %s ± %s", phase_name[ph], fmt_milli(a, sizeof a, sm.mean / (uint64_t)nfiles / 1000),
			       fmt_milli(b, sizeof b, sm.sd / (uint64_t)nfiles / 1000));
		}
		printf("\n");
	}
	free(store);
	free(s.buf);
	return 0;
}
