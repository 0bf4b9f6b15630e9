/*
 * uart.c - driver for the NS16550A UART.  Output is polled (the console is
 * slow but simple, and panics must be able to print); input raises an
 * interrupt and the bytes go to the console's input buffer.  When that
 * buffer is full the driver stops taking bytes and turns the receive
 * interrupt off: the bytes wait in the UART, and QEMU stops sending more,
 * so a paste larger than the buffer is delayed, never lost.  The console
 * resumes us when a reader has made room.  The registers are reached
 * through the architecture (memory-mapped on RISC-V virt, I/O ports on a
 * PC: uart_reg_read/uart_reg_write in kernel/arch.h).
 */
#include "drivers/uart.h"
#include "kernel/console.h"
#include "kernel/trap.h"
#include "kernel/arch.h"

#define RBR 0   /* receive buffer (read)       */
#define THR 0   /* transmit holding (write)    */
#define IER 1   /* interrupt enable            */
#define FCR 2   /* FIFO control (write)        */
#define LCR 3   /* line control                */
#define MCR 4   /* modem control               */
#define LSR 5   /* line status                 */
#define LSR_DATA_READY 0x01
#define LSR_THR_EMPTY  0x20

#define MCR_DTR_RTS_OUT2 0x0b   /* OUT2 gates the interrupt line on a PC */

static int rx_paused;

static uint64_t uart;

static inline uint8_t rd(int r)           { return uart_reg_read(uart, r); }
static inline void    wr(int r, uint8_t v) { uart_reg_write(uart, r, v); }

void uart_init(uint64_t base)
{
	uart = base;
	wr(IER, 0);
	wr(LCR, 0x03);        /* 8 data bits, no parity, one stop bit */
	wr(FCR, 0x07);        /* enable and clear the FIFOs */
}

/* Move received bytes to the console while it has room. */
static void drain(void)
{
	while (rd(LSR) & LSR_DATA_READY) {
		if (!console_input_room()) {
			rx_paused = 1;
			wr(IER, 0);
			return;
		}
		console_input((char)rd(RBR));
	}
}

static void uart_interrupt(void *arg)
{
	(void)arg;
	drain();
}

void uart_rx_resume(void)
{
	if (!rx_paused)
		return;
	rx_paused = 0;
	wr(IER, 0x01);
	drain();
}

void uart_enable_rx_interrupt(uint32_t irq)
{
	irq_enable(irq, uart_interrupt, 0);
	wr(MCR, MCR_DTR_RTS_OUT2);
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
