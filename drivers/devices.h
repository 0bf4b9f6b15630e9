/*
 * devices.h - disk bring-up at boot (drivers/devices.c).
 *
 * kmain calls devices_init() once, after the process and system-call tables
 * exist.  It reads the disk boot options, attaches the units (virtio-blk
 * disks, the mechanical model or a RAM disk), exports each unit's queue page
 * at UDISKQ(unit), publishes the count in the kernel-information page, and
 * installs the raw benchmark path.  docs/blocklayer.md lists the options.
 */
#ifndef DEVICES_H
#define DEVICES_H

#include <stdbool.h>

void devices_init(void);

/* Whether disk completions are polled (boot option polled=1). */
bool devices_polled(void);

/* For kernel code that waits for a disk request outside any process (at
 * boot, before the scheduler runs): let one round of completions happen,
 * by polling or by idling with interrupts on until one arrives. */
void devices_wait(void);

#endif
