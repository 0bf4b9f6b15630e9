/*
 * name.c - FAT's two kinds of names.
 *
 * A long (VFAT) name is up to 255 UTF-16 units, stored 13 to an entry in
 * the entries before the short one, each carrying the short name's
 * checksum so that a long name left behind by a system that knows nothing
 * of them (it renamed or deleted the short entry) is recognised as an
 * orphan.  Programs here speak UTF-8; characters beyond the BMP become
 * surrogate pairs, as Windows stores them.
 *
 * A short name is 8 + 3 bytes of the OEM code page (437 is assumed for the
 * bytes over 127), upper case, padded with spaces.  A name that fits is
 * stored as a short name alone, with Windows NT's two case bits for an
 * all-lower-case base or extension; anything else gets a long name plus a
 * generated short name: the basis (upper case, unfit characters as '_',
 * base and extension cut to 8 and 3) and, unless the basis is the name
 * itself, a numeric tail ~N chosen to be unique in the directory (dir.c).
 *
 * Names are compared ignoring the case of ASCII letters (FAT is case
 * insensitive; folding other letters would need Unicode tables).
 */
#include <errno.h>
#include <string.h>
#include "userfs/fatfs/fat.h"

/* Code page 437, bytes 0x80..0xFF. */
static const uint16_t cp437[128] = {
	0x00C7, 0x00FC, 0x00E9, 0x00E2, 0x00E4, 0x00E0, 0x00E5, 0x00E7,
	0x00EA, 0x00EB, 0x00E8, 0x00EF, 0x00EE, 0x00EC, 0x00C4, 0x00C5,
	0x00C9, 0x00E6, 0x00C6, 0x00F4, 0x00F6, 0x00F2, 0x00FB, 0x00F9,
	0x00FF, 0x00D6, 0x00DC, 0x00A2, 0x00A3, 0x00A5, 0x20A7, 0x0192,
	0x00E1, 0x00ED, 0x00F3, 0x00FA, 0x00F1, 0x00D1, 0x00AA, 0x00BA,
	0x00BF, 0x2310, 0x00AC, 0x00BD, 0x00BC, 0x00A1, 0x00AB, 0x00BB,
	0x2591, 0x2592, 0x2593, 0x2502, 0x2524, 0x2561, 0x2562, 0x2556,
	0x2555, 0x2563, 0x2551, 0x2557, 0x255D, 0x255C, 0x255B, 0x2510,
	0x2514, 0x2534, 0x252C, 0x251C, 0x2500, 0x253C, 0x255E, 0x255F,
	0x255A, 0x2554, 0x2569, 0x2566, 0x2560, 0x2550, 0x256C, 0x2567,
	0x2568, 0x2564, 0x2565, 0x2559, 0x2558, 0x2552, 0x2553, 0x256B,
	0x256A, 0x2518, 0x250C, 0x2588, 0x2584, 0x258C, 0x2590, 0x2580,
	0x03B1, 0x00DF, 0x0393, 0x03C0, 0x03A3, 0x03C3, 0x00B5, 0x03C4,
	0x03A6, 0x0398, 0x03A9, 0x03B4, 0x221E, 0x03C6, 0x03B5, 0x2229,
	0x2261, 0x00B1, 0x2265, 0x2264, 0x2320, 0x2321, 0x00F7, 0x2248,
	0x00B0, 0x2219, 0x00B7, 0x221A, 0x207F, 0x00B2, 0x25A0, 0x00A0,
};

/* Characters no FAT name may hold (besides those below 0x20). */
static int forbidden(uint32_t c)
{
	return c < 0x20 || c == '"' || c == '*' || c == '/' || c == ':' || c == '<' || c == '>' ||
	       c == '?' || c == '\\' || c == '|';
}

/* Characters a short name may hold as they are (after upper-casing). */
static int short_ok(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != 0 && strchr("!#$%&'()-@^_`{}~", c) != NULL);
}

int fat_name_ucs2(const char *name, uint16_t *u)
{
	const uint8_t *p = (const uint8_t *)name;
	int n = 0;
	while (*p) {
		uint32_t c;
		int more;
		if (p[0] < 0x80) {
			c = p[0];
			more = 0;
		} else if ((p[0] & 0xE0) == 0xC0) {
			c = p[0] & 0x1F;
			more = 1;
		} else if ((p[0] & 0xF0) == 0xE0) {
			c = p[0] & 0x0F;
			more = 2;
		} else if ((p[0] & 0xF8) == 0xF0) {
			c = p[0] & 0x07;
			more = 3;
		} else {
			return -EINVAL;
		}
		for (int i = 1; i <= more; i++) {
			if ((p[i] & 0xC0) != 0x80)
				return -EINVAL;
			c = c << 6 | (p[i] & 0x3F);
		}
		/* Overlong forms, surrogates and the end of Unicode are not names. */
		if ((more == 1 && c < 0x80) || (more == 2 && c < 0x800) || (more == 3 && c < 0x10000) ||
		    (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF || forbidden(c))
			return -EINVAL;
		p += more + 1;
		if (c >= 0x10000) {
			if (n + 2 > LFN_MAX)
				return -ENAMETOOLONG;
			c -= 0x10000;
			u[n++] = (uint16_t)(0xD800 | c >> 10);
			u[n++] = (uint16_t)(0xDC00 | (c & 0x3FF));
		} else {
			if (n + 1 > LFN_MAX)
				return -ENAMETOOLONG;
			u[n++] = (uint16_t)c;
		}
	}
	/* Windows drops trailing dots and spaces; we refuse them rather than
	 * store a name other than the one asked for. */
	if (n == 0 || u[n - 1] == '.' || u[n - 1] == ' ')
		return -EINVAL;
	return n;
}

static char *put_utf8(char *o, uint32_t c)
{
	if (c < 0x80) {
		*o++ = (char)c;
	} else if (c < 0x800) {
		*o++ = (char)(0xC0 | c >> 6);
		*o++ = (char)(0x80 | (c & 0x3F));
	} else if (c < 0x10000) {
		*o++ = (char)(0xE0 | c >> 12);
		*o++ = (char)(0x80 | (c >> 6 & 0x3F));
		*o++ = (char)(0x80 | (c & 0x3F));
	} else {
		*o++ = (char)(0xF0 | c >> 18);
		*o++ = (char)(0x80 | (c >> 12 & 0x3F));
		*o++ = (char)(0x80 | (c >> 6 & 0x3F));
		*o++ = (char)(0x80 | (c & 0x3F));
	}
	return o;
}

void fat_ucs2_name(const uint16_t *u, int n, char *out)
{
	char *o = out;
	for (int i = 0; i < n; i++) {
		uint32_t c = u[i];
		if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n && u[i + 1] >= 0xDC00 && u[i + 1] <= 0xDFFF) {
			c = 0x10000 + ((c - 0xD800) << 10) + (u[i + 1] - 0xDC00);
			i++;
		} else if (c >= 0xD800 && c <= 0xDFFF) {
			c = 0xFFFD;          /* a lone surrogate: show it as such */
		}
		o = put_utf8(o, c);
	}
	*o = 0;
}

uint8_t fat_sfn_sum(const uint8_t sfn[11])
{
	uint8_t s = 0;
	for (int i = 0; i < 11; i++)
		s = (uint8_t)(((s & 1) << 7) + (s >> 1) + sfn[i]);
	return s;
}

static char *sfn_part(char *o, const uint8_t *p, int len, int lower, int first)
{
	int n = len;
	while (n > 0 && p[n - 1] == ' ')
		n--;
	for (int i = 0; i < n; i++) {
		uint8_t c = p[i];
		if (first && i == 0 && c == DIR_KANJI)
			c = 0xE5;
		if (c >= 0x80)
			o = put_utf8(o, cp437[c - 0x80]);
		else
			*o++ = (char)(lower && c >= 'A' && c <= 'Z' ? c + 32 : c);
	}
	return o;
}

void fat_sfn_show(const uint8_t sfn[11], uint8_t ntres, char *out)
{
	char *o = sfn_part(out, sfn, 8, ntres & NTRES_LBASE, 1);
	int ext = 3;
	while (ext > 0 && sfn[8 + ext - 1] == ' ')
		ext--;
	if (ext > 0) {
		*o++ = '.';
		o = sfn_part(o, sfn + 8, 3, ntres & NTRES_LEXT, 0);
	}
	*o = 0;
}

/* A run of letters all lower (1), all upper (0), or mixed (-1). */
static int case_of(const char *s, size_t n)
{
	int lower = 0, upper = 0;
	for (size_t i = 0; i < n; i++) {
		lower |= s[i] >= 'a' && s[i] <= 'z';
		upper |= s[i] >= 'A' && s[i] <= 'Z';
	}
	return lower && upper ? -1 : lower;
}

int fat_sfn_fits(const char *name, uint8_t sfn[11], uint8_t *ntres)
{
	const char *dot = strrchr(name, '.');
	size_t len = strlen(name);
	size_t base = dot ? (size_t)(dot - name) : len, ext = dot ? len - base - 1 : 0;
	if (base == 0 || base > 8 || ext > 3 || (dot && ext == 0))
		return 0;
	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)name[i];
		if (name + i == dot)
			continue;
		if (c >= 'a' && c <= 'z')
			c -= 32;
		if (!short_ok(c))
			return 0;
	}
	int cb = case_of(name, base), ce = case_of(dot ? dot + 1 : "", ext);
	if (cb < 0 || ce < 0)
		return 0;
	memset(sfn, ' ', 11);
	for (size_t i = 0; i < base; i++)
		sfn[i] = (uint8_t)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
	for (size_t i = 0; i < ext; i++)
		sfn[8 + i] = (uint8_t)(dot[1 + i] >= 'a' && dot[1 + i] <= 'z' ? dot[1 + i] - 32 : dot[1 + i]);
	*ntres = (uint8_t)((cb ? NTRES_LBASE : 0) | (ce ? NTRES_LEXT : 0));
	return 1;
}

/* One character of a basis: upper case, or '_' for what a short name
 * cannot hold. */
static uint8_t basis_char(uint16_t c)
{
	if (c >= 'a' && c <= 'z')
		return (uint8_t)(c - 32);
	return c < 0x80 && short_ok(c) ? (uint8_t)c : '_';
}

void fat_sfn_basis(const uint16_t *u, int n, uint8_t sfn[11])
{
	memset(sfn, ' ', 11);
	int last = -1;
	for (int i = 0; i < n; i++)
		if (u[i] == '.')
			last = i;
	/* Leading dots and spaces go; the base stops at the last dot. */
	int i = 0, k = 0;
	while (i < n && (u[i] == '.' || u[i] == ' '))
		i++;
	if (last < i)
		last = -1;
	for (; i < n && (last < 0 || i < last) && k < 8; i++)
		if (u[i] != ' ' && u[i] != '.')
			sfn[k++] = basis_char(u[i]);
	if (k == 0)
		sfn[k++] = '_';
	for (int j = last + 1, e = 0; last >= 0 && j < n && e < 3; j++)
		if (u[j] != ' ')
			sfn[8 + e++] = basis_char(u[j]);
}

void fat_sfn_tail(const uint8_t basis[11], uint32_t num, uint8_t sfn[11])
{
	char t[12];
	int tl = 0;
	char digits[11];
	int nd = 0;
	do
		digits[nd++] = (char)('0' + num % 10);
	while ((num /= 10) > 0 && nd < 7);
	t[tl++] = '~';
	while (nd > 0)
		t[tl++] = digits[--nd];
	memcpy(sfn, basis, 11);
	int base = 8;
	while (base > 0 && basis[base - 1] == ' ')
		base--;
	if (base > 8 - tl)
		base = 8 - tl;
	memcpy(sfn + base, t, (size_t)tl);
	for (int i = base + tl; i < 8; i++)
		sfn[i] = ' ';
}

int fat_sfn_ok(const uint8_t sfn[11])
{
	if (sfn[0] == ' ')
		return 0;
	for (int i = 0; i < 11; i++) {
		uint8_t c = sfn[i];
		if ((c < 0x20 && !(i == 0 && c == DIR_KANJI)) || c == 0x7F ||
		    (c < 0x80 && strchr("*?<>|\"\\/:.", c) != NULL && c != 0))
			return 0;
	}
	return 1;
}

static uint8_t fold(uint8_t c)
{
	return c >= 'a' && c <= 'z' ? (uint8_t)(c - 32) : c;
}

uint32_t fat_name_hash(const char *name)
{
	uint32_t h = 2166136261u;
	for (const uint8_t *p = (const uint8_t *)name; *p; p++)
		h = (h ^ fold(*p)) * 16777619u;
	return h;
}

int fat_name_eq(const char *a, const char *b)
{
	while (*a && fold((uint8_t)*a) == fold((uint8_t)*b)) {
		a++;
		b++;
	}
	return *a == 0 && *b == 0;
}
