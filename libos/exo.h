/*
 * exo.h - the library OS's interface to the kernel for applications:
 * processes, time, the kernel-information page and error messages.  The POSIX
 * layer (unistd.h, stdio.h through picolibc) sits on top of this.
 */
#ifndef LIBOS_EXO_H
#define LIBOS_EXO_H

#include <stdint.h>
#include "kernel/uapi/kinfo.h"
#include "kernel/uapi/layout.h"

/* Processes.  Results are pids or negative kernel error codes. */
int  exo_spawn(const char *path, char *const argv[], char *const envp[]);
int  exo_wait(int pid, int *status);            /* pid -1: any child */
void exo_yield(void);
int  exo_getpid(void);
int  exo_kill(int pid);
void exo_poweroff(int status) __attribute__((noreturn));

/* Time: the RISC-V time CSR, readable without a system call. */
static inline uint64_t exo_time(void)
{
	uint64_t t;
	__asm__ volatile("rdtime %0" : "=r"(t));
	return t;
}
static inline uint64_t exo_cycles(void)
{
	uint64_t t;
	__asm__ volatile("rdcycle %0" : "=r"(t));
	return t;
}
static inline const struct kinfo *exo_kinfo(void) { return (const struct kinfo *)UKINFO; }
uint64_t exo_time_to_ns(uint64_t ticks);        /* timebase ticks -> nanoseconds */
uint64_t exo_ns_to_time(uint64_t ns);
void     exo_sleep_ns(uint64_t ns);             /* blocks at least that long (tick granularity) */

/* A message for any kernel error code (K_E_*, BLK_E_*, ED_E_*). */
const char *exo_strerror(long code);
/* The POSIX errno closest to a kernel error code. */
int exo_errno(long code);

/* Look up a boot option in the kernel command line ("key=value" words). */
int exo_bootopt(const char *key, char *value, unsigned size);

#endif
