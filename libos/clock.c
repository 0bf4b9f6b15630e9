/*
 * clock.c - time in the guest: libos/clock.h for the portable layers (file
 * systems stamp files with it) and the C library's clocks.
 *
 * The kernel reads the machine's real-time clock once at boot and publishes
 * the wall-clock time of its boot_time (kinfo.h; rtc.c of each
 * kernel/arch/ port); the time CSR, readable without a system call, says
 * how far we are since.  So CLOCK_REALTIME, gettimeofday and time() give
 * the date, and CLOCK_MONOTONIC the time since boot.  Neither goes
 * backwards within a boot.  A machine without an RTC (wall_at_boot 0) counts from 1970 at boot.
 */
#include <sys/time.h>
#include <time.h>
#include "libos/clock.h"
#include "libos/exo.h"

uint64_t libos_uptime_ns(void) { return exo_time_to_ns(exo_time() - exo_kinfo()->boot_time); }
uint64_t libos_time_ns(void) { return exo_kinfo()->wall_at_boot + libos_uptime_ns(); }
void libos_sleep_ns(uint64_t ns) { exo_sleep_ns(ns); }

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	uint64_t ns = clk == CLOCK_REALTIME ? libos_time_ns() : libos_uptime_ns();
	ts->tv_sec = (time_t)(ns / 1000000000ull);
	ts->tv_nsec = (long)(ns % 1000000000ull);
	return 0;
}

int gettimeofday(struct timeval *tv, void *tz)
{
	(void)tz;
	uint64_t ns = libos_time_ns();
	tv->tv_sec = (time_t)(ns / 1000000000ull);
	tv->tv_usec = (suseconds_t)(ns % 1000000000ull / 1000);
	return 0;
}
