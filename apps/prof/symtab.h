/*
 * symtab.h - function symbols of an ELF-64 file, for turning sampled
 * addresses into names.  Portable: the guest's `prof` reads programs from the
 * initrd through a system call, tools/prof-report reads build/ on the host;
 * both hand symtab_load() a function that reads bytes at an offset.
 */
#ifndef PROF_SYMTAB_H
#define PROF_SYMTAB_H

#include <stdint.h>
#include <stddef.h>

struct sym {
	uint64_t addr, end;     /* [addr, end) */
	const char *name;
};

struct symtab {
	struct sym *syms;       /* sorted by address, non-overlapping */
	int nsyms;
	char *strs;             /* the ELF string table the names point into */
};

/* Read len bytes at off; returns the bytes read (short at the end) or < 0. */
typedef long (*symtab_read_fn)(void *ctx, uint64_t off, void *buf, size_t len);

/* Load the functions (and code labels) of an ELF file.  0, or -1 with
 * *why set to a reason ("no symbol table", "not an ELF-64 file", ...). */
int symtab_load(struct symtab *t, symtab_read_fn rd, void *ctx, const char **why);
void symtab_free(struct symtab *t);
/* The index of the symbol holding addr, or -1. */
int symtab_find(const struct symtab *t, uint64_t addr);

#endif
