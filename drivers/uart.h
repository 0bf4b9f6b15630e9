/*
 * uart.h - the NS16550A serial port of QEMU virt: the system console.
 */
#ifndef UART_H
#define UART_H

#include <stdint.h>

void uart_init(uint64_t base);
void uart_enable_rx_interrupt(uint32_t irq);
void uart_putc(char c);
int  uart_getc(void);      /* a received byte, or -1 if none */

#endif
