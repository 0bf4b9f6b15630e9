/*
 * rtc.c - the PC's real-time clock (the MC146818 in the CMOS, I/O ports
 * 0x70/0x71), read once at boot into kinfo->wall_at_boot, as
 * kernel/arch/riscv/rtc.c does with RISC-V virt's Goldfish clock; the library OS adds the time
 * counter's progress since (libos/clock.c).
 *
 * The clock keeps seconds, minutes, hours, day, month and year (two digits,
 * plus a century register that QEMU and ACPI's FADT put at 0x32), in BCD or
 * binary and 12- or 24-hour form as status register B says, and in UTC under
 * QEMU (-rtc base=utc, its default).  An update in progress makes the
 * registers inconsistent for a moment, so they are read until two reads
 * after the update flag clears agree.
 */
#include <stdint.h>
#include "kernel/arch.h"
#include "kernel/arch/x86_64/x86.h"
#include "kernel/bootinfo.h"
#include "kernel/klib.h"
#include "kernel/kshare.h"
#include "kernel/uapi/kinfo.h"

#define CMOS_INDEX 0x70
#define CMOS_DATA  0x71
#define NMI_OFF    0x80          /* keep NMIs masked while selecting a register */

enum { SEC = 0x00, MIN = 0x02, HOUR = 0x04, DAY = 0x07, MONTH = 0x08, YEAR = 0x09,
       STATUS_A = 0x0a, STATUS_B = 0x0b, CENTURY = 0x32 };
#define A_UPDATING 0x80
#define B_24HOUR   0x02
#define B_BINARY   0x04
#define HOUR_PM    0x80

static uint8_t cmos(uint8_t reg)
{
	outb(CMOS_INDEX, NMI_OFF | reg);
	return inb(CMOS_DATA);
}

struct clock { uint8_t r[6], century; };

static void read_clock(struct clock *c)
{
	for (int spin = 0; spin < 100000 && (cmos(STATUS_A) & A_UPDATING); spin++)
		;
	const uint8_t regs[6] = { SEC, MIN, HOUR, DAY, MONTH, YEAR };
	for (int i = 0; i < 6; i++) c->r[i] = cmos(regs[i]);
	c->century = cmos(CENTURY);
}

static unsigned from_bcd(uint8_t v, int binary) { return binary ? v : (v >> 4) * 10 + (v & 0x0f); }

/* Days from 1970-01-01 to year-month-day (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

void rtc_init(void)
{
	struct clock a, b;
	read_clock(&b);
	for (int tries = 0; tries < 10; tries++) {
		a = b;
		read_clock(&b);
		if (memcmp(&a, &b, sizeof a) == 0) break;
	}
	uint64_t now = rdtime();
	uint8_t status = cmos(STATUS_B);
	int bin = (status & B_BINARY) != 0;
	unsigned sec = from_bcd(b.r[0], bin), min = from_bcd(b.r[1], bin);
	unsigned hour = from_bcd(b.r[2] & (uint8_t)~HOUR_PM, bin);
	unsigned day = from_bcd(b.r[3], bin), month = from_bcd(b.r[4], bin), year = from_bcd(b.r[5], bin);
	unsigned century = b.century ? from_bcd(b.century, bin) : 20;
	if (!(status & B_24HOUR)) {
		hour %= 12;
		if (b.r[2] & HOUR_PM) hour += 12;
	}
	if (sec > 59 || min > 59 || hour > 23 || day < 1 || day > 31 || month < 1 || month > 12 ||
	    century < 19 || century > 99)
		return;                       /* no sensible clock: the date stays unknown (0) */
	int64_t days = days_from_civil((int64_t)century * 100 + year, month, day);
	if (days < 0) return;
	uint64_t secs = (uint64_t)days * 86400 + hour * 3600 + min * 60 + sec;
	uint64_t hz = bootinfo.timebase_hz;
	uint64_t since = now - kinfo->boot_time;
	uint64_t since_ns = (since / hz) * 1000000000ull + (since % hz) * 1000000000ull / hz;
	kinfo->wall_at_boot = secs * 1000000000ull - since_ns;
}
