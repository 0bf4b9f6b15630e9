# linux.mk - the Linux guest of the comparison (docs/linux-baseline.md):
# Debian's riscv64 kernel and busybox (downloaded once by `tools/deps.sh
# linux` into LINUX_CACHE, outside the build directory, so `make clean`
# keeps them), and lxbench, our benchmark program for it, cross-compiled
# with Debian's riscv64-linux-gnu-gcc.  Included by tools/bench/bench.mk.
#
#   make linux-guest     fetch what is missing, build lxbench and the initramfs
#
# Every path below is fixed; nothing is looked up while make parses, so the
# first run on a fresh machine installs and builds in the right order.

LINUX_CACHE ?= $(HOME)/.cache/exodisk/linux
export LINUX_CACHE
LINUX_MANIFEST := $(LINUX_CACHE)/manifest.txt
LINUX_OUT      := $(BUILD)/linux
LXBENCH        := $(LINUX_OUT)/lxbench
LINUX_INITRD   := $(LINUX_OUT)/initramfs.cpio
LINUX_CC       := riscv64-linux-gnu-gcc
LXBENCH_SRCS   := tools/linux/lxbench.c apps/exobench/common.c apps/exobench/fswork.c
LXBENCH_HDRS   := apps/exobench/common.h apps/exobench/fswork.h apps/exobench/layout.h kernel/uapi/exodisk.h

.PHONY: linux-guest
linux-guest: $(LINUX_INITRD)

# deps.sh rewrites the manifest each time it has checked everything.
$(LINUX_MANIFEST): tools/deps.sh
	@tools/deps.sh linux || { echo "linux: the Linux comparison needs these packages;" \
		"make bench LINUX=0 runs everything else" >&2; exit 1; }

$(LXBENCH): $(LXBENCH_SRCS) $(LXBENCH_HDRS) | $(LINUX_MANIFEST)
	@mkdir -p $(dir $@)
	$(LINUX_CC) -static -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter -I. \
		-o $@ $(LXBENCH_SRCS)

$(LINUX_INITRD): $(LXBENCH) tools/linux/init tools/linux/initramfs.py $(LINUX_MANIFEST)
	@python3 tools/linux/initramfs.py --manifest $(LINUX_MANIFEST) --lxbench $(LXBENCH) \
		--init tools/linux/init --out $@ > $(LINUX_OUT)/initramfs.log
