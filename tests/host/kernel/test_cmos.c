/*
 * test_cmos.c - kernel/cmos.c, the PC's CMOS clock decoder: every day from
 * 1970 to 2199 at a few times against the host's timegm; the same moments
 * encoded as a chip would hold them (BCD and binary, 12- and 24-hour, with
 * and without a century register) decode back; out-of-range fields are
 * refused; and cmos_read over a simulated chip that is mid-update or rolls
 * over from 23:59:59 on New Year's Eve between two registers never returns
 * a torn time.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "kernel/cmos.h"

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { if (failures++ < 20) { \
	printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } } while (0)

static uint8_t bcd(unsigned v) { return (uint8_t)((v / 10) << 4 | v % 10); }

/* A moment as the chip would hold it in the given mode. */
static struct cmos_time encode(const struct tm *tm, int binary, int h24, int century)
{
	struct cmos_time t;
	unsigned year = (unsigned)tm->tm_year + 1900, hour = (unsigned)tm->tm_hour;
	uint8_t pm = 0;
	if (!h24) {
		pm = hour >= 12 ? 0x80 : 0;
		hour = hour % 12 == 0 ? 12 : hour % 12;
	}
	uint8_t (*f)(unsigned) = binary ? NULL : bcd;
#define ENC(v) (f ? f(v) : (uint8_t)(v))
	t.sec = ENC((unsigned)tm->tm_sec);
	t.min = ENC((unsigned)tm->tm_min);
	t.hour = (uint8_t)(ENC(hour) | pm);
	t.day = ENC((unsigned)tm->tm_mday);
	t.month = ENC((unsigned)tm->tm_mon + 1);
	t.year = ENC(year % 100);
	t.century = century ? ENC(year / 100) : 0;
#undef ENC
	t.status_b = (uint8_t)((binary ? 0x04 : 0) | (h24 ? 0x02 : 0));
	return t;
}

static void dates(void)
{
	static const int hms[][3] = { { 0, 0, 0 }, { 11, 59, 59 }, { 12, 0, 0 }, { 12, 30, 1 },
	                              { 23, 59, 59 } };
	int n = 0;
	for (time_t day = 0; ; day += 86400) {
		struct tm tm;
		gmtime_r(&day, &tm);
		if (tm.tm_year + 1900 > 2199) break;
		for (size_t i = 0; i < sizeof hms / sizeof hms[0]; i++) {
			tm.tm_hour = hms[i][0]; tm.tm_min = hms[i][1]; tm.tm_sec = hms[i][2];
			time_t want = timegm(&tm);
			uint64_t got = cmos_days_to_secs((unsigned)tm.tm_year + 1900, (unsigned)tm.tm_mon + 1,
			                                 (unsigned)tm.tm_mday, (unsigned)tm.tm_hour,
			                                 (unsigned)tm.tm_min, (unsigned)tm.tm_sec);
			CHECK(got == (uint64_t)want, "%04d-%02d-%02d %02d:%02d:%02d: %llu, timegm %lld",
			      tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			      tm.tm_sec, (unsigned long long)got, (long long)want);
			for (int mode = 0; mode < 8; mode++) {
				int binary = mode & 1, h24 = mode & 2, century = mode & 4;
				int year = tm.tm_year + 1900;
				/* Without a century register only 1970..2069 can be told. */
				if (!century && year > 2069) continue;
				struct cmos_time t = encode(&tm, binary, h24, century);
				uint64_t secs = 0;
				int e = cmos_decode(&t, &secs);
				CHECK(e == 0 && secs == (uint64_t)want, "mode %d %04d-%02d-%02d %02d:%02d: e=%d "
				      "%llu, want %lld", mode, year, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
				      tm.tm_min, e, (unsigned long long)secs, (long long)want);
				n++;
			}
		}
	}
	printf("cmos: %d encoded moments decode to timegm's seconds\n", n);
}

static void invalid(void)
{
	struct tm tm = { .tm_year = 2026 - 1900, .tm_mon = 10, .tm_mday = 24, .tm_hour = 1 };
	struct cmos_time good = encode(&tm, 0, 1, 1), t;
	uint64_t s;
	CHECK(cmos_decode(&good, &s) == 0, "a good reading refused");
	t = good; t.month = 0x13;          CHECK(cmos_decode(&t, &s) == CMOS_E_INVALID, "month 13");
	t = good; t.month = 0x00;          CHECK(cmos_decode(&t, &s) == CMOS_E_INVALID, "month 0");
	t = good; t.day = 0x31;            CHECK(cmos_decode(&t, &s) == CMOS_E_INVALID, "Nov 31");
	t = good; t.hour = 0x24;           CHECK(cmos_decode(&t, &s) == CMOS_E_INVALID, "hour 24");
	t = good; t.sec = 0x5a;            CHECK(cmos_decode(&t, &s) == CMOS_E_INVALID, "bad BCD");
	t = good; t.month = 0x02; t.day = 0x29; t.year = 0x25;
	CHECK(cmos_decode(&t, &s) == CMOS_E_INVALID, "Feb 29 2025");
	t.year = 0x24;                     CHECK(cmos_decode(&t, &s) == 0, "Feb 29 2024");
	t = good; t.status_b = 0; t.hour = 0x00;
	CHECK(cmos_decode(&t, &s) == CMOS_E_INVALID, "hour 0 in 12-hour form");
	/* No chip: the bus reads all ones. */
	memset(&t, 0xff, sizeof t);
	CHECK(cmos_decode(&t, &s) == CMOS_E_INVALID, "all ones");
}

/* A simulated chip: the registers of a moment, an update-in-progress flag
 * for the first few polls, and a rollover to the next second after a given
 * number of register reads. */
static struct cmos_time chip_now, chip_next;
static int chip_reads, chip_roll_at, chip_busy;

static uint8_t chip_rd(uint8_t reg)
{
	if (reg == CMOS_STATUS_A) {
		if (chip_busy > 0) { chip_busy--; return 0x80; }
		return 0;
	}
	if (++chip_reads == chip_roll_at)
		chip_now = chip_next;
	const struct cmos_time *t = &chip_now;
	switch (reg) {
	case CMOS_SEC: return t->sec;
	case CMOS_MIN: return t->min;
	case CMOS_HOUR: return t->hour;
	case CMOS_DAY: return t->day;
	case CMOS_MONTH: return t->month;
	case CMOS_YEAR: return t->year;
	case CMOS_CENTURY: return t->century;
	case CMOS_STATUS_B: return t->status_b;
	}
	return 0xff;
}

static void torn_reads(void)
{
	struct tm before = { .tm_year = 2026 - 1900, .tm_mon = 11, .tm_mday = 31, .tm_hour = 23,
	                     .tm_min = 59, .tm_sec = 59 };
	struct tm after = { .tm_year = 2027 - 1900, .tm_mon = 0, .tm_mday = 1 };
	time_t t0 = timegm(&before), t1 = timegm(&after);
	/* Roll over at every register read of the first two readings. */
	for (int roll = 1; roll <= 20; roll++) {
		chip_now = encode(&before, 0, 1, 1);
		chip_next = encode(&after, 0, 1, 1);
		chip_reads = 0; chip_roll_at = roll; chip_busy = roll % 3;
		uint64_t s = 0;
		int e = cmos_read(chip_rd, &s);
		CHECK(e == 0 && (s == (uint64_t)t0 || s == (uint64_t)t1),
		      "rollover at read %d: e=%d %llu (want %lld or %lld)", roll, e,
		      (unsigned long long)s, (long long)t0, (long long)t1);
		if (roll <= 8)
			CHECK(s == (uint64_t)t1, "rolled at read %d but read the old time", roll);
	}
	/* A chip stuck updating is an error, not a hang. */
	chip_busy = 2000000;
	uint64_t s;
	CHECK(cmos_read(chip_rd, &s) == CMOS_E_UPDATE, "a chip stuck updating");
	/* No chip at all. */
	chip_busy = 0;
	memset(&chip_now, 0xff, sizeof chip_now);
	chip_roll_at = 0;
	CHECK(cmos_read(chip_rd, &s) == CMOS_E_INVALID, "a missing chip");
}

int main(void)
{
	dates();
	invalid();
	torn_reads();
	if (failures) {
		printf("test_cmos: %d failures\n", failures);
		return 1;
	}
	printf("test_cmos: ok\n");
	return 0;
}
