# kernel.mk - build rules for kernel/ (see docs/architecture.md)
