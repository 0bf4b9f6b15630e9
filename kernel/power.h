/*
 * power.h - powering the machine off, after giving subsystems a chance to
 * leave their disks tidy.
 */
#ifndef POWER_H
#define POWER_H

void power_on_shutdown(void (*hook)(void));
void power_off(int status) __attribute__((noreturn));
/* The architecture's part: stop the machine now; QEMU exits with status
 * (RISC-V: the test finisher or SBI; x86-64: isa-debug-exit, see power.c there). */
void arch_poweroff(int status) __attribute__((noreturn));

#endif
