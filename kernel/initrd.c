/*
 * initrd.c - read the initial RAM disk QEMU loaded for us.  The image is
 * checked once at boot (every entry inside the image) so lookups can trust it.
 */
#include "kernel/initrd.h"
#include "kernel/klib.h"
#include "kernel/uapi/initrd.h"
#include "kernel/uapi/errno.h"

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
