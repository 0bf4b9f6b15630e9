# userfs.mk - build rules for userfs/ (the library file systems) and their
# host tests and tools (appends to HOST_TESTS, HOST_TOOLS; see docs/architecture.md).
#
# The libFSes and the libOS layers below them (exodisk client, mount table)
# are portable: the guest links them into every program (libos/libos.mk
# adds the guest objects), and here the same sources are built for the host,
# over the exodisk core through the host transport (libos/edc_host.c).

# ---- the library file systems: the one place a new one is named -------------
# Each NAME here is a directory userfs/NAME/ whose .c files are the libFS and
# which defines `const struct libfs_ops NAME_ops` (its operations, features,
# limits and mkfs).  Naming it here is all it takes: it is linked into every
# program and tool, mountable by name (libos/libfs_types.c gets the list as
# LIBFS_BUILTIN), made by `mkfs -t NAME`, checked by `fsck -t NAME`, run
# through the host fssuite and power-cut tests (test_fssuite) and the QEMU
# cases (tests/qemu/cases_fs.py reads this line).
LIBFS_TYPES := unixfs kvfs fatfs lfs flatfs
LIBFS_TYPE_SRCS := $(foreach t,$(LIBFS_TYPES),$(sort $(wildcard userfs/$(t)/*.c)))
# Stackable layers (libos/stack/, docs/stacking.md): each NAME is
# userfs/layers/NAME.c defining NAME_ops, mountable by name over another
# mount (`mount /s crypt over=/data,key=...`); not file systems, so not in
# the lists above.
LIBFS_LAYERS := null trace crypt compress ro
LAYER_SRCS := libos/stack/stack.c $(addprefix userfs/layers/,$(addsuffix .c,$(LIBFS_LAYERS))) \
	$(addprefix libos/stack/,sha256.c chacha.c chacha_zbb.c lz.c)
LIBFS_BUILTIN := -D'LIBFS_BUILTIN=$(foreach t,$(LIBFS_TYPES),LIBFS_TYPE($(t)))' \
	-D'LIBFS_LAYERS=$(foreach t,$(LIBFS_LAYERS),LIBFS_TYPE($(t)))'

# Portable code shared by guest and host.  The libFS kit (libos/kit/kit.h):
# one file per piece.  (The guest also links kernel/exodisk/siphash.c, for
# capkey.c; host programs get it with the exodisk core.)
KIT_SRCS := $(addprefix libos/kit/, kit.c caps.c xn.c anchor.c lock.c alloc.c bytes.c flat.c commit.c)
# The virtual volume (libos/vvol/vvol.h): allocate-on-write logical sectors.
VVOL_SRCS := libos/vvol/map.c libos/vvol/cache.c
LIBFS_SRCS := libos/edc.c libos/edc_err.c libos/vfs.c libos/libfs_types.c libos/libfs_check.c \
	libos/capkey.c libos/bcache.c libos/share.c libos/crc32c.c $(KIT_SRCS) $(VVOL_SRCS) $(LIBFS_TYPE_SRCS) $(LAYER_SRCS)

# The guest links them into every program, with the kernel's shared
# segments for sharing (host programs get share_host.c's), and the free
# memory the virtual volume sizes its cache by (host programs: a default).
LIBOS_SRCS += $(LIBFS_SRCS) kernel/exodisk/siphash.c libos/share_sys.c libos/vvol/ram_sys.c

# The list of types, for libfs_types.c in each of its three builds (guest,
# host tests, exotool).
$(ABUILD)/u/libos/libfs_types.c.o: USER_CFLAGS += $(LIBFS_BUILTIN)
$(ABUILD)/u/libos/libfs_types.c.o: userfs/userfs.mk
$(BUILD)/host/userfs/obj/libos/libfs_types.o: HOST_CFLAGS += $(LIBFS_BUILTIN)
$(BUILD)/host/userfs/obj/libos/libfs_types.o: userfs/userfs.mk
$(BUILD)/tools/ufsobj/libos/libfs_types.o: HOST_TOOL_CFLAGS += $(LIBFS_BUILTIN)
$(BUILD)/tools/ufsobj/libos/libfs_types.o: userfs/userfs.mk

# Guest programs built from more than one file (apps/apps.mk).
APP_OBJS_cp = $(ABUILD)/u/apps/copyfile.c.o
APP_OBJS_mv = $(ABUILD)/u/apps/copyfile.c.o
APP_OBJS_fsbench = $(ABUILD)/u/apps/rawlib.c.o
APP_OBJS_fssuite = $(ABUILD)/u/userfs/fssuite.c.o

# ---- host tests ------------------------------------------------------------
UFS_HOST_DIR := $(BUILD)/host/userfs
UFS_HOST_SRCS := $(LIBFS_SRCS) libos/edc_host.c libos/clock_host.c libos/share_host.c userfs/fssuite.c
UFS_HOST_OBJS := $(patsubst %.c,$(UFS_HOST_DIR)/obj/%.o,$(UFS_HOST_SRCS))
UFS_HDRS := $(wildcard libos/*.h libos/kit/*.h libos/vvol/*.h libos/stack/*.h userfs/*/*.h userfs/*.h tests/host/userfs/*.h) $(ED_HDRS)

$(UFS_HOST_OBJS): $(UFS_HOST_DIR)/obj/%.o: %.c $(UFS_HDRS)
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -c -o $@ $<

UFS_TESTS := test_edc test_bcache test_kit test_share test_unixfs test_unixfs_model test_fssuite test_vvol test_fatfs test_fat_fuzz test_fat_powercut test_fat_csum test_stack test_stack_cut test_crypto \
	test_lfs test_exhaust test_holes test_share_stress test_ufs_count test_fmfind test_damage_sweep test_upool

$(addprefix $(UFS_HOST_DIR)/,$(UFS_TESTS)): $(UFS_HOST_DIR)/%: tests/host/userfs/%.c $(UFS_HOST_OBJS) $(ED_TEST_OBJS) $(UFS_HDRS)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ $< $(UFS_HOST_OBJS) $(ED_TEST_OBJS)

HOST_TESTS += $(addprefix $(UFS_HOST_DIR)/,$(UFS_TESTS))

# exotool's unixfs subcommands, end to end (a script).
$(UFS_HOST_DIR)/test_exotool_ufs: tests/host/userfs/test_exotool_ufs.sh $(BUILD)/tools/exotool
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s\n' "$(abspath tests/host/userfs/test_exotool_ufs.sh)" \
		"$(abspath $(BUILD)/tools/exotool)" > $@ && chmod +x $@
HOST_TESTS += $(UFS_HOST_DIR)/test_exotool_ufs

# exotool's FAT subcommands against dosfstools and mtools (a script).
$(UFS_HOST_DIR)/test_fat_interop: tests/host/userfs/test_fat_interop.sh $(BUILD)/tools/exotool
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec sh %s %s\n' "$(abspath tests/host/userfs/test_fat_interop.sh)" \
		"$(abspath $(BUILD)/tools/exotool)" > $@ && chmod +x $@
HOST_TESTS += $(UFS_HOST_DIR)/test_fat_interop

# ---- tools/exotool's unixfs subcommands (tools/exotool-src/unixfs.c) --------
# The same sources again, optimised and without sanitizers, linked into
# exotool by kernel/exodisk/exodisk.mk.
EXOTOOL_UFS_SRCS := $(LIBFS_SRCS) libos/edc_host.c libos/clock_host.c libos/share_host.c \
	tools/exotool-src/unixfs.c \
	tools/exotool-src/fat.c tools/exotool-src/explain.c
EXOTOOL_UFS_OBJS := $(patsubst %.c,$(BUILD)/tools/ufsobj/%.o,$(EXOTOOL_UFS_SRCS))

$(EXOTOOL_UFS_OBJS): $(BUILD)/tools/ufsobj/%.o: %.c $(UFS_HDRS) tools/exotool-src/exotool_unixfs.h \
		tools/exotool-src/exotool_fat.h tools/exotool-src/exotool_explain.h
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

# ---- sharing: many seeds ------------------------------------------------------
# make test runs a few seeds of the sharing model test (tests/qemu/cases_share.py);
# this runs SEEDS of each file system (docs/sharing.md).
SEEDS ?= 20
.PHONY: share-test
share-test: deps $(KERNEL_ELF) $(INITRD)
	@SHARE_SEEDS=$(SEEDS) python3 tests/qemu/run.py -k share-many

# ---- damaged images: many ------------------------------------------------------
# make host-test runs a few damaged images of each file system
# (tests/host/userfs/test_damage_sweep.c); this runs DMG_COUNT per row from
# seed DMG_SEED and prints the table (docs/powercut.md, "Damaged images").
DMG_COUNT ?= 1500
DMG_SEED ?= 1
.PHONY: damage-sweep
damage-sweep: deps $(UFS_HOST_DIR)/test_damage_sweep
	@$(UFS_HOST_DIR)/test_damage_sweep $(DMG_COUNT) $(DMG_SEED) $(DMG_ROW)

# ---- line counts ---------------------------------------------------------------
# The kit's promise (docs/writing-a-libfs.md): a library file system in a
# few hundred lines.  make test prints the counts (lines of C that are not
# blank or comments, tools/loc.py) and fails when a limit is broken.
LOC_LIMITS := --max 200 userfs/kvfs --max 150 userfs/flatfs userfs/unixfs libos/kit --max 60 userfs/layers/null.c
.PHONY: loc
loc:
	@python3 tools/loc.py $(LOC_LIMITS)
host-test: loc

# ---- make ufsprof: unixfs's small-file benchmark on the host, counted -------
# (tests/host/userfs/ufsprof.c; a tool, not a test: run it, or run it under
# valgrind --tool=callgrind.)
UFSPROF_OBJS := $(filter-out %/exotool-src/unixfs.o,$(EXOTOOL_UFS_OBJS))
$(BUILD)/tools/ufsprof: tests/host/userfs/ufsprof.c $(UFSPROF_OBJS) $(ED_TOOL_OBJS) $(UFS_HDRS)
	$(HOSTCC) $(HOST_TOOL_CFLAGS) -o $@ $< $(UFSPROF_OBJS) $(ED_TOOL_OBJS)
ufsprof: $(BUILD)/tools/ufsprof
.PHONY: ufsprof
