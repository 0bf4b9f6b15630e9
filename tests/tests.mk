# tests.mk - test programs.  Host unit tests register in HOST_TESTS from the
# fragment of the code they test; QEMU integration cases are Python files in
# tests/qemu/cases_*.py, run by tests/qemu/run.py (make qemu-test).
