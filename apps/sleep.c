/*
 * sleep.c - wait a while.
 *   sleep SECONDS       a number, fractions allowed (sleep 0.5); the kernel
 *                       wakes it at the next clock tick (10 ms) after that
 */
#include <stdio.h>
#include <stdlib.h>
#include "libos/exo.h"

int main(int argc, char **argv)
{
	char *end = NULL;
	double s = argc == 2 ? strtod(argv[1], &end) : -1;
	if (argc != 2 || end == argv[1] || *end != 0 || s < 0 || s > 1e7) {
		fprintf(stderr, "usage: sleep SECONDS\n");
		return 2;
	}
	exo_sleep_ns((uint64_t)(s * 1e9));
	return 0;
}
