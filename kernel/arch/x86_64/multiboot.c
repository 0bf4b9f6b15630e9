/*
 * multiboot.c - what the boot loader hands over (Multiboot specification
 * 0.6.96, section 3.3): the memory map, the command line (QEMU -append) and
 * the initrd (QEMU -initrd, loaded as the first module).  Everything needed
 * is copied into bootinfo before the memory it sits in can be reused.
 */
#include "kernel/arch/x86_64/arch.h"
#include "kernel/arch/x86_64/cpu.h"
#include "kernel/bootinfo.h"
#include "kernel/klib.h"

#define MB_BOOT_MAGIC  0x2badb002
#define MBI_CMDLINE    (1u << 2)
#define MBI_MODS       (1u << 3)
#define MBI_MMAP       (1u << 6)
#define MMAP_AVAILABLE 1

extern char _kernel_end[];

static uint32_t u32(uint64_t a) { uint32_t v; memcpy(&v, (const void *)a, 4); return v; }
static uint64_t u64(uint64_t a) { uint64_t v; memcpy(&v, (const void *)a, 8); return v; }

void multiboot_parse(uint32_t magic, uint64_t mbi)
{
	if (magic != MB_BOOT_MAGIC || mbi == 0)
		panic("not started by a Multiboot loader (magic %x): boot with qemu -kernel", magic);
	uint32_t flags = u32(mbi);

	if (flags & MBI_CMDLINE) {
		/* QEMU's loader puts the kernel's file name first, then -append's
		 * text (as GRUB and the specification's "command line" do): the
		 * options start after the first word. */
		const char *s = (const char *)(uint64_t)u32(mbi + 16);
		while (*s && *s != ' ') s++;
		while (*s == ' ') s++;
		strncpy_safe(bootinfo.bootargs, s, BOOTARGS_MAX);
	}

	if ((flags & MBI_MODS) && u32(mbi + 20) > 0) {
		uint64_t mod = u32(mbi + 24);
		bootinfo.initrd_start = u32(mod);
		bootinfo.initrd_end = u32(mod + 4);
	}

	/* RAM: the available region the kernel was loaded into. */
	if (!(flags & MBI_MMAP))
		panic("the boot loader gave no memory map");
	uint64_t at = u32(mbi + 48), end = at + u32(mbi + 44);
	uint64_t kernel = (uint64_t)_kernel_end;
	while (at + 24 <= end) {
		uint32_t size = u32(at);
		uint64_t base = u64(at + 4), len = u64(at + 12);
		uint32_t type = u32(at + 20);
		if (type == MMAP_AVAILABLE && base <= kernel && kernel < base + len) {
			bootinfo.ram_base = base;
			bootinfo.ram_size = len;
		}
		at += (uint64_t)size + 4;
	}
	if (bootinfo.ram_size == 0)
		panic("the memory map has no RAM around the kernel");
}
