/*
 * mkinitrd.c - build the initial RAM disk the kernel loads programs from.
 *
 *   mkinitrd OUTPUT NAME=FILE...
 *
 * The format is described in kernel/uapi/initrd.h: a header, a table of
 * entries, and the files' bytes, each file aligned to 8 bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/uapi/initrd.h"

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "mkinitrd: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	exit(1);
}

static unsigned char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f) die("cannot open", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) die("cannot read", path);
	fclose(f);
	*size = (size_t)n;
	return buf;
}

int main(int argc, char **argv)
{
	if (argc < 3) die("usage: mkinitrd OUTPUT NAME=FILE...", NULL);
	int count = argc - 2;
	struct initrd_header h;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, INITRD_MAGIC, 8);
	h.count = (uint32_t)count;
	struct initrd_entry *e = calloc((size_t)count, sizeof *e);
	unsigned char **data = calloc((size_t)count, sizeof *data);
	if (!e || !data) die("out of memory", NULL);
	uint64_t off = sizeof h + (uint64_t)count * sizeof *e;
	for (int i = 0; i < count; i++) {
		char *spec = argv[i + 2], *eq = strchr(spec, '=');
		if (!eq) die("expected NAME=FILE", spec);
		*eq = 0;
		if (strlen(spec) >= INITRD_NAME_MAX) die("name too long", spec);
		strncpy(e[i].name, spec, INITRD_NAME_MAX - 1);
		size_t size;
		data[i] = slurp(eq + 1, &size);
		off = (off + 7) & ~7ull;
		e[i].offset = off;
		e[i].size = size;
		off += size;
	}
	FILE *out = fopen(argv[1], "wb");
	if (!out) die("cannot create", argv[1]);
	fwrite(&h, sizeof h, 1, out);
	fwrite(e, sizeof *e, (size_t)count, out);
	for (int i = 0; i < count; i++) {
		long pos = ftell(out);
		while ((uint64_t)pos < e[i].offset) { fputc(0, out); pos++; }
		fwrite(data[i], 1, e[i].size, out);
	}
	if (fclose(out) != 0) die("write failed", argv[1]);
	return 0;
}
