# bench.mk - `make bench`: thesis chapter 5 and Appendix A in the guest
# (apps/exobench), on the disk model and on virtio-blk, with a report
# beside the published numbers.  docs/benchmarks.md says what runs.
#
#   make bench              the full suite (long: see docs/benchmarks.md),
#                           into results/ (report.md, summary.csv, plots/)
#   make bench QUICK=1      scaled down: a few minutes
#   make bench-check        what `make test` runs: QUICK=1 into
#                           $(BUILD)/bench-quick, one line per boot, then
#                           checks that every table cell is there and well
#                           formed (never the timings themselves)
#
# BENCH_ARGS passes more to tools/bench/run.py, e.g.
# BENCH_ARGS='--platforms model --only ddio'.

BENCH_OUT ?= results
# The report draws with matplotlib; python.sh picks, when the recipe runs,
# an interpreter that has it (never at parse time: see the script).
BENCH_PY := tools/bench/python.sh

.PHONY: bench bench-check bench-python
bench-python: deps
	@$(BENCH_PY) -c 'pass'

# The report is written even when a boot failed, so what did run shows;
# the exit status is still a failure.
bench: deps bench-python $(KERNEL_ELF) $(INITRD)
	@BUILD=$(BUILD) $(BENCH_PY) tools/bench/run.py --out $(BENCH_OUT) $(if $(QUICK),--quick) $(BENCH_ARGS); \
	s=$$?; $(BENCH_PY) tools/bench/report.py --results $(BENCH_OUT) $(if $(QUICK),--check) || s=1; exit $$s

bench-check: deps bench-python $(KERNEL_ELF) $(INITRD)
	@rm -rf $(BUILD)/bench-quick
	@BUILD=$(BUILD) $(BENCH_PY) tools/bench/run.py --out $(BUILD)/bench-quick --quick --quiet; \
	s=$$?; $(BENCH_PY) tools/bench/report.py --results $(BUILD)/bench-quick --check || s=1; exit $$s

test: bench-check
