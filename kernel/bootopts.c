/*
 * bootopts.c - boot options from the kernel command line (QEMU -append).
 *
 * Options are space-separated "key=value" words, except cmd=, which takes the
 * rest of the line so a whole shell command line (with spaces and ';') can be
 * passed: `make qemu CMD='echo a; echo b'` boots with "... cmd=echo a; echo b".
 */
#include "kernel/bootinfo.h"
#include "kernel/klib.h"

/* Copies of values, NUL-terminated, so callers can keep the pointers. */
static char optbuf[BOOTARGS_MAX];
static size_t optused;

const char *bootopt(const char *key)
{
	const char *s = bootinfo.bootargs;
	size_t klen = strlen(key);
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
