/*
 * clock.c - DOS dates and times: a date is days since 1980 packed as
 * year-1980 (7 bits), month (4), day (5); a time is hour (5), minute (6)
 * and seconds/2 (5); creation times add hundredths (0..199).  FAT keeps
 * local time; this system has no time zone, so it is UTC.
 *
 * The clock is libos_time_ns() (libos/clock.h): the host's real time, or
 * in the guest the real-time clock once there is one.  A clock that says
 * a time before 1980 (a guest counting from boot) is taken as counting
 * from 1980-01-01, so times are at least in order within a boot.
 */
#include "userfs/fatfs/fat.h"
#include "libos/clock.h"

#define EPOCH1980 315532800ull      /* 1980-01-01T00:00:00Z in Unix seconds */

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t days_of(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* The civil date of a day since 1970-01-01. */
static void date_of(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

void fat_now(uint16_t *date, uint16_t *time, uint8_t *tenth)
{
	uint64_t ns = libos_time_ns();
	uint64_t s = ns / 1000000000ull;
	if (s < EPOCH1980)
		s += EPOCH1980;
	int64_t y;
	unsigned m, d;
	date_of((int64_t)(s / 86400), &y, &m, &d);
	if (y > 2107) {
		y = 2107;               /* the last year a DOS date holds */
		m = 12;
		d = 31;
	}
	unsigned sec = (unsigned)(s % 86400);
	*date = (uint16_t)((y - 1980) << 9 | m << 5 | d);
	*time = (uint16_t)((sec / 3600) << 11 | (sec / 60 % 60) << 5 | (sec % 60) / 2);
	*tenth = (uint8_t)((sec % 2) * 100 + (ns / 10000000ull) % 100);
}

uint64_t fat_dos_ns(uint16_t date, uint16_t time, uint8_t tenth)
{
	unsigned y = 1980 + (date >> 9), m = date >> 5 & 15, d = date & 31;
	if (m < 1 || m > 12 || d < 1)
		return 0;                 /* no date (or a damaged one) */
	unsigned h = time >> 11, mi = time >> 5 & 63, s = (time & 31) * 2u;
	int64_t days = days_of(y, m, d);
	uint64_t secs = (uint64_t)days * 86400 + h * 3600u + mi * 60u + s;
	return secs * 1000000000ull + (tenth < 200 ? tenth : 0) * 10000000ull;
}
