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
#include "kernel/uapi/proc.h"
#include "libos/arch.h"

/* Processes.  Results are pids or negative kernel error codes. */
int  exo_spawn(const char *path, char *const argv[], char *const envp[]);
/* The same, passing handles and choosing the process group (uapi/proc.h). */
int  exo_spawn_opts(const char *path, char *const argv[], char *const envp[],
                    const struct spawn_opts *opts);
int  exo_wait(int pid, int *status);            /* pid -1: any child */
/* options WAIT_NOHANG: 0 when children are still running. */
int  exo_wait_opts(int pid, int *status, int options);
void exo_yield(void);
int  exo_getpid(void);
int  exo_kill(int pid);                         /* status 137 */
/* target > 0 a process, < 0 a process group; it exits with 128 + why. */
int  exo_kill_why(int target, int why);
void exo_poweroff(int status) __attribute__((noreturn));
/* The exported process table (uapi/proc.h): KPROC_SLOTS entries. */
static inline const struct kproc *exo_procs(void) { return (const struct kproc *)UPROCS; }

/* Handles (uapi/proc.h): a pipe as two kernel handles, h[0] to read. */
int  exo_pipe(int h[2]);
int  exo_hclose(int h);
/* The console's interrupt key: claim it (force: from a live holder too). */
int  exo_claim_intr(int force);
/* Read raw bytes from the console (no line editing, no echo): blocks for
 * at least one; K_E_INTR when the interrupt key alerted us. */
long exo_cons_read(void *buf, unsigned long len);
/* The initrd, mapped read-only into this process on first use. */
const void *exo_initrd(void);

/* Time: the timebase (RISC-V's time CSR, x86-64's time-stamp counter), read
 * without a system call; kinfo->timebase_hz ticks per second.  The cycle
 * counter is RISC-V's cycle CSR; x86-64 has none for user mode, so there it
 * is the time-stamp counter too (libos/arch/ARCH/arch.h). */
static inline uint64_t exo_time(void) { return arch_time(); }
static inline uint64_t exo_cycles(void) { return arch_cycles(); }
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
