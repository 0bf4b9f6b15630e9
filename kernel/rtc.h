/*
 * rtc.h - the wall clock, read once at boot (kernel/arch/riscv/rtc.c,
 * kernel/arch/x86_64/rtc.c).
 */
#ifndef KERNEL_RTC_H
#define KERNEL_RTC_H

#include <stdint.h>

void rtc_init(void);                  /* the Goldfish RTC named by the device tree, if any */
void rtc_set_wall(uint64_t now_ns);   /* a clock read now_ns since 1970 just now */

#endif
