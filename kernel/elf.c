/*
 * elf.c - validate an ELF executable (see elf.h).  Portable.
 *
 * All arithmetic on header fields is written so it cannot overflow: a
 * field is compared against what remains rather than added to something.
 * `hi` must be page-aligned, so a segment that ends below it can be rounded
 * up to a page boundary without passing it.
 */
#include "kernel/elf.h"
#include "kernel/uapi/errno.h"

#define PAGE 4096ull

int elf_parse(const uint8_t *img, size_t size, uint64_t lo, uint64_t hi, struct elf_info *out)
{
	struct elf64_ehdr eh;
	if ((hi & (PAGE - 1)) != 0 || size < sizeof eh) return K_E_NOEXEC;
	__builtin_memcpy(&eh, img, sizeof eh);
	if (eh.magic != ELF_MAGIC || eh.class != ELFCLASS64 || eh.data != ELFDATA2LSB ||
	    eh.type != ET_EXEC || eh.machine != ELF_MACHINE ||
	    eh.phentsize != sizeof(struct elf64_phdr) || eh.phnum == 0 ||
	    eh.phoff > size || eh.phnum > (size - eh.phoff) / sizeof(struct elf64_phdr))
		return K_E_NOEXEC;

	out->nsegs = 0;
	out->end = 0;
	for (int i = 0; i < eh.phnum; i++) {
		struct elf64_phdr ph;
		__builtin_memcpy(&ph, img + eh.phoff + (size_t)i * sizeof ph, sizeof ph);
		if (ph.type != PT_LOAD || ph.memsz == 0) continue;
		if (out->nsegs == ELF_MAX_SEGS) return K_E_NOEXEC;
		if (ph.filesz > ph.memsz || ph.offset > size || ph.filesz > size - ph.offset ||
		    ph.vaddr < lo || ph.vaddr >= hi || ph.memsz > hi - ph.vaddr ||
		    (ph.vaddr & (PAGE - 1)) != (ph.offset & (PAGE - 1)) ||
		    (ph.flags & (PF_R | PF_W | PF_X)) == 0)
			return K_E_NOEXEC;
		uint64_t start = ph.vaddr & ~(PAGE - 1);
		uint64_t end = (ph.vaddr + ph.memsz + PAGE - 1) & ~(PAGE - 1);
		/* Segments must not share pages: each page gets one set of permissions. */
		for (int k = 0; k < out->nsegs; k++) {
			struct elf_seg *o = &out->segs[k];
			uint64_t ostart = o->vaddr & ~(PAGE - 1);
			uint64_t oend = (o->vaddr + o->memsz + PAGE - 1) & ~(PAGE - 1);
			if (start < oend && ostart < end) return K_E_NOEXEC;
		}
		out->segs[out->nsegs++] = (struct elf_seg){
			.vaddr = ph.vaddr, .memsz = ph.memsz,
			.offset = ph.offset, .filesz = ph.filesz, .flags = ph.flags,
		};
		if (end > out->end) out->end = end;
	}
	if (out->nsegs == 0) return K_E_NOEXEC;
	/* The entry point must be inside an executable segment. */
	for (int k = 0; k < out->nsegs; k++) {
		struct elf_seg *s = &out->segs[k];
		if ((s->flags & PF_X) && eh.entry >= s->vaddr && eh.entry - s->vaddr < s->memsz) {
			out->entry = eh.entry;
			return 0;
		}
	}
	return K_E_NOEXEC;
}
