/*
 * bootopts.c - boot options from the kernel command line (QEMU -append).
 *
 * Options are space-separated "key=value" words, except cmd=, which takes the
 * rest of the line so a whole shell command line (with spaces and ';') can be
 * passed: `make qemu CMD='echo a; echo b'` boots with "... cmd=echo a; echo b".
 *
 * Every key a subsystem looks up becomes a known option; once the kernel
 * has started everything, bootopt_check() reports the words of the command
 * line that nobody asked for (a misspelt `edcahce=`, say), so an option is
 * never ignored silently.  Options read only later, or by applications,
 * are declared with bootopt_declare().
 */
#include "kernel/bootinfo.h"
#include "kernel/klib.h"

struct bootinfo bootinfo;

/* Copies of values, NUL-terminated, so callers can keep the pointers. */
static char optbuf[BOOTARGS_MAX];
static size_t optused;

#define MAX_KNOWN 48
static const char *known[MAX_KNOWN];
static int nknown;

void bootopt_declare(const char *key)
{
	for (int i = 0; i < nknown; i++)
		if (strcmp(known[i], key) == 0) return;
	if (nknown < MAX_KNOWN) known[nknown++] = key;
}

/* Is the word (up to '=' or its end) a known key? */
static bool is_known(const char *word, size_t wlen)
{
	size_t klen = 0;
	while (klen < wlen && word[klen] != '=') klen++;
	for (int i = 0; i < nknown; i++)
		if (strlen(known[i]) == klen && strncmp(known[i], word, klen) == 0) return true;
	return false;
}

void bootopt_check(void)
{
	const char *s = bootinfo.bootargs;
	int bad = 0;
	while (*s) {
		while (*s == ' ') s++;
		if (*s == 0) break;
		const char *word = s;
		bool is_cmd = str_starts(word, "cmd=");
		while (*s && (is_cmd || *s != ' ')) s++;
		if (!is_known(word, (size_t)(s - word))) {
			char w[64];
			strncpy_safe(w, word, MIN(sizeof w, (size_t)(s - word) + 1));
			kprintf("kernel: unknown boot option '%s' ignored\n", w);
			bad++;
		}
	}
	if (bad) {
		kprintf("kernel: the boot options are:");
		for (int i = 0; i < nknown; i++) kprintf(" %s", known[i]);
		kprintf(" (docs/kernel.md, docs/blocklayer.md, docs/exodisk.md)\n");
	}
}

const char *bootopt(const char *key)
{
	const char *s = bootinfo.bootargs;
	size_t klen = strlen(key);
	bootopt_declare(key);
	while (*s) {
		while (*s == ' ') s++;
		if (*s == 0) break;
		const char *word = s;
		bool is_cmd = str_starts(word, "cmd=");
		while (*s && (is_cmd || *s != ' ')) s++;
		size_t wlen = (size_t)(s - word);
		if (wlen >= klen && strncmp(word, key, klen) == 0 &&
		    (wlen == klen || word[klen] == '=')) {
			const char *val = wlen == klen ? word + klen : word + klen + 1;
			size_t vlen = (size_t)(s - val);
			if (optused + vlen + 1 > sizeof(optbuf)) return NULL;
			char *copy = optbuf + optused;
			memcpy(copy, val, vlen);
			copy[vlen] = 0;
			optused += vlen + 1;
			return copy;
		}
	}
	return NULL;
}

bool bootopt_flag(const char *key)
{
	const char *v = bootopt(key);
	if (v == NULL) return false;
	return !(strcmp(v, "0") == 0 || strcmp(v, "off") == 0 || strcmp(v, "no") == 0);
}
