/*
 * console.c - console output (to the UART, turning "\n" into "\r\n" for the
 * terminal) and a ring of input bytes filled by the UART interrupt.  A reader
 * with nothing to read sleeps on the ring (see sys_cons_read).
 */
#include "kernel/console.h"
#include "kernel/proc.h"
#include "drivers/uart.h"
#include "kernel/bootinfo.h"

#define INBUF 512

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
	if (in_tail - in_head == INBUF) return;   /* full: drop, like a real UART overrun */
	inbuf[in_tail++ % INBUF] = c;
	wakeup(inbuf);
}

int console_read_avail(char *buf, size_t n)
{
	size_t i = 0;
	for (; i < n && in_head != in_tail; i++) buf[i] = inbuf[in_head++ % INBUF];
	return (int)i;
}

/* The channel readers sleep on. */
void *console_chan(void) { return inbuf; }
