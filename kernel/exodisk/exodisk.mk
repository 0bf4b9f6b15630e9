# exodisk.mk - build rules for kernel/exodisk/ (appends to KERNEL_SRCS, HOST_TESTS, HOST_TOOLS; see docs/architecture.md)
