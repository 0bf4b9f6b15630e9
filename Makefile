# Makefile - builds the exodisk exokernel, its applications and host tools.
#
#   make qemu [CMD="prog args; prog2"] [DISK=virtio|scsi|model|ram] [DISKS=N]
#             [ARCH=riscv|x86_64]
#                       boot the kernel in QEMU (into the shell, or run CMD and power off)
#   make qemu-gdb       same, but wait for gdb (see .gdbinit.tmpl and README)
#   make test           host unit tests, then the QEMU integration suite on both architectures
#                       (tests/qemu/maketest.py: the few cases left out on x86-64 for time)
#   make qemu-test      the whole QEMU suite on ARCH (default riscv)
#   make host-test      host unit tests only
#   make all            build everything without running it
#
# Each directory contributes a fragment (kernel/kernel.mk, drivers/drivers.mk, ...)
# that appends to the variables below; this file holds only the shared rules.

BUILD      ?= build

# --- the architecture ------------------------------------------------------------
# riscv (QEMU virt, the default) or x86_64 (QEMU q35).  kernel/arch/ARCH/arch.mk
# sets the compiler, flags, architecture sources, C library and ABUILD, where
# this architecture's objects, programs, kernel and initrd go.
ARCH ?= riscv
ifeq ($(filter riscv x86_64,$(ARCH)),)
$(error ARCH=$(ARCH): give riscv or x86_64)
endif
include kernel/arch/$(ARCH)/arch.mk
export ARCH

# Everything that runs builds or QEMU first makes sure the tools are there
# (tools/deps.sh; for x86_64 also the C library it builds).
DEPS_STAMP := $(BUILD)/.deps-ok$(if $(filter base,$(DEPS_MODE)),,-$(DEPS_MODE))

# --- cross compiler (kernel and applications) ---------------------------------
CC      := $(TOOLPREFIX)gcc
LD      := $(TOOLPREFIX)ld
OBJDUMP := $(TOOLPREFIX)objdump
OBJCOPY := $(TOOLPREFIX)objcopy

COMMON_CFLAGS := -std=c11 -Wall -Werror -O2 -g -fno-omit-frame-pointer \
                 $(ARCHFLAGS) -ffunction-sections -fdata-sections -I.

# --- host compiler (unit tests and tools/) -----------------------------------
HOSTCC     ?= gcc
HOST_CFLAGS := -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -g -O1 \
               -fno-omit-frame-pointer -I. -DHOST_BUILD -D_DEFAULT_SOURCE
HOST_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=undefined
HOST_TOOL_CFLAGS := -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -g -O2 \
               -I. -DHOST_BUILD -D_DEFAULT_SOURCE

.SECONDEXPANSION:
# Keep objects made by chains of pattern rules.
.SECONDARY:

# Fragments append to these.
KERNEL_SRCS :=
APPS        :=
HOST_TESTS  :=
HOST_TOOLS  :=
QEMU_TESTS  :=

.PHONY: all qemu qemu-gdb test host-test qemu-test clean deps
all: deps kernel apps initrd host-tools

include kernel/kernel.mk
include drivers/drivers.mk
include kernel/exodisk/exodisk.mk
include libos/libos.mk
include apps/apps.mk
include userfs/userfs.mk
include tools/tools.mk
include tests/tests.mk

deps: $(DEPS_STAMP)
$(DEPS_STAMP): tools/deps.sh $(if $(filter x86_64,$(ARCH)),tools/newlib.sh)
	@tools/deps.sh $(filter-out base,$(DEPS_MODE))
	@mkdir -p $(BUILD) && touch $@

# --- running ------------------------------------------------------------------
# tools/run-qemu.sh assembles the QEMU command line; CMD, DISK, DISKS, MEM,
# BOOTARGS, CPU and GDB travel to it through the environment so that any quoting in
# CMD survives.  CMD is the guest shell's line, verbatim: make must not expand
# it (`make qemu CMD='false; echo $$?'` means the shell's $?, not make's), so
# it is replaced by its unexpanded text, which an exported simple variable
# keeps as it is.
ifdef CMD
override CMD := $(value CMD)
endif
export CMD DISK DISKS MEM BOOTARGS CPU
QEMU_INPUTS := $(KERNEL_ELF) $(KERNEL_IMAGE) $(INITRD)

qemu: deps $(QEMU_INPUTS) $(QEMU_DISK_INPUTS)
	@tools/run-qemu.sh

qemu-gdb: deps $(QEMU_INPUTS) $(QEMU_DISK_INPUTS) .gdbinit
	@GDB=1 tools/run-qemu.sh

# .gdbinit is made for the ARCH of the last `make qemu-gdb`.
.gdbinit: .gdbinit.tmpl FORCE
	sed -e "s|@BUILD@|$(abspath $(ABUILD))|g" \
	    -e "s|@GDBARCH@|$(if $(filter x86_64,$(ARCH)),i386:x86-64,riscv:rv64)|g" $< > $@
.PHONY: FORCE
FORCE:

# --- testing ------------------------------------------------------------------
# make test: the host tests, then the QEMU cases of both architectures in
# one pool of two QEMUs (longest first, so neither CPU idles at the end):
# every case on RISC-V, and on x86-64 all but the few that
# tests/qemu/maketest.py leaves out to keep the run short.  `make qemu-test`
# runs the whole suite on one architecture (each case says where it runs).
test: deps host-test qemu-test-both

host-test: deps $(HOST_TESTS)
	@tools/run-host-tests.sh $(HOST_TESTS)

# What the cases of ARCH boot, and the host tools they run on what the
# guest wrote (exotool, prof-report).
.PHONY: qemu-test-inputs qemu-test-both
qemu-test-inputs: deps $(QEMU_INPUTS) $(QEMU_DISK_INPUTS) $(HOST_TOOLS)

qemu-test: qemu-test-inputs
	@python3 tests/qemu/run.py --arch $(ARCH) $(QEMU_TEST_ARGS)

# The other architecture's inputs are made by a second make once ours are
# there, so the two never build the shared host tools and disk images at once.
OTHER_ARCH := $(if $(filter x86_64,$(ARCH)),riscv,x86_64)
qemu-test-both: qemu-test-inputs
	@$(MAKE) --no-print-directory ARCH=$(OTHER_ARCH) qemu-test-inputs
	@python3 tests/qemu/run.py --arch both --make-test $(QEMU_TEST_ARGS)

clean:
	rm -rf $(BUILD) .gdbinit

# Include dependency files written by -MMD.
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
