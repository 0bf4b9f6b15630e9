/*
 * clock_host.c - libos/clock.h for host programs (tests, tools).
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>
#include "libos/clock.h"

uint64_t libos_time_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void libos_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	nanosleep(&ts, NULL);
}
