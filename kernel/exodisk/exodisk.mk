# exodisk.mk - build rules for kernel/exodisk/ (appends to KERNEL_SRCS, HOST_TESTS, HOST_TOOLS; see docs/architecture.md)
#
# The exodisk core is portable C.  Here it is built three ways:
#   - for the host tests, with sanitizers (tests/host/exodisk/), linked with
#     the real block layer (drivers/blkqueue.c) and a host test disk;
#   - for tools/exotool and the recovery benchmark, optimised;
#   - for the kernel, behind the system-call layer kernel/sys_exodisk.c.

ED_CORE_SRCS := $(addprefix kernel/exodisk/, \
	siphash.c edcrypt.c ondisk.c xnode.c pvec.c bitmap.c freemap.c btree.c fmtree.c rangeset.c \
	cache.c iob.c refs.c objects.c commit.c home.c ckpt.c mount.c \
	extops.c xnops.c dataio.c unwritten.c zero.c proxy.c xnmap.c exodisk.c check.c)
ED_HDRS := $(wildcard kernel/exodisk/*.h) kernel/uapi/exodisk.h kernel/uapi/layout.h \
	drivers/blk.h kernel/uapi/blkexport.h $(wildcard tests/host/exodisk/*.h)
# What every host program using the core links: the core, the block layer,
# the host disk and the stand-in for the kernel.
ED_HOST_SRCS := $(ED_CORE_SRCS) drivers/blkqueue.c \
	tests/host/exodisk/hostdisk.c tests/host/exodisk/edharness.c

# ---- host tests ------------------------------------------------------------
ED_TEST_DIR  := $(BUILD)/host/exodisk
ED_TEST_OBJS := $(patsubst %.c,$(ED_TEST_DIR)/obj/%.o,$(ED_HOST_SRCS))
ED_TESTS     := test_ed_crypto test_ed_ops test_ed_random test_ed_crash test_ed_tamper test_ed_scale \
	test_ed_remanence test_ed_remcut

$(ED_TEST_OBJS): $(ED_TEST_DIR)/obj/%.o: %.c $(ED_HDRS)
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -c -o $@ $<

$(addprefix $(ED_TEST_DIR)/,$(ED_TESTS)): $(ED_TEST_DIR)/%: tests/host/exodisk/%.c $(ED_TEST_OBJS) $(ED_HDRS)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ $< $(ED_TEST_OBJS)

HOST_TESTS += $(addprefix $(ED_TEST_DIR)/,$(ED_TESTS))

# ---- host tools: exotool and the recovery benchmark -------------------------
# tools/exotool is a script that builds $(BUILD)/tools/exotool if needed and
# runs it; the program's source lives in tools/exotool-src/.
ED_TOOL_DIR  := $(BUILD)/tools/edobj
ED_TOOL_OBJS := $(patsubst %.c,$(ED_TOOL_DIR)/%.o,$(ED_HOST_SRCS))

$(ED_TOOL_OBJS): $(ED_TOOL_DIR)/%.o: %.c $(ED_HDRS)
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_TOOL_CFLAGS) -c -o $@ $<

$(BUILD)/tools/exotool: tools/exotool-src/exotool.c $(ED_TOOL_OBJS) $$(EXOTOOL_UFS_OBJS) $(ED_HDRS)
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_TOOL_CFLAGS) -o $@ $< $(ED_TOOL_OBJS) $(EXOTOOL_UFS_OBJS)

$(BUILD)/tools/ed_recovery_bench: tests/host/exodisk/bench_recovery.c drivers/diskmodel.c \
		$(ED_TOOL_OBJS) $(ED_HDRS) drivers/diskmodel.h
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_TOOL_CFLAGS) -o $@ $< drivers/diskmodel.c $(ED_TOOL_OBJS)

HOST_TOOLS += $(BUILD)/tools/exotool $(BUILD)/tools/ed_recovery_bench

# The tool end to end (a script: format, list, check good and damaged images).
$(ED_TEST_DIR)/test_exotool: tests/host/exodisk/test_exotool.sh $(BUILD)/tools/exotool
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s\n' "$(abspath tests/host/exodisk/test_exotool.sh)" \
		"$(abspath $(BUILD)/tools/exotool)" > $@ && chmod +x $@
HOST_TESTS += $(ED_TEST_DIR)/test_exotool

# Its errors in words on images it cannot use (a program that seals
# superblocks of another version, run over every subcommand).
$(ED_TEST_DIR)/test_exotool_errors_bin: tests/host/exodisk/test_exotool_errors.c $(ED_TEST_OBJS) $(ED_HDRS)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ $< $(ED_TEST_OBJS)
$(ED_TEST_DIR)/test_exotool_errors: $(ED_TEST_DIR)/test_exotool_errors_bin $(BUILD)/tools/exotool
	printf '#!/bin/sh\nexec %s %s\n' "$(abspath $<)" "$(abspath $(BUILD)/tools/exotool)" > $@ \
		&& chmod +x $@
HOST_TESTS += $(ED_TEST_DIR)/test_exotool_errors

# `make ed-crash-exhaustive`: the power-failure tests at full strength (make
# test runs a bounded sample of each): every request of a checkpoint and of
# a growing tree cut, with many landings of the volatile cache, bigger
# trees, ten times the random crash runs, and the remanence workloads cut at
# every request (200 seeds of test_ed_remcut).  About twenty minutes.
.PHONY: ed-crash-exhaustive
ed-crash-exhaustive: $(ED_TEST_DIR)/test_ed_scale $(ED_TEST_DIR)/test_ed_crash \
		$(ED_TEST_DIR)/test_ed_remanence $(ED_TEST_DIR)/test_ed_remcut
	$(ED_TEST_DIR)/test_ed_scale exhaustive
	$(ED_TEST_DIR)/test_ed_crash 400
	$(ED_TEST_DIR)/test_ed_remanence all
	$(ED_TEST_DIR)/test_ed_remcut 100 1
	$(ED_TEST_DIR)/test_ed_remcut 100 0 101

# `make ed-recovery-bench` prints recovery cost against disk size, number
# of bindings and log length (docs/exodisk.md quotes it).
.PHONY: ed-recovery-bench
ed-recovery-bench: $(BUILD)/tools/ed_recovery_bench
	@$(BUILD)/tools/ed_recovery_bench

# ---- the kernel: the same core, behind kernel/sys_exodisk.c -------------------
KERNEL_SRCS += $(ED_CORE_SRCS)
