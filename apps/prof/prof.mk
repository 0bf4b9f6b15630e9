# prof.mk - the profiler: the guest program `prof`, the host tool
# tools/prof-report (both built on apps/prof/report.c and symtab.c), the
# kernel's symbols in the initrd, and the host test (docs/profiling.md).
# Included from apps/apps.mk.

APPS += prof
APP_OBJS_prof := $(ABUILD)/u/apps/prof/report.c.o $(ABUILD)/u/apps/prof/symtab.c.o

# `prof` finds the kernel's symbols in the initrd as /etc/kernel.elf; the
# debugging information is stripped (the symbol table is all it reads).
KERNEL_SYMS := $(ABUILD)/kernel.syms.elf
INITRD_EXTRA += etc/kernel.elf=$(KERNEL_SYMS)
$(INITRD): $(KERNEL_SYMS)
$(KERNEL_SYMS): $(KERNEL_ELF)
	$(OBJCOPY) --strip-debug $< $@

PROF_REPORT_SRCS := tools/prof-report.c apps/prof/report.c apps/prof/symtab.c
PROF_REPORT_HDRS := apps/prof/report.h apps/prof/symtab.h kernel/uapi/prof.h kernel/uapi/kinfo.h

HOST_TOOLS += $(BUILD)/tools/prof-report
$(BUILD)/tools/prof-report: $(PROF_REPORT_SRCS) $(PROF_REPORT_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_TOOL_CFLAGS) -o $@ $(PROF_REPORT_SRCS)

# The symbolizer and the report against a real guest program and a made-up
# record (the RISC-V build's: the profiler samples only there so far).
ifeq ($(ARCH),riscv)
HOST_TESTS += $(BUILD)/host/test_prof
$(BUILD)/host/test_prof: tests/host/prof/test_prof.c apps/prof/report.c apps/prof/symtab.c $(PROF_REPORT_HDRS) \
		$(BUILD)/bin/spin $(KERNEL_ELF)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@.bin tests/host/prof/test_prof.c apps/prof/report.c apps/prof/symtab.c
	printf '#!/bin/sh\nexec %s %s %s %s\n' "$(abspath $@.bin)" "$(abspath $(BUILD)/bin/spin)" \
		"$(abspath $(KERNEL_ELF))" "$(TOOLPREFIX)nm" > $@ && chmod +x $@
endif
