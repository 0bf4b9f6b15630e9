/*
 * hpet.c - time on x86-64: the HPET is the reference clock and the timer's
 * comparator; the time-stamp counter is the timebase everybody reads.
 *
 * rdtime() is the TSC, because it is cheap and user mode may read it
 * (applications time themselves with it, as RISC-V's do with rdtime).  Its
 * rate is not architectural, so it is measured at boot against the HPET,
 * whose period the HPET states itself (in femtoseconds): 20 ms of HPET
 * time, the TSC ticks counted across them, gives bootinfo.timebase_hz.
 *
 * kernel/timer.c has one comparator to arm (arch_timer_set: the next tick
 * or event, in TSC units).  HPET timer 0 in one-shot mode is it: the
 * deadline is converted to HPET ticks from "now" on both clocks.  Timer 0
 * runs in the HPET's legacy-replacement mode, so its interrupt is ISA IRQ 0,
 * which the IOAPIC routes (ioapic.c).  An HPET comparator fires when the
 * counter *equals* it, so a deadline already past when written would never
 * fire: the code checks after writing and then interrupts itself instead.
 */
#include "kernel/arch/x86_64/arch.h"
#include "kernel/arch/x86_64/cpu.h"
#include "kernel/bootinfo.h"
#include "kernel/klib.h"
#include "kernel/trap.h"

#define HPET_CAP       0x000
#define HPET_CONF      0x010
#define HPET_ISR       0x020
#define HPET_COUNTER   0x0f0
#define HPET_T0_CONF   0x100
#define HPET_T0_CMP    0x108

#define CAP_LEGACY     (1ull << 15)
#define CAP_64BIT      (1ull << 13)
#define CONF_ENABLE    (1ull << 0)
#define CONF_LEGACY    (1ull << 1)
#define T_INT_ENABLE   (1ull << 2)
#define T_PERIODIC     (1ull << 3)
#define T_32BIT        (1ull << 8)

#define FS_PER_S 1000000000000000ull
#define CALIBRATE_MS 20

static volatile uint64_t *hpet;
static uint64_t hpet_hz;           /* HPET counter ticks per second */

static uint64_t rd(uint32_t reg) { return hpet[reg / 8]; }
static void wr(uint32_t reg, uint64_t v) { hpet[reg / 8] = v; }

/* a * b / c without overflowing 64 bits in between. */
static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t c)
{
	return (uint64_t)((unsigned __int128)a * b / c);
}

/* Measure the TSC against the HPET.  Runs on the boot page tables (the HPET
 * is identity-mapped there) before anything needs the timebase. */
void hpet_calibrate(void)
{
	hpet = (volatile uint64_t *)plat.hpet;
	uint64_t cap = rd(HPET_CAP);
	uint64_t period_fs = cap >> 32;
	if (period_fs == 0 || period_fs > 100000000ull)    /* the spec's upper bound: 100 ns */
		panic("HPET at %p reports a period of %lu fs", (void *)plat.hpet, (unsigned long)period_fs);
	if (!(cap & CAP_64BIT))
		panic("HPET has only a 32-bit counter");
	hpet_hz = FS_PER_S / period_fs;
	wr(HPET_CONF, rd(HPET_CONF) | CONF_ENABLE);

	uint64_t span = hpet_hz * CALIBRATE_MS / 1000;
	uint64_t h0 = rd(HPET_COUNTER), t0 = rdtime();
	uint64_t h1;
	while ((h1 = rd(HPET_COUNTER)) - h0 < span)
		cpu_relax();
	uint64_t t1 = rdtime();
	bootinfo.timebase_hz = muldiv(t1 - t0, hpet_hz, h1 - h0);
	if (bootinfo.timebase_hz == 0)
		panic("the TSC does not count");
}

void hpet_init(void)
{
	hpet = (volatile uint64_t *)mmio_map(plat.hpet, 4096);
	uint64_t cap = rd(HPET_CAP);
	if (!(cap & CAP_LEGACY))
		panic("HPET cannot route timer 0 as IRQ 0 (no legacy replacement)");
	/* Timer 0: one-shot, 64-bit, edge-triggered, enabled; IRQ 0 in legacy mode. */
	uint64_t t = rd(HPET_T0_CONF);
	t &= ~(T_PERIODIC | T_32BIT);
	t |= T_INT_ENABLE;
	wr(HPET_T0_CONF, t);
	wr(HPET_T0_CMP, ~0ull);
	wr(HPET_CONF, rd(HPET_CONF) | CONF_ENABLE | CONF_LEGACY);
	ioapic_route(0, VEC_TIMER);
}

void arch_timer_set(uint64_t when)
{
	uint64_t now = rdtime(), h = rd(HPET_COUNTER);
	uint64_t delta = when > now ? when - now : 0;
	/* Round up: early would only cost a wasted interrupt, but why waste it. */
	uint64_t cmp = h + muldiv(delta, hpet_hz, bootinfo.timebase_hz) + 1;
	wr(HPET_T0_CMP, cmp);
	if (rd(HPET_COUNTER) >= cmp)
		lapic_self_ipi(VEC_TIMER);
}

void hpet_timer_interrupt(void)
{
	wr(HPET_ISR, 1);                     /* (needed only for level-triggered routing) */
	timer_interrupt();
}
