/*
 * report.h - turn a recorded profile (kernel/uapi/prof.h) into the report
 * `prof` prints: where the time went, the top functions, the counters, and
 * the phases a program marked.  Portable: the guest's `prof` and the host's
 * tools/prof-report share it, and the saved file format below.
 */
#ifndef PROF_REPORT_H
#define PROF_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include "kernel/uapi/prof.h"
#include "apps/prof/symtab.h"

/* `prof -o FILE` writes this header, then info.used bytes of records; `prof
 * -d` prints the same bytes in hex between "prof-dump: begin" and
 * "prof-dump: end" lines. */
#define PROF_FILE_MAGIC   "EXOPROF1"
#define PROF_FILE_VERSION 2

struct prof_file {
	char     magic[8];
	uint32_t version;
	uint32_t hdr_bytes;               /* sizeof(struct prof_file) */
	int32_t  status;                  /* the command's exit status */
	uint32_t reserved;
	struct prof_info info;
	struct exo_counts before, after;  /* system-wide counters around the run */
	char     cmd[256];                /* the command line */
};

/* Where symbols come from: load those of a program (the path it was
 * spawned with, "/bin/fsbench"), or of the kernel when path is NULL.  0, or -1
 * with *why set. */
struct prof_syms {
	int (*load)(void *ctx, const char *path, struct symtab *t, const char **why);
	/* Optional: the source line of an address ("inode.c:120 in itrim"),
	 * for --lines; 0, or -1 if not known. */
	int (*where)(void *ctx, const char *path, uint64_t addr, char *buf, size_t size);
	void *ctx;
};

struct prof_opts {
	int top;          /* rows per table */
	int phase_top;    /* rows per phase */
	int folded;       /* instead of the report, one line per sample: its
	                   * stack, outermost first, ';'-separated, then " 1"
	                   * (the "folded" input of flame-graph tools) */
	const char *lines;   /* a function whose self samples are also shown by
	                      * address (by source line, with syms->where) */
};

/* Print the report; 0, or -1 if the record is malformed (with a message). */
int prof_report(FILE *out, const struct prof_file *hdr, const uint8_t *data,
                const struct prof_syms *syms, const struct prof_opts *opts);

/* The bytes of the record that follows, or 0 if r (with avail bytes from r on)
 * is not a well-formed record. */
size_t prof_rec_len(const struct prof_rec *r, size_t avail);

#endif
