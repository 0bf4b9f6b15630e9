/*
 * rawio.h - the kernel side of the benchmark-only raw disk path
 * (kernel/uapi/rawio.h has the interface and the warning).
 */
#ifndef DRIVERS_RAWIO_H
#define DRIVERS_RAWIO_H

#include <stdbool.h>

/* Install SYS_raw_io.  Unless enabled it refuses everything with BLK_E_PERM
 * and takes no memory.  polled: completions are reaped by polling, so a
 * waiting process polls instead of sleeping.  Returns whether the path is
 * on (it stays off if its memory cannot be had). */
bool rawio_init(bool enabled, bool polled);

#endif
