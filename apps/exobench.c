/*
 * exobench.c - the guest benchmark program: one subcommand per experiment,
 * each in its own file in apps/exobench/ (bench.h has the conventions:
 * timing from rdtime, a human table plus "EXOBENCH {json}" lines).
 *
 *   exobench smallfile ...   thesis Tables A.1 and A.2 (apps/exobench/smallfile.c)
 *   exobench reqcost ...     the cost of one exodisk_request (apps/exobench/reqcost.c)
 *   exobench list            the subcommands
 *
 * docs/exodisk.md ("Measurements") has the figures and how they were made.
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
	{ "reqcost", reqcost_main, "cycles and time per exodisk_request, against getpid" },
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
