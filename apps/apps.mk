# apps.mk - guest programs.  Each apps/NAME.c becomes /bin/NAME in the initrd.
# To add a program: write apps/NAME.c, starting with the comment that
# documents it (tools/progdoc.c: "NAME.c - what it does." and a usage line),
# and add NAME to APPS below (programs built from several files add a rule of
# their own: see APP_OBJS_name).

APPS += sh echo true false spin faulttest spawntest disktest rawbench \
	ls cat cp mv rm mkdir rmdir stat df hexdump mkfs fsck fssuite capdemo fsbench fstest \
	cksum cptree pcwork lfsclean lfs-share fsshare deadhold cryptotest

APP_BINS = $(patsubst %,$(ABUILD)/bin/%,$(APPS))
INITRD := $(ABUILD)/initrd.img
INITRD_EXTRA := etc/motd=apps/etc/motd

.PHONY: apps initrd
apps: $(APP_BINS)
initrd: $(INITRD)

# A program's objects: its own .c, its usage (printed on -h) from that
# file's comment, plus any APP_OBJS_<name> it declares.
$(ABUILD)/bin/%: $(ABUILD)/u/apps/%.c.o $(ABUILD)/u/doc/%.o $$(APP_OBJS_$$*) $$(LIBOS_OBJS) $(USER_LDSCRIPT)
	@mkdir -p $(dir $@)
	$(CC) $(USER_LDFLAGS) -o $@ $< $(ABUILD)/u/doc/$*.o $(APP_OBJS_$*) $(LIBOS_OBJS) $(USER_LIBS)

# Every program's documentation comes from the comment at the top of its
# apps/NAME.c (tools/progdoc.c): the usage linked into it, and the table of
# all programs the shell's `help` prints.  A comment without them stops the
# build, so the help cannot go stale.  (The generated C is the same on every
# architecture; its objects are not.)
$(BUILD)/doc/%.c: apps/%.c $(BUILD)/tools/progdoc
	@mkdir -p $(dir $@)
	$(BUILD)/tools/progdoc usage $* $< > $@.tmp && mv $@.tmp $@
$(BUILD)/doc/progdocs.c: $$(patsubst %,apps/%.c,$$(APPS)) $(BUILD)/tools/progdoc
	@mkdir -p $(dir $@)
	$(BUILD)/tools/progdoc table $(foreach a,$(sort $(APPS)),$(a)=apps/$(a).c) > $@.tmp && mv $@.tmp $@
$(ABUILD)/u/doc/%.o: $(BUILD)/doc/%.c
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -c -o $@ $<

# The initrd's copies leave out the debugging information (a tenth of the
# size; symbols stay, for prof); $(ABUILD)/bin keeps it for gdb.
INITRD_BINS = $(patsubst %,$(ABUILD)/initrd-bin/%,$(APPS))
$(ABUILD)/initrd-bin/%: $(ABUILD)/bin/%
	@mkdir -p $(dir $@)
	$(OBJCOPY) --strip-debug $< $@

$(INITRD): $(BUILD)/tools/mkinitrd $$(INITRD_BINS) apps/etc/motd
	$(BUILD)/tools/mkinitrd $@ $(foreach b,$(APPS),bin/$(b)=$(ABUILD)/initrd-bin/$(b)) $(INITRD_EXTRA)

# The exodisk's guest tests and benchmarks (issue 4): each has its main in
# apps/NAME.c and the rest in apps/NAME/.
APPS += edtest
APP_OBJS_edtest := $(patsubst %.c,$(ABUILD)/u/%.c.o,$(wildcard apps/edtest/*.c))
APPS += exobench edscale
APP_OBJS_exobench := $(patsubst %.c,$(ABUILD)/u/%.c.o,$(wildcard apps/exobench/*.c)) \
                     $(ABUILD)/u/apps/rawlib.c.o

include apps/prof/prof.mk
include apps/sh/sh.mk
