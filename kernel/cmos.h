/*
 * cmos.h - the PC's CMOS real-time clock (MC146818 and its descendants),
 * decoded portably: kernel/cmos.c.  The architecture supplies only the
 * register access (on a PC: outb(0x70, reg); inb(0x71)).
 */
#ifndef KERNEL_CMOS_H
#define KERNEL_CMOS_H

#include <stdint.h>

/* Registers (the index written to port 0x70). */
#define CMOS_SEC      0x00
#define CMOS_MIN      0x02
#define CMOS_HOUR     0x04
#define CMOS_DAY      0x07
#define CMOS_MONTH    0x08
#define CMOS_YEAR     0x09
#define CMOS_STATUS_A 0x0a    /* bit 7: an update is in progress */
#define CMOS_STATUS_B 0x0b    /* bit 2: binary (else BCD); bit 1: 24-hour (else 12) */
#define CMOS_CENTURY  0x32    /* where QEMU and most PCs keep it (ACPI FADT "century") */

#define CMOS_E_UPDATE  (-1)   /* the clock kept updating while we read it */
#define CMOS_E_INVALID (-2)   /* a field out of range: no clock, or not set */

/* The registers one reading needs, as the chip holds them. */
struct cmos_time {
	uint8_t sec, min, hour, day, month, year, century, status_b;
};

/* Seconds since 1970-01-01 00:00 UTC of a date (year 1970..9999). */
uint64_t cmos_days_to_secs(unsigned year, unsigned month, unsigned day,
                           unsigned hour, unsigned min, unsigned sec);

/* Decode one reading (BCD or binary, 12- or 24-hour, with or without a
 * century register) into *secs.  0, or CMOS_E_INVALID. */
int cmos_decode(const struct cmos_time *t, uint64_t *secs);

/* Read the clock through rd (register index -> value) the safe way: wait
 * out an update in progress and read until two readings agree, so a
 * seconds rollover between two registers cannot give a time off by a
 * minute or a year.  0, CMOS_E_UPDATE or CMOS_E_INVALID. */
int cmos_read(uint8_t (*rd)(uint8_t reg), uint64_t *secs);

#endif
