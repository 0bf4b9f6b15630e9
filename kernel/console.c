/*
 * console.c - console output (to the UART, turning "\n" into "\r\n" for the
 * terminal) and a ring of input bytes filled by the UART interrupt.  A reader
 * with nothing to read sleeps on the ring (see sys_cons_read).
 *
 * One key is special: Ctrl-C.  The program it should stop may not be
 * reading the console at all (a CPU-bound loop), so nothing in user space
 * would see the byte in time, and left in the ring it would turn up in the
 * next line the shell reads.  So the kernel keeps it out of the ring: it
 * throws away the input not yet read (what was typed before the interrupt
 * is not meant for whatever runs next) and alerts the one process that has
 * claimed the key (the shell), whose blocking system call returns K_E_INTR.
 * Which processes to stop, and how, stays the shell's decision.  With no
 * claimant alive, Ctrl-C is an ordinary byte.
 */
#include "kernel/console.h"
#include "kernel/proc.h"
#include "drivers/uart.h"
#include "kernel/bootinfo.h"
#include "kernel/uapi/errno.h"

#define CTRL_C 3

/* The process alerted by Ctrl-C, and its pid (the slot may be reused). */
static struct proc *intr_owner;
static int intr_owner_pid;

#define INBUF 4096

static char inbuf[INBUF];
static unsigned in_head, in_tail;     /* read at head, write at tail */

void console_init(void)
{
	uart_enable_rx_interrupt(bootinfo.uart_irq);
}

void console_putc(char c)
{
	if (c == '\n') uart_putc('\r');
	uart_putc(c);
}

void console_write(const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) console_putc(buf[i]);
}

void console_input(char c)
{
	if (c == CTRL_C && proc_alive(intr_owner, intr_owner_pid)) {
		in_head = in_tail;
		uart_rx_resume();
		proc_alert(intr_owner);
		return;
	}
	if (in_tail - in_head == INBUF) return;   /* (the UART driver checks for room first) */
	inbuf[in_tail++ % INBUF] = c;
	wakeup(inbuf);
}

int console_input_room(void) { return in_tail - in_head < INBUF; }

int console_read_avail(char *buf, size_t n)
{
	size_t i = 0;
	for (; i < n && in_head != in_tail; i++) buf[i] = inbuf[in_head++ % INBUF];
	if (i > 0) uart_rx_resume();
	return (int)i;
}

/* The channel readers sleep on. */
void *console_chan(void) { return inbuf; }

int console_claim_intr(struct proc *p, bool force)
{
	if (!force && proc_alive(intr_owner, intr_owner_pid) && intr_owner != p) return K_E_BUSY;
	intr_owner = p;
	intr_owner_pid = p->pid;
	return 0;
}

void console_release_intr(struct proc *p)
{
	if (intr_owner == p && intr_owner_pid == p->pid) intr_owner = NULL;
}
