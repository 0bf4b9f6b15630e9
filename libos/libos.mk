# libos.mk - the library OS linked into every application.
#
# The libOS objects are linked as objects, not as an archive, so that our
# definitions (sbrk, read, write, ...) win over picolibc's defaults no matter
# which library the linker scans first; --gc-sections drops what a program
# does not use.

# libos/include comes first so that its <sys/dirent.h> replaces picolibc's
# (which refuses to compile: picolibc has no directories of its own).
USER_CFLAGS := $(COMMON_CFLAGS) --specs=picolibc.specs -D_DEFAULT_SOURCE -MMD -MP -Ilibos/include
# The stream functions are wrapped so that exit flushes every open stream
# (libos/streams.c).
USER_LDFLAGS := --specs=picolibc.specs $(ARCHFLAGS) -nostartfiles -static \
	-T libos/user.ld -Wl,--gc-sections \
	-Wl,--wrap=fopen -Wl,--wrap=fdopen -Wl,--wrap=freopen -Wl,--wrap=fclose

# The guest-only part; userfs/userfs.mk adds the portable libOS layers and
# the library file systems (every program gets them: any program may find
# its output redirected to a file).
LIBOS_SRCS := libos/crt0.S libos/start.c libos/fd.c libos/console.c libos/stdio.c \
	libos/exo.c libos/sbrk.c libos/kerror.c libos/posix.c libos/edc_sys.c libos/streams.c \
	libos/ddio.c libos/clock.c libos/prof.c libos/pipe.c \
	libos/initrdfs.c libos/devfs.c kernel/mem.c

LIBOS_OBJS = $(patsubst %,$(BUILD)/u/%.o,$(LIBOS_SRCS))

$(BUILD)/u/%.c.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -c -o $@ $<

$(BUILD)/u/%.S.o: %.S | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -c -o $@ $<
