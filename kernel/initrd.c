/*
 * initrd.c - read the initial RAM disk QEMU loaded for us.  The image is
 * checked once at boot (every entry inside the image) so lookups can trust it.
 *
 * A process may also ask to see the whole image (SYS_initrd_map): it is then
 * mapped read-only at UINITRD in that process, and the library OS's initrd
 * file system shows its programs as the directory /bin (libos/initrdfs.c).
 * Only processes that ask pay for the mapping.
 */
#include "kernel/initrd.h"
#include "kernel/klib.h"
#include "kernel/proc.h"
#include "kernel/vm.h"
#include "kernel/syscall.h"
#include "kernel/uapi/initrd.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/layout.h"
#include "kernel/uapi/syscall.h"

static const uint8_t *image;
static size_t image_size;
static const struct initrd_entry *entries;
static uint32_t nentries;

void initrd_init(uint64_t start, uint64_t end)
{
	if (start == 0 || end <= start) panic("no initrd: boot with -initrd build/initrd.img");
	image = (const uint8_t *)start;
	image_size = end - start;
	const struct initrd_header *h = (const struct initrd_header *)image;
	if (image_size < sizeof *h || memcmp(h->magic, INITRD_MAGIC, 8) != 0)
		panic("initrd: bad magic");
	if (h->count > (image_size - sizeof *h) / sizeof(struct initrd_entry))
		panic("initrd: entry table larger than the image");
	entries = (const struct initrd_entry *)(image + sizeof *h);
	nentries = h->count;
	for (uint32_t i = 0; i < nentries; i++) {
		const struct initrd_entry *e = &entries[i];
		if (e->offset > image_size || e->size > image_size - e->offset ||
		    strnlen(e->name, INITRD_NAME_MAX) == INITRD_NAME_MAX)
			panic("initrd: entry %u is corrupt", i);
	}
}

int initrd_find(const char *path, const uint8_t **data, size_t *size)
{
	if (path[0] != '/') return K_E_NOENT;
	for (uint32_t i = 0; i < nentries; i++) {
		if (strcmp(entries[i].name, path + 1) == 0) {
			*data = image + entries[i].offset;
			*size = entries[i].size;
			return 0;
		}
	}
	return K_E_NOENT;
}

int initrd_count(void) { return (int)nentries; }

/* Map the image read-only at UINITRD (once per process); its address. */
static int64_t sys_initrd_map(struct proc *p, uint64_t a0, uint64_t a1, uint64_t a2,
			      uint64_t a3, uint64_t a4, uint64_t a5)
{
	uint64_t start = (uint64_t)image & ~(uint64_t)(PGSIZE - 1);
	uint64_t end = PGROUNDUP((uint64_t)image + image_size);
	if (end - start > UINITRD_SIZE) return K_E_NOMEM;
	if (uvm_translate(p->pagetable, UINITRD, false) == 0) {
		for (uint64_t a = start; a < end; a += PGSIZE) {
			int err = uvm_lend(p->pagetable, UINITRD + (a - start), a);
			if (err < 0) {
				for (uint64_t b = start; b < a; b += PGSIZE)
					uvm_unlend(p->pagetable, UINITRD + (b - start));
				return err;
			}
		}
	}
	return (int64_t)(UINITRD + ((uint64_t)image - start));
}

void initrd_syscall_init(void)
{
	syscall_register(SYS_initrd_map, sys_initrd_map, "initrd_map");
}
