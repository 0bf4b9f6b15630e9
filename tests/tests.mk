# tests.mk - test programs.  Host unit tests register in HOST_TESTS from the
# fragment of the code they test; QEMU integration cases are Python files in
# tests/qemu/cases_*.py, run by tests/qemu/run.py (make qemu-test).

# The first run on a fresh machine: nothing decided while make parses may
# depend on what tools/deps.sh installs (tests/host/build/first_run.py).
HOST_TESTS += $(BUILD)/host/first_run
$(BUILD)/host/first_run: tests/host/build/first_run.py
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec %s %s\n' "$(abspath $<)" "$(abspath .)" > $@ && chmod +x $@
