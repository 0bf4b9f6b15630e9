# arch.mk - ARCH=riscv (the default): QEMU's virt machine over OpenSBI.
# Included by the top Makefile before any fragment; says which compiler,
# flags, sources, C library and boot image this architecture uses.
#
# The C library is picolibc, Debian's package for riscv64-unknown-elf
# (picolibc.specs points gcc at it); libos/stdio.c is its glue.

TOOLPREFIX ?= riscv64-unknown-elf-
# Objects, programs, the kernel and the initrd go straight into $(BUILD).
ABUILD := $(BUILD)

ARCHFLAGS := -march=rv64imafdc -mabi=lp64d -mcmodel=medany

# The kernel has no floating point and no libc; -mno-relax keeps gp free
# (it holds the user's value while in the kernel).
KERNEL_CFLAGS := -std=c11 -Wall -Werror -O2 -g -fno-omit-frame-pointer \
	-march=rv64imac_zicsr_zifencei -mabi=lp64 -mcmodel=medany -mno-relax \
	-ffreestanding -fno-builtin-printf -fno-common -fno-stack-protector -fno-pie -no-pie \
	-nostdlib -I. -MMD -MP
# Link with the plain -march the multilib list knows, so the soft-float libgcc is used.
KERNEL_LDFLAGS := -march=rv64imac -mabi=lp64 -mcmodel=medany -nostdlib -no-pie \
	-Wl,--gc-sections -Wl,--no-warn-rwx-segments
KERNEL_LDSCRIPT := kernel/arch/riscv/kernel.ld
KERNEL_ARCH_SRCS := $(addprefix kernel/arch/riscv/, entry.S trapentry.S swtch.S sbi.c fdt.c \
	vm.c trap.c plic.c rtc.c cpu.c boot.c prof_sample.c) drivers/virtio_mmio.c
# QEMU's -kernel takes the ELF as it is.
KERNEL_IMAGE = $(KERNEL_ELF)

USER_ARCH_CFLAGS := --specs=picolibc.specs
USER_ARCH_LDFLAGS := --specs=picolibc.specs $(ARCHFLAGS) -nostartfiles -static
USER_LIBS :=
USER_LDSCRIPT := libos/user.ld
LIBC_GLUE_SRCS := libos/crt0.S libos/stdio.c

DEPS_MODE := base
