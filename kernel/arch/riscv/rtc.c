/*
 * rtc.c - the real-time clock: read once at boot, so applications know the
 * date.  QEMU's RISC-V virt machine has a Goldfish RTC (device tree:
 * "google,goldfish-rtc"), which counts nanoseconds since 1970 in two 32-bit
 * registers; reading TIME_LOW latches TIME_HIGH, so LOW is read first.
 *
 * The kernel keeps no clock of its own beyond the time CSR: it publishes the
 * wall-clock time at the moment kinfo->boot_time was taken, and the library
 * OS adds the time counter's progress since (libos/clock.c).  No system call
 * is needed to tell the time.  A PC's CMOS clock feeds the same field: its
 * port decodes it with kernel/cmos.c and calls rtc_set_wall.
 */
#include "kernel/bootinfo.h"
#include "kernel/kshare.h"
#include "kernel/vm.h"
#include "kernel/klib.h"
#include "kernel/arch/riscv/riscv.h"
#include "kernel/uapi/kinfo.h"
#include "kernel/rtc.h"

#define GOLDFISH_TIME_LOW  0x00
#define GOLDFISH_TIME_HIGH 0x04

static uint64_t ticks_to_ns(uint64_t t)
{
	uint64_t hz = bootinfo.timebase_hz;
	return (t / hz) * 1000000000ull + (t % hz) * 1000000000ull / hz;
}

/* The clock read now_ns (since 1970) just now: publish the date of boot_time. */
void rtc_set_wall(uint64_t now_ns)
{
	uint64_t now = rdtime();
	kinfo->wall_at_boot = now_ns - ticks_to_ns(now - kinfo->boot_time);
}

void rtc_init(void)
{
	if (bootinfo.rtc_base == 0) return;
	uint64_t page = bootinfo.rtc_base & ~(uint64_t)(PGSIZE - 1);
	if (kvm_map(page, page, PGSIZE, PTE_R | PTE_W) < 0) return;
	volatile uint32_t *rtc = (volatile uint32_t *)bootinfo.rtc_base;
	uint64_t lo = rtc[GOLDFISH_TIME_LOW / 4];
	uint64_t hi = rtc[GOLDFISH_TIME_HIGH / 4];
	rtc_set_wall(hi << 32 | lo);
}
