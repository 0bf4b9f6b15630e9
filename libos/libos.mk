# libos.mk - the library OS linked into every application.
#
# The libOS objects are linked as objects, not as an archive, so that our
# definitions (sbrk, read, write, ...) win over picolibc's defaults no matter
# which library the linker scans first; --gc-sections drops what a program
# does not use.

# The C library (picolibc on RISC-V, newlib on x86-64), its glue and the
# architecture's crt0 and linker script come from kernel/arch/$(ARCH)/arch.mk.
# libos/include comes first so that its <sys/dirent.h> replaces the C
# library's (which refuses to compile: neither has directories of its own).
USER_CFLAGS := $(COMMON_CFLAGS) $(USER_ARCH_CFLAGS) -D_DEFAULT_SOURCE -MMD -MP -Ilibos/include
# The stream functions are wrapped so that exit flushes every open stream
# (libos/streams.c).
USER_LDFLAGS := $(USER_ARCH_LDFLAGS) -T $(USER_LDSCRIPT) -Wl,--gc-sections \
	-Wl,--wrap=fopen -Wl,--wrap=fdopen -Wl,--wrap=freopen -Wl,--wrap=fclose

# The guest-only part; userfs/userfs.mk adds the portable libOS layers and
# the library file systems (every program gets them: any program may find
# its output redirected to a file).
LIBOS_SRCS := $(LIBC_GLUE_SRCS) libos/start.c libos/fd.c libos/console.c \
	libos/exo.c libos/sbrk.c libos/malloc.c libos/kerror.c libos/posix.c libos/edc_sys.c libos/streams.c \
	libos/ddio.c libos/clock.c libos/prof.c libos/pipe.c \
	libos/initrdfs.c libos/devfs.c kernel/mem.c

LIBOS_OBJS = $(patsubst %,$(ABUILD)/u/%.o,$(LIBOS_SRCS))

$(ABUILD)/u/%.c.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -c -o $@ $<

$(ABUILD)/u/%.S.o: %.S | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -c -o $@ $<

# The heap (libos/malloc.c) on the host, its functions renamed so that the
# host's own stay (tests/host/libos/test_malloc.c).
MALLOC_TEST_RENAME := -D__PICOLIBC__ -Dsbrk=tm_sbrk $(foreach f,malloc free cfree realloc calloc \
	memalign aligned_alloc posix_memalign valloc pvalloc malloc_usable_size,-D$(f)=tm_$(f))
$(BUILD)/host/test_malloc: tests/host/libos/test_malloc.c libos/malloc.c
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) $(MALLOC_TEST_RENAME) -c -o $@.o libos/malloc.c
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ $< $@.o
HOST_TESTS += $(BUILD)/host/test_malloc

# CRC-32C (libos/crc32c.c, linked into every program with the libFSes:
# userfs/userfs.mk) against its published check values.
$(BUILD)/host/test_crc32c: tests/host/libos/test_crc32c.c libos/crc32c.c libos/crc32c.h
	@mkdir -p $(@D)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ $< libos/crc32c.c
HOST_TESTS += $(BUILD)/host/test_crc32c
