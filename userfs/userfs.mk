# userfs.mk - build rules for userfs/ (appends to KERNEL_SRCS, HOST_TESTS, HOST_TOOLS; see docs/architecture.md)
