/*
 * uart.h - the NS16550A serial port (QEMU virt's, a PC's COM1): the system console.
 */
#ifndef UART_H
#define UART_H

#include <stdint.h>

void uart_init(uint64_t base);
void uart_enable_rx_interrupt(uint32_t irq);
void uart_putc(char c);
int  uart_getc(void);      /* a received byte, or -1 if none */
/* The console's input buffer was full, so received bytes were left in the
 * UART (and QEMU holds back the rest); take them now that there is room. */
void uart_rx_resume(void);

#endif
