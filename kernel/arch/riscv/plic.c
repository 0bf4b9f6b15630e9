/*
 * plic.c - the platform-level interrupt controller: routes device
 * interrupts (UART, virtio) to this hart's supervisor context.
 */
#include "kernel/trap.h"
#include "kernel/klib.h"
#include "kernel/bootinfo.h"
#include "kernel/arch/riscv/port.h"

#define PLIC_MAX_IRQ 128
#define S_CONTEXT(hart) (2 * (hart) + 1)

static uint64_t plic;
static struct { void (*fn)(void *); void *arg; } handlers[PLIC_MAX_IRQ];

static volatile uint32_t *reg(uint64_t off) { return (volatile uint32_t *)(plic + off); }

void plic_init(uint64_t base)
{
	plic = base;
	int ctx = S_CONTEXT((int)bootinfo.hartid);
	*reg(0x200000 + ctx * 0x1000) = 0;      /* threshold: accept every priority */
}

void plic_enable(uint32_t irq, void (*fn)(void *), void *arg)
{
	if (irq == 0 || irq >= PLIC_MAX_IRQ) panic("plic_enable: bad irq %u", irq);
	handlers[irq].fn = fn;
	handlers[irq].arg = arg;
	int ctx = S_CONTEXT((int)bootinfo.hartid);
	*reg(4 * irq) = 1;                                        /* priority */
	*reg(0x2000 + ctx * 0x80 + (irq / 32) * 4) |= 1u << (irq % 32);
}

void plic_dispatch(void)
{
	int ctx = S_CONTEXT((int)bootinfo.hartid);
	volatile uint32_t *claim = reg(0x200004 + ctx * 0x1000);
	uint32_t irq;
	while ((irq = *claim) != 0) {
		if (irq < PLIC_MAX_IRQ && handlers[irq].fn) handlers[irq].fn(handlers[irq].arg);
		else kprintf("kernel: spurious interrupt %u\n", irq);
		*claim = irq;
	}
}
