# libos.mk - build rules for libos/ (see docs/architecture.md)
