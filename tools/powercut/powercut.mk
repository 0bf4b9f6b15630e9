# powercut.mk - power-cut testing of the real stack (docs/powercut.md):
# tools/powercut/pcdisk, the disk that loses its unflushed writes at a power
# cut (make qemu POWERCUT=N[:random[:SEED]]), and `make crash-test`, which
# cuts the power at every write and flush of apps/pcwork's workload on each
# library file system.  `make test` runs a sample of it
# (tests/qemu/cases_powercut.py) and the host test of pcdisk itself.

PCDISK := $(BUILD)/tools/pcdisk
HOST_TOOLS += $(PCDISK)
QEMU_DISK_INPUTS += $(PCDISK)

$(PCDISK): tools/powercut/pcdisk.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_TOOL_CFLAGS) -o $@ $<

HOST_TESTS += $(BUILD)/host/test_pcdisk
$(BUILD)/host/test_pcdisk: tests/crash/test_pcdisk.py $(PCDISK)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec %s %s\n' "$(abspath $<)" "$(abspath $(PCDISK))" > $@ && chmod +x $@

# Every cut point, both modes, every libFS: CRASH_ARGS='-t fatfs -v' and so on.
.PHONY: crash-test
crash-test: deps $(KERNEL_ELF) $(INITRD) $(HOST_TOOLS)
	@BUILD=$(BUILD) python3 tools/powercut/crashtest.py --all $(CRASH_ARGS)
