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
LIBFS_SRCS := libos/edc.c libos/edc_err.c libos/vfs.c libos/libfs_types.c libos/capkey.c \
	libos/bcache.c $(UNIXFS_SRCS) userfs/kvfs/kvfs.c

# The guest links them into every program.
LIBOS_SRCS += $(LIBFS_SRCS) kernel/exodisk/siphash.c

# ---- host tests ------------------------------------------------------------
UFS_HOST_DIR := $(BUILD)/host/userfs
UFS_HOST_SRCS := $(LIBFS_SRCS) libos/edc_host.c libos/clock_host.c userfs/fssuite.c
UFS_HOST_OBJS := $(patsubst %.c,$(UFS_HOST_DIR)/obj/%.o,$(UFS_HOST_SRCS))
UFS_HDRS := $(wildcard libos/*.h userfs/*/*.h userfs/*.h tests/host/userfs/*.h) $(ED_HDRS)

$(UFS_HOST_OBJS): $(UFS_HOST_DIR)/obj/%.o: %.c $(UFS_HDRS)
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -c -o $@ $<

UFS_TESTS := test_edc test_unixfs test_unixfs_model test_fssuite

$(addprefix $(UFS_HOST_DIR)/,$(UFS_TESTS)): $(UFS_HOST_DIR)/%: tests/host/userfs/%.c $(UFS_HOST_OBJS) $(ED_TEST_OBJS) $(UFS_HDRS)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ $< $(UFS_HOST_OBJS) $(ED_TEST_OBJS)

HOST_TESTS += $(addprefix $(UFS_HOST_DIR)/,$(UFS_TESTS))
