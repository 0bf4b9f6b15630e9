/*
 * sbi.h - calls into OpenSBI, the M-mode firmware beneath the kernel
 * (RISC-V SBI specification v1.0: TIME, SRST and HSM extensions).
 */
#ifndef SBI_H
#define SBI_H

#include <stdint.h>

struct sbiret { long error; long value; };

struct sbiret sbi_call(long ext, long fid, long a0, long a1, long a2);
void sbi_set_timer(uint64_t stime);
/* Power the machine off.  QEMU's exit status becomes `status` (see power.c). */
void sbi_shutdown(int status) __attribute__((noreturn));

#endif
