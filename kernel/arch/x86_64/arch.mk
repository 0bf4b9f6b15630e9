# arch.mk - ARCH=x86_64: QEMU's q35 PC.  Included by the top Makefile before
# any fragment; says which compiler, flags, sources, C library and boot
# image this architecture uses (docs/kernel.md, "The x86-64 port").
#
# The compiler is the host's own gcc, freestanding.  The C library is
# newlib, built from Debian's newlib-source by tools/newlib.sh (run by
# `tools/deps.sh x86_64`) into $(NEWLIB); libos/libc_newlib.c is its glue.

TOOLPREFIX ?=
# Everything of this architecture's goes under $(BUILD)/x86_64; host tools
# and disk images stay in $(BUILD), shared with RISC-V.
ABUILD := $(BUILD)/x86_64

NEWLIB ?= $(HOME)/.cache/exodisk/newlib-3.3.0-x86_64

ARCHFLAGS := -m64 -march=x86-64

# The kernel: no floating point or vector registers (so no state of the
# process's is ever disturbed: kernel/arch/x86_64/trap.c), no red zone
# (interrupts push onto the kernel stack), linked at 2 MiB.
KERNEL_CFLAGS := -std=c11 -Wall -Werror -O2 -g -fno-omit-frame-pointer $(ARCHFLAGS) \
	-mgeneral-regs-only -mno-red-zone -mcmodel=small -fno-pie \
	-ffreestanding -fno-builtin-printf -fno-common -fno-stack-protector -fcf-protection=none \
	-fno-asynchronous-unwind-tables \
	-I. -MMD -MP
KERNEL_LDFLAGS := -nostdlib -static -no-pie -Wl,--gc-sections -Wl,--no-warn-rwx-segments \
	-Wl,-z,noexecstack -Wl,--build-id=none
KERNEL_LDSCRIPT := kernel/arch/x86_64/kernel.ld
KERNEL_ARCH_SRCS := $(addprefix kernel/arch/x86_64/, boot.S trapentry.S swtch.S start.c multiboot.c \
	acpi.c gdt.c trap.c lapic.c ioapic.c hpet.c pci.c vm.c power.c rtc.c prof_none.c) drivers/virtio_pci.c
# QEMU's Multiboot loader takes only 32-bit ELF files: the same kernel,
# relabelled (kernel/arch/x86_64/boot.S starts in 32-bit mode).
KERNEL_IMAGE = $(ABUILD)/kernel.mb

# Programs: position-independent code, since they live above 4 GiB.
USER_ARCH_CFLAGS := -nostdinc -isystem $(NEWLIB)/include -isystem $(NEWLIB)/gcc-include \
	-fpie -fno-stack-protector -fcf-protection=none \
	-fno-asynchronous-unwind-tables
# --no-relax: the linker must not turn a GOT load of an address into a
# 32-bit immediate, which cannot hold one above 4 GiB; the GOT stays.
USER_ARCH_LDFLAGS := -nostdlib -static -no-pie -Wl,-z,noexecstack -Wl,--build-id=none -Wl,--no-relax
USER_LIBS := $(NEWLIB)/lib/libc.a $(NEWLIB)/lib/libm.a -lgcc
USER_LDSCRIPT := libos/arch/x86_64/user.ld
LIBC_GLUE_SRCS := libos/arch/x86_64/crt0.S libos/libc_newlib.c

DEPS_MODE := x86_64

$(ABUILD)/kernel.mb: $(ABUILD)/kernel.elf
	$(OBJCOPY) -O elf32-i386 $< $@
