/*
 * uart.c - driver for the NS16550A UART.  Output is polled (the console is
 * slow but simple, and panics must be able to print); input raises an
 * interrupt and the bytes go to the console's input buffer.
 */
#include "drivers/uart.h"
#include "kernel/console.h"
#include "kernel/trap.h"

#define RBR 0   /* receive buffer (read)       */
#define THR 0   /* transmit holding (write)    */
#define IER 1   /* interrupt enable            */
#define FCR 2   /* FIFO control (write)        */
#define LCR 3   /* line control                */
#define LSR 5   /* line status                 */
#define LSR_DATA_READY 0x01
#define LSR_THR_EMPTY  0x20

static volatile uint8_t *uart;

static inline uint8_t rd(int r)           { return uart[r]; }
static inline void    wr(int r, uint8_t v) { uart[r] = v; }

void uart_init(uint64_t base)
{
	uart = (volatile uint8_t *)base;
	wr(IER, 0);
	wr(LCR, 0x03);        /* 8 data bits, no parity, one stop bit */
	wr(FCR, 0x07);        /* enable and clear the FIFOs */
}

static void uart_interrupt(void *arg)
{
	(void)arg;
	int c;
	while ((c = uart_getc()) >= 0) console_input((char)c);
}

void uart_enable_rx_interrupt(uint32_t irq)
{
	plic_enable(irq, uart_interrupt, 0);
	wr(IER, 0x01);        /* interrupt when data arrives */
}

void uart_putc(char c)
{
	while ((rd(LSR) & LSR_THR_EMPTY) == 0)
		;
	wr(THR, (uint8_t)c);
}

int uart_getc(void)
{
	if (rd(LSR) & LSR_DATA_READY) return rd(RBR);
	return -1;
}
