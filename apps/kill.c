/*
 * kill.c - stop processes.
 *   kill [-N] PID|-GROUP...    each process (or, negative, every process of
 *                              the group) exits with status 128+N (default
 *                              N=9: 137).  The shell's own kill also takes %JOB.
 */
#include <stdio.h>
#include <stdlib.h>
#include "libos/exo.h"

int main(int argc, char **argv)
{
	int i = 1, why = KILL_KILL, status = 0;
	if (argc > 2 && argv[1][0] == '-' && argv[1][1] >= '0' && argv[1][1] <= '9') {
		char *end;
		long w = strtol(argv[1] + 1, &end, 10);
		if (*end != 0 || w < 1 || w > 127) {
			fprintf(stderr, "kill: %s: give a number from 1 to 127\n", argv[1]);
			return 2;
		}
		why = (int)w;
		i = 2;
	}
	if (i == argc) {
		fprintf(stderr, "usage: kill [-N] PID|-GROUP...\n");
		return 2;
	}
	for (; i < argc; i++) {
		char *end;
		long t = strtol(argv[i], &end, 10);
		if (*argv[i] == 0 || *end != 0 || t == 0) {
			fprintf(stderr, "kill: %s: not a process number\n", argv[i]);
			status = 1;
			continue;
		}
		int r = exo_kill_why((int)t, why);
		if (r < 0) {
			fprintf(stderr, "kill: %s: %s\n", argv[i], exo_strerror(r));
			status = 1;
		}
	}
	return status;
}
