/*
 * clock.h - time for the portable layers of the libOS (library file
 * systems, the mount table): a clock that never goes backwards and a way
 * to wait.  The guest implements them over the kernel (posix.c: rdtime and
 * the sleep system call; there is no real-time clock, so guest times count
 * from boot); host programs over the host's clock (clock_host.c).
 */
#ifndef LIBOS_CLOCK_H
#define LIBOS_CLOCK_H

#include <stdint.h>

uint64_t libos_time_ns(void);
void     libos_sleep_ns(uint64_t ns);

#endif
