/*
 * cmos.c - the PC's CMOS real-time clock, decoded.  The RISC-V virt
 * machine has a Goldfish RTC that counts nanoseconds
 * (kernel/arch/riscv/rtc.c); a PC has the MC146818's descendants, which keep the date as separate fields,
 * by default in BCD, maybe in 12-hour form, and change them one by one
 * once a second.  This file turns them into seconds since 1970, so a port
 * only has to read registers (rd) and hand the result to rtc_set_wall.
 *
 * Portable (it includes only <stdint.h>): the host test
 * tests/host/kernel/test_cmos.c checks it against the C library's timegm
 * and against a simulated chip that rolls over while it is being read.
 */
#include "kernel/cmos.h"

static unsigned from_bcd(uint8_t v) { return (v >> 4) * 10u + (v & 0x0f); }

static int bcd_ok(uint8_t v) { return (v >> 4) <= 9 && (v & 0x0f) <= 9; }

static int leap(unsigned y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* Leap years in 1..y. */
static uint64_t leaps_upto(unsigned y) { return y / 4 - y / 100 + y / 400; }

static unsigned month_days(unsigned year, unsigned month)
{
	static const uint8_t days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	return days[month - 1] + (month == 2 && leap(year));
}

uint64_t cmos_days_to_secs(unsigned year, unsigned month, unsigned day,
                           unsigned hour, unsigned min, unsigned sec)
{
	uint64_t days = 365ull * (year - 1970) + leaps_upto(year - 1) - leaps_upto(1969);
	for (unsigned m = 1; m < month; m++)
		days += month_days(year, m);
	days += day - 1;
	return ((days * 24 + hour) * 60 + min) * 60 + sec;
}

int cmos_decode(const struct cmos_time *t, uint64_t *secs)
{
	int binary = t->status_b & 0x04, h24 = t->status_b & 0x02;
	uint8_t hour = t->hour;
	int pm = 0;
	if (!h24) {                     /* 12-hour form: bit 7 says PM */
		pm = hour & 0x80;
		hour &= 0x7f;
	}
	const uint8_t raw[5] = { t->sec, t->min, hour, t->day, t->month };
	unsigned v[5];
	for (int i = 0; i < 5; i++) {
		if (!binary && !bcd_ok(raw[i])) return CMOS_E_INVALID;
		v[i] = binary ? raw[i] : from_bcd(raw[i]);
	}
	if (!binary && !bcd_ok(t->year)) return CMOS_E_INVALID;
	unsigned yy = binary ? t->year : from_bcd(t->year);
	unsigned cc = binary ? t->century : (bcd_ok(t->century) ? from_bcd(t->century) : 0);
	if (yy > 99) return CMOS_E_INVALID;
	/* A chip without a century register reads 0 or garbage there: take the
	 * two-digit year as 1970..2069 then. */
	unsigned year = cc >= 19 && cc <= 99 ? cc * 100 + yy : (yy >= 70 ? 1900 + yy : 2000 + yy);
	unsigned sec = v[0], min = v[1], hr = v[2], day = v[3], month = v[4];
	if (!h24) {                     /* 12 AM is 0:00, 12 PM is 12:00 */
		if (hr < 1 || hr > 12) return CMOS_E_INVALID;
		hr = hr % 12 + (pm ? 12 : 0);
	}
	if (year < 1970 || month < 1 || month > 12 || day < 1 || day > month_days(year, month) ||
	    hr > 23 || min > 59 || sec > 59)
		return CMOS_E_INVALID;
	*secs = cmos_days_to_secs(year, month, day, hr, min, sec);
	return 0;
}

/* One reading, after the chip says no update is in progress (an update
 * takes under 2 ms and starts once a second; the bound only protects us
 * from a chip that never clears the bit). */
static int read_once(uint8_t (*rd)(uint8_t reg), struct cmos_time *t)
{
	for (int spins = 0; rd(CMOS_STATUS_A) & 0x80; spins++)
		if (spins > 1000000) return CMOS_E_UPDATE;
	t->sec = rd(CMOS_SEC);
	t->min = rd(CMOS_MIN);
	t->hour = rd(CMOS_HOUR);
	t->day = rd(CMOS_DAY);
	t->month = rd(CMOS_MONTH);
	t->year = rd(CMOS_YEAR);
	t->century = rd(CMOS_CENTURY);
	t->status_b = rd(CMOS_STATUS_B);
	return 0;
}

static int same(const struct cmos_time *a, const struct cmos_time *b)
{
	return a->sec == b->sec && a->min == b->min && a->hour == b->hour && a->day == b->day &&
	       a->month == b->month && a->year == b->year && a->century == b->century &&
	       a->status_b == b->status_b;
}

int cmos_read(uint8_t (*rd)(uint8_t reg), uint64_t *secs)
{
	struct cmos_time a, b;
	if (read_once(rd, &a) < 0) return CMOS_E_UPDATE;
	for (int tries = 0; tries < 10; tries++) {
		if (read_once(rd, &b) < 0) return CMOS_E_UPDATE;
		if (same(&a, &b)) return cmos_decode(&b, secs);
		a = b;
	}
	return CMOS_E_UPDATE;
}
