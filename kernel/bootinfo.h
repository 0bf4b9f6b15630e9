/*
 * bootinfo.h - what the kernel learned at boot from the firmware (the
 * flattened device tree OpenSBI hands over on RISC-V; the Multiboot
 * information and ACPI tables on x86-64): RAM, timer frequency, the initrd,
 * the devices, and the boot arguments (QEMU -append) with the options parsed
 * out of them.  The fields below `cmd` are RISC-V virt's devices.
 */
#ifndef BOOTINFO_H
#define BOOTINFO_H

#include <stdint.h>
#include <stdbool.h>

#define BOOTARGS_MAX  2048
#define MAX_VIRTIO    8

struct virtio_slot { uint64_t base; uint32_t irq; };

struct bootinfo {
	char     cpu[32];                  /* for the banner: "riscv64 hart 0", "x86-64" */
	uint64_t hartid;
	uint64_t ram_base, ram_size;
	uint64_t timebase_hz;
	uint64_t initrd_start, initrd_end;
	uint64_t test_finisher;            /* sifive,test0 MMIO address, or 0 */
	uint64_t plic_base, uart_base;
	uint64_t rtc_base;                 /* google,goldfish-rtc MMIO address, or 0 */
	uint32_t uart_irq;
	int      nvirtio;
	struct virtio_slot virtio[MAX_VIRTIO];
	char     bootargs[BOOTARGS_MAX];
	uint32_t kinfo_flags;              /* KINFO_F_* the hardware earns (RISC-V: KINFO_F_ZBB) */
	/* Parsed options (kernel/bootopts.c). */
	const char *cmd;                   /* cmd=...: shell command line, or NULL */
};

extern struct bootinfo bootinfo;

/* Look up a boot option "key=value" in bootargs; returns the value or NULL.
 * A bare "key" yields "".  cmd= always extends to the end of the line. */
const char *bootopt(const char *key);
bool bootopt_flag(const char *key);   /* key present and not "0"/"off"/"no" */
/* An option read later or by applications (looking one up declares it). */
void bootopt_declare(const char *key);
/* Report the options nobody declared or looked up (at the end of boot). */
void bootopt_check(void);

#endif
