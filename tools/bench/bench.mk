# bench.mk - `make bench`: thesis chapter 5 and Appendix A in the guest
# (apps/exobench), on the disk model and on virtio-blk, with a report
# beside the published numbers, and beside Debian's Linux 6.12 on the same
# machine (docs/linux-baseline.md).  docs/benchmarks.md says what runs.
#
#   make bench              the full suite and the Linux comparison (long:
#                           see docs/benchmarks.md), into results/
#                           (report.md, summary.csv, plots/)
#   make bench LINUX=0      without the Linux comparison (nothing to fetch)
#   make bench ARCH=x86_64  the suite on QEMU's PC, into results/x86_64, its
#                           report with RISC-V's results/ beside it
#   make bench QUICK=1      scaled down: a couple of minutes
#   make bench-linux        the Linux comparison alone, into results/linux/
#                           (QUICK=1 scales it down too)
#   make bench-check        what `make test` runs: QUICK=1 into
#                           $(BUILD)/bench-quick, one line per boot, then
#                           checks that every table cell is there and well
#                           formed (never the timings themselves); the Linux
#                           comparison's quick round too when its packages
#                           are cached or can be fetched, else one SKIP line
#                           (and then a tiny `make manywall`: 2,000 files)
#   make manywall           the many-files curve in elapsed time, unixfs
#                           beside ext4 (tools/bench/manywall.py; long:
#                           MANYWALL_ARGS='--files 1000000 --rounds 1'),
#                           into $(BUILD)/manywall
#
# BENCH_ARGS passes more to tools/bench/run.py, e.g.
# BENCH_ARGS='--platforms model --only ddio'.

include tools/linux/linux.mk

# ARCH=x86_64 runs the same suite on QEMU's PC (the x86_64-* platforms of
# tools/bench/suite.py) into results/x86_64, without the Linux comparison
# (its guest is Debian's riscv64 kernel); the report puts RISC-V's results/
# beside it when they are there.
ifeq ($(ARCH),x86_64)
BENCH_OUT ?= results/x86_64
LINUX ?= 0
BENCH_BESIDE := --beside results
else
BENCH_OUT ?= results
LINUX ?= 1
BENCH_BESIDE :=
endif
BENCH_LINUX_OUT ?= results/linux
BENCH_PLATFORMS = --platforms $(if $(filter x86_64,$(ARCH)),x86_64-model$(COMMA)x86_64-virtio,model$(COMMA)virtio)
COMMA := ,
# The report draws with matplotlib; python.sh picks, when the recipe runs,
# an interpreter that has it (never at parse time: see the script).
BENCH_PY := tools/bench/python.sh
BENCH_NEEDS := deps bench-python $(KERNEL_ELF) $(KERNEL_IMAGE) $(INITRD)

.PHONY: bench bench-linux bench-check bench-python manywall
bench-python: deps
	@$(BENCH_PY) -c 'pass'

# The report is written even when a boot failed, so what did run shows;
# the exit status is still a failure.
bench: $(BENCH_NEEDS) $(if $(filter 0,$(LINUX)),,linux-guest)
	@BUILD=$(BUILD) $(BENCH_PY) tools/bench/run.py --out $(BENCH_OUT) $(BENCH_PLATFORMS) $(if $(QUICK),--quick) \
		$(if $(filter 0,$(LINUX)),--linux no) $(BENCH_ARGS); \
	s=$$?; $(BENCH_PY) tools/bench/report.py --results $(BENCH_OUT) $(BENCH_BESIDE) $(if $(QUICK),--check) || s=1; \
	exit $$s

bench-linux: $(BENCH_NEEDS) linux-guest
	@BUILD=$(BUILD) $(BENCH_PY) tools/bench/run.py --out $(BENCH_LINUX_OUT) --linux only $(if $(QUICK),--quick) \
		$(BENCH_ARGS); \
	s=$$?; $(BENCH_PY) tools/bench/report.py --results $(BENCH_LINUX_OUT) $(if $(QUICK),--check) || s=1; exit $$s

# The Linux part is tried, not required: without the packages (no network,
# no cache) it is skipped with one line saying why, and the rest still runs.
bench-check: $(BENCH_NEEDS)
	@rm -rf $(BUILD)/bench-quick; mkdir -p $(BUILD)/bench-quick; \
	linux="--linux no"; \
	if tools/deps.sh linux > $(BUILD)/bench-quick/linux-deps.log 2>&1 && \
	   $(MAKE) --no-print-directory -s linux-guest >> $(BUILD)/bench-quick/linux-deps.log 2>&1; then \
		linux=""; \
	else \
		echo "bench-check: SKIP the Linux comparison: $$(tail -n 1 $(BUILD)/bench-quick/linux-deps.log)" \
		     "(all of it in $(BUILD)/bench-quick/linux-deps.log)"; \
	fi; \
	BUILD=$(BUILD) $(BENCH_PY) tools/bench/run.py --out $(BUILD)/bench-quick --quick --quiet $$linux; \
	s=$$?; $(BENCH_PY) tools/bench/report.py --results $(BUILD)/bench-quick --check || s=1; \
	if [ -z "$$linux" ]; then \
		BUILD=$(BUILD) $(BENCH_PY) tools/bench/manywall.py --files 2000 --every 1000 --rounds 1 --size 1G \
			--out $(BUILD)/bench-quick/manywall > $(BUILD)/bench-quick/manywall.log 2>&1 && \
		echo "bench-check: manywall: 2,000 files on unixfs and ext4, the table and figure made" || \
		{ echo "bench-check: FAIL manywall (see $(BUILD)/bench-quick/manywall.log)"; s=1; }; \
	fi; exit $$s

# The many-files curve in elapsed time beside ext4 (docs/benchmarks.md,
# "Many files in elapsed time"): default 100,000 files, three rounds.
manywall: $(BENCH_NEEDS) linux-guest
	@BUILD=$(BUILD) $(BENCH_PY) tools/bench/manywall.py --out $(BUILD)/manywall $(MANYWALL_ARGS)

test: bench-check
