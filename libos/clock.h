/*
 * clock.h - time for the portable layers of the libOS (library file
 * systems, the mount table): a clock that never goes backwards and a way
 * to wait.  The guest implements them over the kernel (clock.c: the
 * wall-clock time the kernel read from the RTC at boot plus the time CSR,
 * and the sleep system call); host programs over the host's clock
 * (clock_host.c).  Times are nanoseconds since 1970-01-01 00:00 UTC.
 */
#ifndef LIBOS_CLOCK_H
#define LIBOS_CLOCK_H

#include <stdint.h>

uint64_t libos_time_ns(void);
void     libos_sleep_ns(uint64_t ns);

#endif
