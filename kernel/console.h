/*
 * console.h - the kernel console: output for kprintf and applications,
 * and a buffer of input bytes that applications read.  Line editing is not
 * done here: it belongs to the library OS (libos/console.c).
 */
#ifndef CONSOLE_H
#define CONSOLE_H

#include <stddef.h>
#include <stdbool.h>

void console_init(void);
void console_putc(char c);
void console_write(const char *buf, size_t n);
void console_input(char c);                 /* from the UART interrupt */
int  console_input_room(void);              /* may console_input take a byte? */
int  console_read_avail(char *buf, size_t n);   /* bytes now buffered, 0 if none */
void *console_chan(void);                   /* sleep here for input */
/* The interrupt key (Ctrl-C) alerts the process that claimed it
 * (uapi/proc.h CONS_CLAIM_INTR); force takes it from a live holder. */
struct proc;
int  console_claim_intr(struct proc *p, bool force);
void console_release_intr(struct proc *p);

#endif
