/*
 * modeldev.h - the mechanical disk model as a kernel disk unit: the
 * model-timed block device (modeldisk.[ch]) with its data in RAM, its
 * virtual clock tied to the RISC-V time counter, and completions delivered
 * by timer events (or by polling).  See docs/diskmodel.md, "In the kernel".
 */
#ifndef MODELDEV_H
#define MODELDEV_H

#include <stdbool.h>
#include "drivers/diskmodel.h"

/* Attach the model with parameters p as a block unit.  Returns the unit
 * number or a negative BLK_E_* error (BLK_E_INVAL if there is not enough
 * memory for its data). */
int  modeldev_attach(const struct dm_params *p, bool polled);
/* A one-line description of the model for the boot log. */
void modeldev_describe(char *buf, int size);

#endif
