# sh.mk - the shell (apps/sh.c and apps/sh/) and the small programs that
# make it useful (docs/shell.md).  Included from apps/apps.mk.

APP_OBJS_sh := $(patsubst %.c,$(ABUILD)/u/%.c.o,apps/sh/parse.c apps/sh/run.c apps/sh/edit.c) \
	$(ABUILD)/u/doc/progdocs.o

# The programs a shell needs (one file each unless said).
APPS += yes head tail wc grep sort tee touch more sleep date ps kill
APP_OBJS_head := $(ABUILD)/u/apps/textio.c.o
APP_OBJS_tail := $(ABUILD)/u/apps/textio.c.o
APP_OBJS_wc   := $(ABUILD)/u/apps/textio.c.o
APP_OBJS_grep := $(ABUILD)/u/apps/textio.c.o $(ABUILD)/u/apps/bre.c.o
APP_OBJS_sort := $(ABUILD)/u/apps/textio.c.o
APP_OBJS_more := $(ABUILD)/u/apps/textio.c.o
APP_OBJS_tee  := $(ABUILD)/u/apps/textio.c.o
APP_OBJS_date := $(ABUILD)/u/apps/textio.c.o
APPS += truncate du
APP_OBJS_truncate := $(ABUILD)/u/apps/textio.c.o
APP_OBJS_du   := $(ABUILD)/u/apps/textio.c.o

# grep's regular expressions against the host C library's (tests/host/apps/).
HOST_TESTS += $(BUILD)/host/apps/test_bre
$(BUILD)/host/apps/test_bre: tests/host/apps/test_bre.c apps/bre.c apps/bre.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ tests/host/apps/test_bre.c apps/bre.c

# The parser on the host: lines of known meaning, and random lines under
# AddressSanitizer (tests/host/apps/test_sh_parse.c).
HOST_TESTS += $(BUILD)/host/apps/test_sh_parse
$(BUILD)/host/apps/test_sh_parse: tests/host/apps/test_sh_parse.c apps/sh/parse.c apps/sh/sh.h
	@mkdir -p $(dir $@)
	$(HOSTCC) $(HOST_CFLAGS) $(HOST_SAN) -o $@ tests/host/apps/test_sh_parse.c apps/sh/parse.c
