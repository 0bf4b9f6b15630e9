# tools.mk - build rules for tools/ (see docs/architecture.md)
