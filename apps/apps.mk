# apps.mk - build rules for apps/ (see docs/architecture.md)
