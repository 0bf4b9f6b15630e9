/*
 * elf.h - the parts of the ELF-64 format the program loader reads.
 */
#ifndef ELF_H
#define ELF_H

#include <stdint.h>

#define ELF_MAGIC   0x464C457Fu    /* "\x7fELF" little-endian */
#define ELFCLASS64  2
#define ELFDATA2LSB 1
#define ET_EXEC     2
#define EM_RISCV    243
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

#endif
