# drivers.mk - build rules for drivers/ (appends to KERNEL_SRCS, HOST_TESTS, HOST_TOOLS; see docs/architecture.md)
