# apps.mk - guest programs.  Each apps/NAME.c becomes /bin/NAME in the initrd.
# To add a program: write apps/NAME.c and add NAME to APPS below (programs
# built from several files add a rule of their own: see APP_OBJS_name).

APPS += sh echo true false spin faulttest spawntest disktest rawbench \
	ls cat cp mv rm mkdir rmdir stat df hexdump mkfs fsck fssuite capdemo fsbench fstest \
	cksum cptree

APP_BINS = $(patsubst %,$(BUILD)/bin/%,$(APPS))
INITRD := $(BUILD)/initrd.img
INITRD_EXTRA := etc/motd=apps/etc/motd

.PHONY: apps initrd
apps: $(APP_BINS)
initrd: $(INITRD)

# A program's objects: its own .c plus any APP_OBJS_<name> it declares.
$(BUILD)/bin/%: $(BUILD)/u/apps/%.c.o $$(APP_OBJS_$$*) $$(LIBOS_OBJS) libos/user.ld
	@mkdir -p $(dir $@)
	$(CC) $(USER_LDFLAGS) -o $@ $< $(APP_OBJS_$*) $(LIBOS_OBJS)

$(INITRD): $(BUILD)/tools/mkinitrd $$(APP_BINS) apps/etc/motd
	$(BUILD)/tools/mkinitrd $@ $(foreach b,$(APPS),bin/$(b)=$(BUILD)/bin/$(b)) $(INITRD_EXTRA)

# The exodisk's guest tests and benchmarks (issue 4): each has its main in
# apps/NAME.c and the rest in apps/NAME/.
APPS += edtest
APP_OBJS_edtest := $(patsubst %.c,$(BUILD)/u/%.c.o,$(wildcard apps/edtest/*.c))
APPS += exobench
APP_OBJS_exobench := $(patsubst %.c,$(BUILD)/u/%.c.o,$(wildcard apps/exobench/*.c)) \
                     $(BUILD)/u/apps/rawlib.c.o

include apps/prof/prof.mk
