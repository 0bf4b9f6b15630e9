# kernel.mk - build rules for the kernel image.

# The compiler flags, the linker script and the architecture's own sources
# come from kernel/arch/$(ARCH)/arch.mk; these are the portable ones.
KERNEL_ELF := $(ABUILD)/kernel.elf

KERNEL_SRCS += $(KERNEL_ARCH_SRCS) \
	kernel/main.c kernel/string.c kernel/mem.c kernel/printf.c \
	kernel/bootopts.c kernel/kalloc.c kernel/timer.c kernel/prof.c \
	kernel/console.c kernel/proc.c kernel/spawn.c kernel/initrd.c \
	kernel/kshare.c kernel/syscall.c kernel/sysproc.c kernel/elf.c kernel/pin.c kernel/power.c \
	kernel/sys_exodisk.c kernel/uvm.c kernel/handle.c kernel/pipe.c kernel/shseg.c drivers/uart.c

KERNEL_OBJS = $(patsubst %,$(ABUILD)/k/%.o,$(KERNEL_SRCS))

.PHONY: kernel
kernel: $(KERNEL_ELF) $(KERNEL_IMAGE)

$(ABUILD)/k/%.c.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(KERNEL_CFLAGS) -c -o $@ $<

$(ABUILD)/k/%.S.o: %.S | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(KERNEL_CFLAGS) -c -o $@ $<

$(KERNEL_ELF): $$(KERNEL_OBJS) $(KERNEL_LDSCRIPT)
	$(CC) $(KERNEL_LDFLAGS) -T $(KERNEL_LDSCRIPT) -o $@ $(KERNEL_OBJS) -lgcc
	$(OBJDUMP) -S $@ > $(ABUILD)/kernel.asm

# Host tests of the kernel's portable parts, on the RISC-V build's programs.
ifeq ($(ARCH),riscv)
HOST_TESTS += $(BUILD)/host/test_elf
$(BUILD)/host/test_elf: tests/host/kernel/test_elf.c kernel/elf.c kernel/elf.h $(BUILD)/bin/echo
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@.bin tests/host/kernel/test_elf.c kernel/elf.c
	printf '#!/bin/sh\nexec %s %s\n' "$(abspath $@.bin)" "$(abspath $(BUILD)/bin/echo)" > $@ && chmod +x $@

# The kernel's and the libOS's memcpy/memmove/memset/memcmp.  Without
# AddressSanitizer: reading a whole aligned word that holds the last byte
# asked for is the point of the code, and ASan would call it an overflow.
HOST_TESTS += $(BUILD)/host/test_mem
$(BUILD)/host/test_mem: tests/host/kernel/test_mem.c kernel/mem.c
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_CFLAGS) -fsanitize=undefined -fno-sanitize-recover=undefined -DMEM_PREFIX=km_ -o $@ $^

# The PC's CMOS clock decoder (kernel/cmos.c, for the x86-64 port) against
# the host's timegm and a simulated chip that rolls over mid-read.
HOST_TESTS += $(BUILD)/host/test_cmos
$(BUILD)/host/test_cmos: tests/host/kernel/test_cmos.c kernel/cmos.c
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ $^

# Every guest program's TLS segment starts where crt0 points tp.
HOST_TESTS += $(BUILD)/host/check_tls
$(BUILD)/host/check_tls: tests/host/kernel/check_tls.sh $$(APP_BINS)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec %s %s %s %s\n' "$(abspath $<)" "$(TOOLPREFIX)readelf" "$(TOOLPREFIX)nm" \
		"$(abspath $(APP_BINS))" > $@ && chmod +x $@
endif
