/*
 * exobench.c - the guest benchmark program: one subcommand per experiment,
 * each in its own file in apps/exobench/ (bench.h has the conventions:
 * timing from rdtime, a human table plus "EXOBENCH {json}" lines).
 *
 *   exobench smallfile ...   thesis Tables A.1 and A.2 (apps/exobench/smallfile.c)
 *   exobench largefile ...   thesis Table A.3 (largefile.c)
 *   exobench fs -t TYPE ...  the file-system rows of A.1-A.3 on a libFS by name (fs.c)
 *   exobench unixfs ...      the same as exobench fs -t unixfs
 *   exobench interleave ...  thesis Table A.4, two processes (interleave.c)
 *   exobench insert ...      thesis Table A.5 (insert.c)
 *   exobench ddio ...        thesis Figure 5-6, over libos/ddio.h (ddio.c)
 *   exobench persist ...     thesis Table A.6 (persist.c)
 *   exobench reqcost ...     the cost of one exodisk_request (reqcost.c)
 *   exobench list            the subcommands
 *
 * `make bench` (tools/bench/) runs them all on virtio-blk and on the disk
 * model and writes a report beside the thesis's numbers;
 * docs/benchmarks.md explains each experiment and has the latest results.
 */
#include <stdio.h>
#include <string.h>
#include "apps/exobench/bench.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *what;
} subs[] = {
	{ "smallfile", smallfile_main, "small files: allocate+write, read, deallocate (Tables A.1/A.2)" },
	{ "largefile", largefile_main, "one large file: allocate, sequential and random I/O, deallocate (Table A.3)" },
	{ "fs", fs_main, "the small- and large-file work through POSIX on a libFS by name (Tables A.1-A.3)" },
	{ "unixfs", unixfs_main, "exobench fs -t unixfs" },
	{ "interleave", interleave_main, "two applications, partitioned, neighboring or interleaved (Table A.4)" },
	{ "insert", insert_main, "16 bytes into the middle of files: indexed against copy (Table A.5)" },
	{ "ddio", ddio_main, "disk-directed I/O: N random reads at once against one at a time (Figure 5-6)" },
	{ "persist", persist_main, "persistence models Memory, Metadata, Data (Table A.6)" },
	{ "reqcost", reqcost_main, "cycles and time per exodisk_request, against getpid" },
	{ "lfsclean", lfsclean_main, "lfs's cleaner: write cost and throughput against utilization (Sprite LFS)" },
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; argc > 1 && i < sizeof subs / sizeof subs[0]; i++)
		if (strcmp(argv[1], subs[i].name) == 0)
			return subs[i].run(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "list") == 0) {
		for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
			printf("%-10s %s\n", subs[i].name, subs[i].what);
		return 0;
	}
	fprintf(stderr, "usage: exobench SUBCOMMAND [ARGS] (exobench list)\n");
	return 2;
}
