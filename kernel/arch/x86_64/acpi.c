/*
 * acpi.c - what the firmware's ACPI tables say about the machine: where the
 * local APIC, the IOAPIC and the HPET are, and on which global system
 * interrupt each ISA IRQ arrives (the MADT's interrupt source overrides).
 * The tables are read once at boot, on the boot page tables (which map the
 * first 4 GiB, where SeaBIOS puts them); struct x86_platform keeps the
 * answers.  The tables come from the firmware, but the reader still checks
 * signatures, checksums and every length before it believes them; without
 * usable tables it falls back on the PC's usual addresses.
 */
#include "kernel/arch/x86_64/arch.h"
#include "kernel/arch/x86_64/cpu.h"
#include "kernel/klib.h"

struct x86_platform plat;

static uint32_t le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t le64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static bool checksum_ok(const uint8_t *p, uint32_t len)
{
	uint8_t sum = 0;
	for (uint32_t i = 0; i < len; i++)
		sum += p[i];
	return sum == 0;
}

/* The RSDP: in the first KiB of the EBDA or in the BIOS area 0xe0000-0xfffff,
 * on a 16-byte boundary. */
static const uint8_t *find_rsdp(void)
{
	/* The BIOS data area says where the EBDA is (a real-mode segment).  The
	 * address goes through a register so the compiler does not take the
	 * low constant for a null pointer. */
	uint64_t bda = 0x40e;
	__asm__("" : "+r"(bda));
	uint64_t ebda = (uint64_t)(*(volatile uint16_t *)bda) << 4;
	uint64_t ranges[2][2] = { { ebda, ebda + 1024 }, { 0xe0000, 0x100000 } };
	for (int r = 0; r < 2; r++) {
		if (ranges[r][0] < 0x400 || ranges[r][1] > 0x100000)
			continue;
		for (uint64_t a = ranges[r][0]; a + 20 <= ranges[r][1]; a += 16) {
			const uint8_t *p = (const uint8_t *)a;
			if (memcmp(p, "RSD PTR ", 8) == 0 && checksum_ok(p, 20))
				return p;
		}
	}
	return NULL;
}

/* A table's header, if it is one: signature, length and checksum. */
static const uint8_t *table_at(uint64_t pa, const char *sig)
{
	if (pa == 0 || pa >= (4ull << 30))
		return NULL;
	const uint8_t *t = (const uint8_t *)pa;
	uint32_t len = le32(t + 4);
	if (len < 36 || len > (1u << 20) || pa + len > (4ull << 30))
		return NULL;
	if (sig != NULL && memcmp(t, sig, 4) != 0)
		return NULL;
	return checksum_ok(t, len) ? t : NULL;
}

static void parse_madt(const uint8_t *m)
{
	uint32_t len = le32(m + 4);
	if (len < 44)
		return;
	plat.lapic = le32(m + 36);
	bool have_ioapic = false;
	for (uint32_t at = 44; at + 2 <= len;) {
		uint8_t type = m[at], elen = m[at + 1];
		if (elen < 2 || at + elen > len)
			break;
		const uint8_t *e = m + at;
		if (type == 1 && elen >= 12 && !have_ioapic) {          /* I/O APIC: the first one */
			plat.ioapic = le32(e + 4);
			plat.ioapic_gsi_base = le32(e + 8);
			have_ioapic = true;
		} else if (type == 2 && elen >= 10 && e[2] == 0 && e[3] < 16) {   /* ISA override */
			uint16_t flags;
			memcpy(&flags, e + 8, 2);
			plat.isa_gsi[e[3]] = le32(e + 4);
			plat.isa_flags[e[3]] = flags;
		} else if (type == 5 && elen >= 12) {                   /* 64-bit local APIC address */
			plat.lapic = le64(e + 4);
		}
		at += elen;
	}
}

void acpi_init(void)
{
	/* The PC's defaults, used where the tables say nothing. */
	plat.lapic = 0xfee00000;
	plat.ioapic = 0xfec00000;
	plat.ioapic_gsi_base = 0;
	plat.hpet = 0xfed00000;
	for (int i = 0; i < 16; i++) {
		plat.isa_gsi[i] = (uint32_t)i;
		plat.isa_flags[i] = 0;
	}

	const uint8_t *rsdp = find_rsdp();
	if (rsdp == NULL) {
		kprintf("acpi: no RSDP; assuming the PC's usual devices\n");
		return;
	}
	uint8_t rev = rsdp[15];
	const uint8_t *root = NULL;
	int entry = 4;
	if (rev >= 2 && checksum_ok(rsdp, 36) && le64(rsdp + 24) != 0) {
		root = table_at(le64(rsdp + 24), "XSDT");
		entry = 8;
	}
	if (root == NULL) {
		root = table_at(le32(rsdp + 16), "RSDT");
		entry = 4;
	}
	if (root == NULL) {
		kprintf("acpi: the root table is missing or damaged; assuming the PC's usual devices\n");
		return;
	}
	plat.acpi = true;
	uint32_t len = le32(root + 4);
	for (uint32_t at = 36; at + (uint32_t)entry <= len; at += (uint32_t)entry) {
		uint64_t pa = entry == 8 ? le64(root + at) : le32(root + at);
		const uint8_t *t = table_at(pa, NULL);
		if (t == NULL)
			continue;
		if (memcmp(t, "APIC", 4) == 0)
			parse_madt(t);
		else if (memcmp(t, "HPET", 4) == 0 && le32(t + 4) >= 56 && t[40] == 0)   /* memory space */
			plat.hpet = le64(t + 44);
	}
}
