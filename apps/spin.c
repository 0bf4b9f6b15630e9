/*
 * spin.c - a CPU-bound test program.
 *   spin NAME STEPS [MS]     burn MS milliseconds of CPU (default 30) per step
 *                            and print "NAME i" after each
 * Two started together show that the scheduler shares the CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include "libos/exo.h"

int main(int argc, char **argv)
{
	if (argc < 3) { fprintf(stderr, "usage: spin NAME STEPS [MS]\n"); return 2; }
	int steps = atoi(argv[2]);
	uint64_t per_step = exo_ns_to_time((uint64_t)(argc > 3 ? atoi(argv[3]) : 30) * 1000000ull);
	volatile uint64_t sink = 0;
	for (int i = 0; i < steps; i++) {
		uint64_t until = exo_time() + per_step;
		while (exo_time() < until) sink += 1;   /* never yields: only preemption interleaves */
		printf("%s %d\n", argv[1], i);
	}
	return 0;
}
