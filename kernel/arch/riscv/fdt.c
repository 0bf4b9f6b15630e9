/*
 * fdt.c - a minimal reader for the flattened device tree (devicetree spec
 * v0.4, chapter 5) that OpenSBI passes in a1.  It walks the structure block
 * once and keeps only what the kernel needs (see bootinfo.h).  The tree comes
 * from QEMU and OpenSBI, not from applications, but the reader still checks
 * every offset against the blob's size so a malformed tree stops the walk
 * instead of running off the end.
 */
#include "kernel/bootinfo.h"
#include "kernel/klib.h"
#include "kernel/uapi/kinfo.h"
#include "kernel/arch/riscv/port.h"

#define FDT_MAGIC      0xd00dfeed
#define FDT_BEGIN_NODE 1
#define FDT_END_NODE   2
#define FDT_PROP       3
#define FDT_NOP        4
#define FDT_END        9
#define MAX_DEPTH      16

static uint32_t be32(const void *p)
{
	const uint8_t *b = p;
	return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

static uint64_t read_cells(const uint8_t *p, int cells)
{
	uint64_t v = 0;
	for (int i = 0; i < cells; i++) v = (v << 32) | be32(p + 4 * i);
	return v;
}

/* A compatible property is a list of NUL-separated strings. */
static bool compat_has(const char *list, uint32_t len, const char *want)
{
	uint32_t i = 0;
	while (i < len) {
		const char *s = list + i;
		size_t n = strnlen(s, len - i);
		if (n == strlen(want) && memcmp(s, want, n) == 0) return true;
		i += n + 1;
	}
	return false;
}

/* Per-node facts gathered until the node ends. */
struct node {
	const char *name;
	int addr_cells, size_cells;        /* for this node's children */
	const uint8_t *reg; uint32_t reg_len;
	const char *compat; uint32_t compat_len;
	uint32_t irq; bool has_irq;
};

static void node_done(struct node *n, struct node *parent, int depth)
{
	int ac = parent ? parent->addr_cells : 2, sc = parent ? parent->size_cells : 1;
	uint64_t base = 0, size = 0;
	if (n->reg && n->reg_len >= (uint32_t)(4 * (ac + sc))) {
		base = read_cells(n->reg, ac);
		size = read_cells(n->reg + 4 * ac, sc);
	}
	if (depth == 1 && str_starts(n->name, "memory") && size != 0 && bootinfo.ram_size == 0) {
		bootinfo.ram_base = base;
		bootinfo.ram_size = size;
	}
	if (!n->compat) return;
	if (compat_has(n->compat, n->compat_len, "virtio,mmio") && bootinfo.nvirtio < MAX_VIRTIO) {
		bootinfo.virtio[bootinfo.nvirtio].base = base;
		bootinfo.virtio[bootinfo.nvirtio].irq = n->has_irq ? n->irq : 0;
		bootinfo.nvirtio++;
	} else if (compat_has(n->compat, n->compat_len, "sifive,test0")) {
		bootinfo.test_finisher = base;
	} else if (compat_has(n->compat, n->compat_len, "google,goldfish-rtc")) {
		bootinfo.rtc_base = base;
	} else if (compat_has(n->compat, n->compat_len, "ns16550a")) {
		bootinfo.uart_base = base;
		if (n->has_irq) bootinfo.uart_irq = n->irq;
	} else if (compat_has(n->compat, n->compat_len, "riscv,plic0") ||
		   compat_has(n->compat, n->compat_len, "sifive,plic-1.0.0")) {
		bootinfo.plic_base = base;
	}
}

/* Is the name t[0..tl) the extension "zbb", in any case? */
static bool is_zbb(const char *t, size_t tl)
{
	static const char z[] = "zbb";
	if (tl != 3)
		return false;
	for (size_t k = 0; k < 3; k++)
		if ((t[k] | 0x20) != z[k])
			return false;
	return true;
}

/* Does a hart's ISA string (riscv,isa: "rv64imafdc_zicsr_zbb_...") name
 * Zbb?  Multi-letter extensions follow the single letters, each after an
 * underscore, but the first may follow them directly ("rv64imaczbb_zbs"):
 * the single letters end at the first z, s or x.  The single letter b (all
 * of the B extension) counts too; the b of "zba" must not. */
static bool isa_has_zbb(const char *isa, uint32_t len)
{
	size_t n = strnlen(isa, len), start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && isa[i] != '_')
			continue;
		const char *t = isa + start;
		size_t tl = i - start;
		if (start == 0 && tl > 4 && (t[0] | 0x20) == 'r' && (t[1] | 0x20) == 'v') {
			size_t k = 4;
			for (; k < tl; k++) {
				char c = t[k] | 0x20;
				if (c == 'z' || c == 's' || c == 'x')
					break;
				if (c == 'b')
					return true;
			}
			if (k < tl && is_zbb(t + k, tl - k))
				return true;
		} else if (is_zbb(t, tl)) {
			return true;
		}
		start = i + 1;
	}
	return false;
}

void fdt_parse(uint64_t dtb_pa)
{
	const uint8_t *fdt = (const uint8_t *)dtb_pa;
	if (fdt == NULL || be32(fdt) != FDT_MAGIC) panic("no device tree at %p", (void *)fdt);
	uint32_t total = be32(fdt + 4), off_struct = be32(fdt + 8), off_strings = be32(fdt + 12);
	uint32_t size_strings = be32(fdt + 32), size_struct = be32(fdt + 36);
	if (off_struct > total || size_struct > total - off_struct ||
	    off_strings > total || size_strings > total - off_strings)
		panic("device tree header is inconsistent");
	const uint8_t *p = fdt + off_struct, *end = p + size_struct;
	const char *strings = (const char *)fdt + off_strings;

	struct node stack[MAX_DEPTH];
	int depth = -1;
	int harts = 0, harts_zbb = 0;
	while (p + 4 <= end) {
		uint32_t tok = be32(p);
		p += 4;
		if (tok == FDT_BEGIN_NODE) {
			const char *name = (const char *)p;
			size_t n = strnlen(name, (size_t)(end - p));
			p += (n + 4) & ~3ull;
			if (++depth >= MAX_DEPTH) panic("device tree nested too deeply");
			stack[depth] = (struct node){ .name = name, .addr_cells = 2, .size_cells = 1 };
		} else if (tok == FDT_END_NODE) {
			if (depth < 0) break;
			node_done(&stack[depth], depth > 0 ? &stack[depth - 1] : NULL, depth);
			depth--;
		} else if (tok == FDT_PROP) {
			if (p + 8 > end || depth < 0) break;
			uint32_t len = be32(p), nameoff = be32(p + 4);
			const uint8_t *val = p + 8;
			p += 8 + ((len + 3) & ~3u);
			if (p > end || nameoff >= size_strings) break;
			const char *pname = strings + nameoff;
			struct node *nd = &stack[depth];
			if (strcmp(pname, "#address-cells") == 0 && len == 4) nd->addr_cells = (int)be32(val);
			else if (strcmp(pname, "#size-cells") == 0 && len == 4) nd->size_cells = (int)be32(val);
			else if (strcmp(pname, "reg") == 0) { nd->reg = val; nd->reg_len = len; }
			else if (strcmp(pname, "compatible") == 0) { nd->compat = (const char *)val; nd->compat_len = len; }
			else if (strcmp(pname, "interrupts") == 0 && len >= 4) { nd->irq = be32(val); nd->has_irq = true; }
			else if (strcmp(pname, "timebase-frequency") == 0 && len == 4) bootinfo.timebase_hz = be32(val);
			else if (depth == 2 && strncmp(nd->name, "cpu@", 4) == 0 && strcmp(pname, "riscv,isa") == 0) {
				harts++;
				harts_zbb += isa_has_zbb((const char *)val, len);
			}
			else if (depth == 1 && strcmp(nd->name, "chosen") == 0) {
				if (strcmp(pname, "bootargs") == 0)
					strncpy_safe(bootinfo.bootargs, (const char *)val,
						     len < BOOTARGS_MAX ? len + 1 : BOOTARGS_MAX);
				else if (strcmp(pname, "linux,initrd-start") == 0)
					bootinfo.initrd_start = read_cells(val, len == 8 ? 2 : 1);
				else if (strcmp(pname, "linux,initrd-end") == 0)
					bootinfo.initrd_end = read_cells(val, len == 8 ? 2 : 1);
			}
		} else if (tok == FDT_NOP) {
			continue;
		} else {
			break;   /* FDT_END or garbage */
		}
	}

	/* Devices in ascending address order: virtio unit numbers follow the bus slots. */
	for (int i = 1; i < bootinfo.nvirtio; i++)
		for (int j = i; j > 0 && bootinfo.virtio[j - 1].base > bootinfo.virtio[j].base; j--) {
			struct virtio_slot t = bootinfo.virtio[j];
			bootinfo.virtio[j] = bootinfo.virtio[j - 1];
			bootinfo.virtio[j - 1] = t;
		}
	/* Zbb's rotates make the crypt layer's ChaCha faster (libos/stack/
	 * chacha.c); a program may use them only if every hart has them. */
	if (harts > 0 && harts_zbb == harts) bootinfo.kinfo_flags |= KINFO_F_ZBB;
	if (bootinfo.timebase_hz == 0) bootinfo.timebase_hz = 10000000;
	if (bootinfo.ram_size == 0) panic("device tree has no memory node");
}
