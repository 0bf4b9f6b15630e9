/*
 * syscall.h - system-call dispatch.  Handlers take the calling process and
 * its six raw argument registers and return the value for a0.
 */
#ifndef SYSCALL_H
#define SYSCALL_H

#include <stdint.h>
#include "kernel/proc.h"

typedef int64_t (*syscall_fn)(struct proc *p, uint64_t a0, uint64_t a1, uint64_t a2,
			      uint64_t a3, uint64_t a4, uint64_t a5);

void syscall(struct proc *p);
/* Subsystems outside kernel/ (drivers, the exodisk) install their calls at boot. */
void syscall_register(int num, syscall_fn fn, const char *name);

#endif
