/*
 * timer.c - the supervisor timer: a periodic tick (HZ per second) for
 * round-robin preemption and sys_sleep, plus one-shot events at arbitrary
 * times for drivers (the mechanical disk model completes requests this way).
 *
 * There is one hardware comparator (arch_timer_set: SBI on RISC-V, the HPET
 * on x86-64), so the timer
 * always arms it for the earliest of the next tick, the first pending event
 * and, while a profile is sampling, the next sample (kernel/prof.c).
 */
#include "kernel/trap.h"
#include "kernel/proc.h"
#include "kernel/klib.h"
#include "kernel/bootinfo.h"
#include "kernel/prof.h"

volatile uint64_t ticks;

#define MAX_POLL_HOOKS 4
static void (*poll_hooks[MAX_POLL_HOOKS])(void);
static int npoll_hooks;

void kpoll_register(void (*fn)(void))
{
	if (npoll_hooks == MAX_POLL_HOOKS) panic("kpoll_register: too many hooks");
	poll_hooks[npoll_hooks++] = fn;
}

void kpoll_run(void)
{
	for (int i = 0; i < npoll_hooks; i++) poll_hooks[i]();
}
static uint64_t tick_interval, next_tick;
static struct timer_event *events;      /* sorted by when */

uint64_t timer_deadline(void)
{
	uint64_t when = next_tick;
	if (events && events->when < when) when = events->when;
	return when;
}

/* The profiler's samples share the comparator (kernel/prof.c). */
static void arm(void)
{
	arch_timer_set(MIN(timer_deadline(), prof_next_sample()));
}

void timer_rearm(void)
{
	arm();
}

void timer_init(void)
{
	tick_interval = bootinfo.timebase_hz / HZ;
	next_tick = rdtime() + tick_interval;
	arm();
}

void timer_event_add(struct timer_event *e, uint64_t when)
{
	if (e->armed) timer_event_cancel(e);
	e->when = when;
	e->armed = 1;
	struct timer_event **pp = &events;
	while (*pp && (*pp)->when <= when) pp = &(*pp)->next;
	e->next = *pp;
	*pp = e;
	arm();
}

void timer_event_cancel(struct timer_event *e)
{
	for (struct timer_event **pp = &events; *pp; pp = &(*pp)->next)
		if (*pp == e) { *pp = e->next; break; }
	e->armed = 0;
	e->next = NULL;
}

void timer_interrupt(void)
{
	uint64_t now = rdtime();
	prof_tick(now);
	if (now >= next_tick) {
		ticks++;
		/* Skip ticks missed while the machine was busy rather than firing a burst. */
		next_tick += tick_interval;
		if (next_tick <= now) next_tick = now + tick_interval;
		if (myproc()) myproc()->ticks_used++;
		mycpu()->need_resched = true;
		wakeup((void *)&ticks);
		kpoll_run();
	}
	while (events && events->when <= now) {
		struct timer_event *e = events;
		events = e->next;
		e->next = NULL;
		e->armed = 0;
		e->fn(e);
		now = rdtime();
	}
	arm();
}
