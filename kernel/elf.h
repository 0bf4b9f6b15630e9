/*
 * elf.h - checking an ELF-64 executable before loading it.
 *
 * elf_parse() is portable (it builds on the host too, where tests feed it
 * mutated binaries): it reads only within the image, checks every field the
 * loader relies on, and returns the loadable segments in address order.
 */
#ifndef ELF_H
#define ELF_H

#include <stdint.h>
#include <stddef.h>

#define ELF_MAGIC   0x464C457Fu    /* "\x7fELF" little-endian */
#define ELFCLASS64  2
#define ELFDATA2LSB 1
#define ET_EXEC     2
#define EM_RISCV    243
#define EM_X86_64   62
/* The machine the kernel runs programs for.  Host builds (the tests feed
 * elf_parse the RISC-V build's programs) check for RISC-V. */
#if defined(__x86_64__) && !defined(HOST_BUILD)
#define ELF_MACHINE EM_X86_64
#else
#define ELF_MACHINE EM_RISCV
#endif
#define PT_LOAD     1
#define PF_X 1
#define PF_W 2
#define PF_R 4

struct elf64_ehdr {
	uint32_t magic;
	uint8_t  class, data, version, osabi, abiversion, pad[7];
	uint16_t type, machine;
	uint32_t version2;
	uint64_t entry, phoff, shoff;
	uint32_t flags;
	uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct elf64_phdr {
	uint32_t type, flags;
	uint64_t offset, vaddr, paddr, filesz, memsz, align;
};

#define ELF_MAX_SEGS 16

struct elf_seg {
	uint64_t vaddr, memsz;     /* [vaddr, vaddr+memsz) in the process */
	uint64_t offset, filesz;   /* bytes of the image copied to vaddr */
	uint32_t flags;            /* PF_R | PF_W | PF_X */
};

struct elf_info {
	uint64_t entry;
	uint64_t end;              /* page-rounded end of the highest segment */
	int nsegs;
	struct elf_seg segs[ELF_MAX_SEGS];
};

/* 0, or K_E_NOEXEC if the image is not a loadable RISC-V executable whose
 * segments lie, page-disjoint, in [lo, hi). */
int elf_parse(const uint8_t *img, size_t size, uint64_t lo, uint64_t hi, struct elf_info *out);

#endif
