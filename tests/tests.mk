# tests.mk - build rules for tests/ (see docs/architecture.md)
