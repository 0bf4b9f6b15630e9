/*
 * test_elf.c - host tests of the ELF checker the kernel runs on every
 * program it loads.  A real guest binary must pass; hand-broken headers must
 * each be refused; and a few hundred thousand random corruptions must never
 * crash the checker (this runs under AddressSanitizer) nor let through a
 * segment outside user space.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/elf.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/layout.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f) { perror(path); exit(2); }
	fseek(f, 0, SEEK_END);
	*size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(*size);
	if (fread(b, 1, *size, f) != *size) exit(2);
	fclose(f);
	return b;
}

static int parse(const uint8_t *img, size_t size, struct elf_info *info)
{
	return elf_parse(img, size, USER_BASE, UHEAP_LIMIT, info);
}

static void check_sane(const struct elf_info *info)
{
	for (int i = 0; i < info->nsegs; i++) {
		const struct elf_seg *s = &info->segs[i];
		CHECK(s->vaddr >= USER_BASE && s->vaddr + s->memsz <= UHEAP_LIMIT && s->filesz <= s->memsz,
		      "accepted segment %d outside user space", i);
	}
}

/* Apply one edit to a copy of the image and expect rejection. */
static void expect_reject(const uint8_t *img, size_t size, const char *what, void (*edit)(uint8_t *, size_t *))
{
	uint8_t *copy = malloc(size);
	memcpy(copy, img, size);
	size_t sz = size;
	edit(copy, &sz);
	struct elf_info info;
	CHECK(parse(copy, sz, &info) == K_E_NOEXEC, "accepted: %s", what);
	free(copy);
}

static struct elf64_ehdr *eh(uint8_t *b) { return (struct elf64_ehdr *)b; }
static struct elf64_phdr *ph(uint8_t *b, int i) { return (struct elf64_phdr *)(b + eh(b)->phoff) + i; }
static int first_load(uint8_t *b)
{
	for (int i = 0; i < eh(b)->phnum; i++) if (ph(b, i)->type == PT_LOAD) return i;
	return 0;
}

static void e_magic(uint8_t *b, size_t *n)    { b[1] = 'X'; }
static void e_class(uint8_t *b, size_t *n)    { eh(b)->class = 1; }
static void e_machine(uint8_t *b, size_t *n)  { eh(b)->machine = 62; }
static void e_type(uint8_t *b, size_t *n)     { eh(b)->type = 3; }
static void e_trunc(uint8_t *b, size_t *n)    { *n = 40; }
static void e_phoff(uint8_t *b, size_t *n)    { eh(b)->phoff = ~0ull - 8; }
static void e_phnum(uint8_t *b, size_t *n)    { eh(b)->phnum = 0xffff; }
static void e_phent(uint8_t *b, size_t *n)    { eh(b)->phentsize = 32; }
static void e_entry(uint8_t *b, size_t *n)    { eh(b)->entry = 0x80200000; }
static void p_filesz(uint8_t *b, size_t *n)   { ph(b, first_load(b))->filesz = ph(b, first_load(b))->memsz + 1; }
static void p_offset(uint8_t *b, size_t *n)   { ph(b, first_load(b))->offset = ~0ull - 4096; }
static void p_kernel(uint8_t *b, size_t *n)   { ph(b, first_load(b))->vaddr = 0x80200000; ph(b, first_load(b))->offset = 0; }
static void p_wrap(uint8_t *b, size_t *n)     { ph(b, first_load(b))->memsz = ~0ull - 4096; }
static void p_noperm(uint8_t *b, size_t *n)   { ph(b, first_load(b))->flags = 0; }
static void p_misalign(uint8_t *b, size_t *n) { ph(b, first_load(b))->vaddr += 8; }
static void p_overlap(uint8_t *b, size_t *n)
{
	/* Make every loadable segment start at the first one's address. */
	int f = first_load(b);
	for (int i = 0; i < eh(b)->phnum; i++)
		if (ph(b, i)->type == PT_LOAD && i != f) {
			ph(b, i)->vaddr = ph(b, f)->vaddr;
			ph(b, i)->offset = ph(b, f)->offset;
		}
}

int main(int argc, char **argv)
{
	if (argc < 2) { fprintf(stderr, "usage: test_elf GUEST-BINARY\n"); return 2; }
	size_t size;
	uint8_t *img = slurp(argv[1], &size);
	struct elf_info info;
	CHECK(parse(img, size, &info) == 0, "a real guest binary was refused");
	CHECK(info.nsegs >= 2 && info.entry >= USER_BASE, "odd result for a real binary");
	check_sane(&info);

	expect_reject(img, size, "bad magic", e_magic);
	expect_reject(img, size, "32-bit class", e_class);
	expect_reject(img, size, "x86-64 machine", e_machine);
	expect_reject(img, size, "shared object", e_type);
	expect_reject(img, size, "truncated header", e_trunc);
	expect_reject(img, size, "program headers past the end", e_phoff);
	expect_reject(img, size, "absurd phnum", e_phnum);
	expect_reject(img, size, "wrong phentsize", e_phent);
	expect_reject(img, size, "entry in the kernel", e_entry);
	expect_reject(img, size, "filesz > memsz", p_filesz);
	expect_reject(img, size, "offset past the end", p_offset);
	expect_reject(img, size, "segment in kernel memory", p_kernel);
	expect_reject(img, size, "segment wrapping the address space", p_wrap);
	expect_reject(img, size, "segment without permissions", p_noperm);
	expect_reject(img, size, "vaddr and offset misaligned", p_misalign);
	expect_reject(img, size, "overlapping segments", p_overlap);

	/* Random corruption of the headers (where the interesting fields are). */
	srand(12345);
	uint8_t *copy = malloc(size);
	size_t hdr = 64 + 16 * sizeof(struct elf64_phdr);
	if (hdr > size) hdr = size;
	int accepted = 0;
	for (int iter = 0; iter < 200000; iter++) {
		memcpy(copy, img, size);
		int flips = 1 + rand() % 4;
		for (int k = 0; k < flips; k++) copy[rand() % hdr] = (uint8_t)rand();
		size_t sz = (rand() % 8 == 0) ? (size_t)rand() % size : size;
		if (parse(copy, sz, &info) == 0) { accepted++; check_sane(&info); }
	}
	printf("random corruptions: %d of 200000 still loadable, all within user space\n", accepted);
	free(copy);
	free(img);
	printf("%s\n", failures ? "FAILED" : "all ELF tests passed");
	return failures != 0;
}
