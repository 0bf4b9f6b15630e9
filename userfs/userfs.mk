# userfs.mk - build rules for userfs/ (the library file systems) and their
# host tests and tools (appends to HOST_TESTS, HOST_TOOLS; see docs/architecture.md).
#
# The libFSes and the libOS layers below them (exodisk client, mount table)
# are portable: the guest links them into every program (libos/libos.mk
# adds the guest objects), and here the same sources are built for the host,
# over the exodisk core through the host transport (libos/edc_host.c).

# Portable code shared by guest and host.
UNIXFS_SRCS := $(addprefix userfs/unixfs/, xops.c alloc.c inode.c map.c data.c dir.c sync.c \
	super.c ops.c fsck.c)
# (The guest also links kernel/exodisk/siphash.c, for capkey.c; host
# programs get it with the exodisk core.)
# The libFS kit (libos/kit/kit.h): one file per piece.
KIT_SRCS := $(addprefix libos/kit/, kit.c caps.c xn.c anchor.c lock.c alloc.c bytes.c flat.c commit.c)
LIBFS_SRCS := libos/edc.c libos/edc_err.c libos/vfs.c libos/libfs_types.c libos/capkey.c \
	libos/bcache.c $(KIT_SRCS) $(UNIXFS_SRCS) userfs/kvfs/kvfs.c

# The guest links them into every program.
LIBOS_SRCS += $(LIBFS_SRCS) kernel/exodisk/siphash.c

# Guest programs built from more than one file (apps/apps.mk).
APP_OBJS_cp = $(BUILD)/u/apps/copyfile.c.o
APP_OBJS_mv = $(BUILD)/u/apps/copyfile.c.o
APP_OBJS_fsbench = $(BUILD)/u/apps/rawlib.c.o
APP_OBJS_fssuite = $(BUILD)/u/userfs/fssuite.c.o

# ---- host tests ------------------------------------------------------------
UFS_HOST_DIR := $(BUILD)/host/userfs
UFS_HOST_SRCS := $(LIBFS_SRCS) libos/edc_host.c libos/clock_host.c userfs/fssuite.c
UFS_HOST_OBJS := $(patsubst %.c,$(UFS_HOST_DIR)/obj/%.o,$(UFS_HOST_SRCS))
UFS_HDRS := $(wildcard libos/*.h libos/kit/*.h userfs/*/*.h userfs/*.h tests/host/userfs/*.h) $(ED_HDRS)

$(UFS_HOST_OBJS): $(UFS_HOST_DIR)/obj/%.o: %.c $(UFS_HDRS)
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -c -o $@ $<

UFS_TESTS := test_edc test_kit test_unixfs test_unixfs_model test_fssuite

$(addprefix $(UFS_HOST_DIR)/,$(UFS_TESTS)): $(UFS_HOST_DIR)/%: tests/host/userfs/%.c $(UFS_HOST_OBJS) $(ED_TEST_OBJS) $(UFS_HDRS)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ $< $(UFS_HOST_OBJS) $(ED_TEST_OBJS)

HOST_TESTS += $(addprefix $(UFS_HOST_DIR)/,$(UFS_TESTS))

# exotool's unixfs subcommands, end to end (a script).
$(UFS_HOST_DIR)/test_exotool_ufs: tests/host/userfs/test_exotool_ufs.sh $(BUILD)/tools/exotool
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s\n' "$(abspath tests/host/userfs/test_exotool_ufs.sh)" \
		"$(abspath $(BUILD)/tools/exotool)" > $@ && chmod +x $@
HOST_TESTS += $(UFS_HOST_DIR)/test_exotool_ufs

# ---- tools/exotool's unixfs subcommands (tools/exotool-src/unixfs.c) --------
# The same sources again, optimised and without sanitizers, linked into
# exotool by kernel/exodisk/exodisk.mk.
EXOTOOL_UFS_SRCS := $(LIBFS_SRCS) libos/edc_host.c libos/clock_host.c tools/exotool-src/unixfs.c
EXOTOOL_UFS_OBJS := $(patsubst %.c,$(BUILD)/tools/ufsobj/%.o,$(EXOTOOL_UFS_SRCS))

$(EXOTOOL_UFS_OBJS): $(BUILD)/tools/ufsobj/%.o: %.c $(UFS_HDRS) tools/exotool-src/exotool_unixfs.h
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_TOOL_CFLAGS) -c -o $@ $<

# ---- the disk `make qemu` boots with ----------------------------------------
# build/disk0.img: an exodisk holding a unixfs (the development key) filled
# with userfs/rootfs and apps/etc.  Made only when missing, so what the
# guest writes stays from boot to boot (tools/qemu-disks.sh never replaces
# an existing image).  The QEMU tests make their own images.
ROOT_IMAGE := $(BUILD)/disk0.img
QEMU_DISK_INPUTS += $(ROOT_IMAGE)

$(ROOT_IMAGE): | $(BUILD)/tools/exotool
	rm -rf $(BUILD)/rootfs && mkdir -p $(BUILD)/rootfs/etc
	cp userfs/rootfs/README $(BUILD)/rootfs/
	cp apps/etc/* $(BUILD)/rootfs/etc/
	$(BUILD)/tools/exotool format $@.tmp -s 128M
	$(BUILD)/tools/exotool ufs-mkfs $@.tmp -d $(BUILD)/rootfs
	mv $@.tmp $@

# ---- line counts ---------------------------------------------------------------
# The kit's promise (docs/writing-a-libfs.md): a library file system in a
# few hundred lines.  make test prints the counts (lines of C that are not
# blank or comments, tools/loc.py) and fails when a limit is broken.
LOC_LIMITS := --max 200 userfs/kvfs userfs/unixfs libos/kit
.PHONY: loc
loc:
	@python3 tools/loc.py $(LOC_LIMITS)
host-test: loc
