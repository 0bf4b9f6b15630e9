/*
 * symtab.c - read the function symbols of an ELF-64 file (see symtab.h).
 *
 * Only the section headers, .symtab and its string table are read.  A
 * symbol is kept if it is defined in an executable section and is a function
 * or an untyped code label (assembly entry points such as trap_vector);
 * compiler-local labels (.L*) are not.  A symbol without a size ends where the
 * next one starts.
 */
#include <stdlib.h>
#include <string.h>
#include "apps/prof/symtab.h"
#include "kernel/elf.h"

#define SHT_SYMTAB     2
#define SHF_EXECINSTR  0x4
#define STT_NOTYPE     0
#define STT_FUNC       2

struct elf64_shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link, info;
	uint64_t addralign, entsize;
};

struct elf64_sym {
	uint32_t name;
	uint8_t  info, other;
	uint16_t shndx;
	uint64_t value, size;
};

static void *read_all(symtab_read_fn rd, void *ctx, uint64_t off, uint64_t len)
{
	if (len > (256u << 20)) return NULL;
	char *buf = malloc(len + 1);
	if (buf == NULL) return NULL;
	if (rd(ctx, off, buf, len) != (long)len) {
		free(buf);
		return NULL;
	}
	buf[len] = 0;
	return buf;
}

static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
	/* At one address, the symbol with a size (the function) first. */
	if ((x->end > x->addr) != (y->end > y->addr)) return x->end > x->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

int symtab_load(struct symtab *t, symtab_read_fn rd, void *ctx, const char **why)
{
	memset(t, 0, sizeof *t);
	struct elf64_ehdr eh;
	struct elf64_shdr *sh = NULL;
	struct elf64_sym *es = NULL;
	*why = "not an ELF-64 file";
	if (rd(ctx, 0, &eh, sizeof eh) != (long)sizeof eh || eh.magic != ELF_MAGIC || eh.class != ELFCLASS64 ||
	    eh.shentsize != sizeof(struct elf64_shdr) || eh.shnum == 0)
		return -1;
	*why = "cannot read the section headers";
	if ((sh = read_all(rd, ctx, eh.shoff, (uint64_t)eh.shnum * sizeof *sh)) == NULL) return -1;
	int symsec = -1;
	for (int i = 0; i < eh.shnum; i++)
		if (sh[i].type == SHT_SYMTAB) symsec = i;
	*why = "no symbol table (stripped?)";
	if (symsec < 0 || sh[symsec].link >= eh.shnum || sh[symsec].entsize != sizeof *es) goto fail;
	*why = "cannot read the symbol table";
	const struct elf64_shdr *ss = &sh[symsec], *st = &sh[ss->link];
	uint64_t n = ss->size / sizeof *es;
	if ((es = read_all(rd, ctx, ss->offset, n * sizeof *es)) == NULL ||
	    (t->strs = read_all(rd, ctx, st->offset, st->size)) == NULL ||
	    (t->syms = malloc((n ? n : 1) * sizeof *t->syms)) == NULL)
		goto fail;

	for (uint64_t i = 0; i < n; i++) {
		const struct elf64_sym *s = &es[i];
		int type = s->info & 0xf;
		if ((type != STT_FUNC && type != STT_NOTYPE) || s->shndx == 0 || s->shndx >= eh.shnum ||
		    !(sh[s->shndx].flags & SHF_EXECINSTR) || s->name >= st->size)
			continue;
		const char *name = t->strs + s->name;
		if (name[0] == 0 || name[0] == '$' || strncmp(name, ".L", 2) == 0) continue;
		struct sym *y = &t->syms[t->nsyms++];
		y->addr = s->value;
		y->end = s->value + s->size;
		y->name = name;
	}
	qsort(t->syms, (size_t)t->nsyms, sizeof *t->syms, by_addr);
	/* One symbol per address; each ends where the next begins, at the
	 * latest (libgcc's __riscv_save_N are entry points into one another), and
	 * a sizeless one ends there. */
	int m = 0;
	for (int i = 0; i < t->nsyms; i++) {
		if (m > 0 && t->syms[m - 1].addr == t->syms[i].addr) continue;
		t->syms[m++] = t->syms[i];
	}
	t->nsyms = m;
	for (int i = 0; i < m; i++) {
		uint64_t next = i + 1 < m ? t->syms[i + 1].addr : UINT64_MAX;
		if (t->syms[i].end <= t->syms[i].addr) t->syms[i].end = next != UINT64_MAX ? next : t->syms[i].addr + 1;
		if (t->syms[i].end > next) t->syms[i].end = next;
	}
	free(sh);
	free(es);
	*why = NULL;
	return 0;
fail:
	free(sh);
	free(es);
	symtab_free(t);
	return -1;
}

void symtab_free(struct symtab *t)
{
	free(t->syms);
	free(t->strs);
	memset(t, 0, sizeof *t);
}

int symtab_find(const struct symtab *t, uint64_t addr)
{
	int lo = 0, hi = t->nsyms - 1, best = -1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (t->syms[mid].addr <= addr) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	if (best >= 0 && addr < t->syms[best].end) return best;
	return -1;
}
