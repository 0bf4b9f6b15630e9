/*
 * test_bre.c - apps/bre.c (grep's basic regular expressions): a table of
 * patterns with lines that must and must not match, the errors, and a
 * differential test against the host C library's regcomp/regexec (POSIX
 * BRE, with GNU's \+ and \?) on random patterns and lines.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/bre.h"

static int failures;

static void check(const char *pat, int icase, const char *text, int want)
{
	char err[128];
	struct bre *re = bre_compile(pat, icase, err, sizeof err);
	if (re == NULL) {
		printf("FAIL: %s: does not compile: %s\n", pat, err);
		failures++;
		return;
	}
	int got = bre_search(re, text, strlen(text));
	if (got != want) {
		printf("FAIL: /%s/%s on \"%s\": %d, want %d\n", pat, icase ? "i" : "", text, got, want);
		failures++;
	}
	bre_free(re);
}

static void bad(const char *pat)
{
	char err[128];
	struct bre *re = bre_compile(pat, 0, err, sizeof err);
	if (re != NULL) {
		printf("FAIL: /%s/ compiled; it should not\n", pat);
		failures++;
		bre_free(re);
	}
}

/* A random pattern over a small alphabet, made of well-formed pieces. */
static void random_pattern(char *out, size_t size, unsigned *seed)
{
	static const char *pieces[] = {
		"a", "b", "c", ".", "[ab]", "[^a]", "[a-c]", "[[:digit:]]", "x", "1",
		"*", "\\{2\\}", "\\{1,2\\}", "\\{0,\\}", "\\+", "\\?",
		"\\(", "\\)", "\\1",
	};
	size_t n = 0;
	int open = 0, groups = 0, can_repeat = 0;
	int len = 1 + (int)(rand_r(seed) % 7);
	if (rand_r(seed) % 4 == 0)
		out[n++] = '^';
	for (int i = 0; i < len; i++) {
		int k = (int)(rand_r(seed) % (sizeof pieces / sizeof pieces[0]));
		const char *p = pieces[k];
		if (k >= 10 && k <= 15 && !can_repeat)
			continue;
		if (k == 16 && groups == 9)
			continue;
		if (k == 17 && (open == 0 || !can_repeat))
			continue;
		if (k == 18 && groups - open < 1)
			continue;              /* \1 needs a closed group 1 */
		if (n + strlen(p) + 8 >= size)
			break;
		memcpy(out + n, p, strlen(p));
		n += strlen(p);
		if (k == 16) {
			open++;
			groups++;
			can_repeat = 0;
		} else if (k == 17) {
			open--;
			can_repeat = 1;
		} else if (k >= 10 && k <= 15) {
			can_repeat = 0;
		} else {
			can_repeat = 1;
		}
	}
	while (open-- > 0) {
		if (!can_repeat) {
			out[n++] = 'a';
		}
		memcpy(out + n, "\\)", 2);
		n += 2;
		can_repeat = 1;
	}
	if (rand_r(seed) % 4 == 0)
		out[n++] = '$';
	out[n] = 0;
}

int main(void)
{
	/* The basics. */
	check("abc", 0, "xxabcxx", 1);
	check("abc", 0, "xxabxcx", 0);
	check("a.c", 0, "abc", 1);
	check("a.c", 0, "ac", 0);
	check("^ab", 0, "abc", 1);
	check("^ab", 0, "cab", 0);
	check("bc$", 0, "abc", 1);
	check("bc$", 0, "bca", 0);
	check("^$", 0, "", 1);
	check("^$", 0, "x", 0);
	check("a^b", 0, "a^b", 1);          /* ^ not first: itself */
	check("a$b", 0, "a$b", 1);          /* $ not last: itself */
	check("*a", 0, "*a", 1);            /* * first: itself */
	check("ab*c", 0, "ac", 1);
	check("ab*c", 0, "abbbbc", 1);
	check("ab*c", 0, "abxc", 0);
	check("a\\{3\\}", 0, "aa", 0);
	check("a\\{3\\}", 0, "xaaay", 1);
	check("^a\\{2,3\\}$", 0, "aaaa", 0);
	check("^a\\{2,3\\}$", 0, "aaa", 1);
	check("^a\\{2,\\}$", 0, "aaaaaaa", 1);
	check("^a\\{2,\\}$", 0, "a", 0);
	check("[abc]x", 0, "bx", 1);
	check("[^abc]x", 0, "bx", 0);
	check("[^abc]x", 0, "dx", 1);
	check("[]a]", 0, "]", 1);
	check("[a-]", 0, "-", 1);
	check("[[:digit:]][[:alpha:]]", 0, "9z", 1);
	check("[[:space:]]", 0, "a b", 1);
	check("[[:upper:]]", 0, "abc", 0);
	check("\\.", 0, "a.b", 1);
	check("\\.", 0, "ab", 0);
	check("\\(ab\\)*c", 0, "ababc", 1);
	check("^\\(ab\\)*$", 0, "ababa", 0);
	check("^\\(ab\\)\\{2\\}$", 0, "abab", 1);
	check("\\(a\\)\\1", 0, "xaax", 1);
	check("\\(a\\)\\1", 0, "xabx", 0);
	check("^\\(.*\\)\\1$", 0, "abcabc", 1);
	check("^\\(.*\\)\\1$", 0, "abcab", 0);
	check("\\(a*\\)*b", 0, "aaab", 1);        /* an empty iteration must not loop */
	check("\\(\\)*x", 0, "x", 1);
	check("a\\+", 0, "b", 0);
	check("ba\\+c", 0, "baac", 1);
	check("ba\\?c", 0, "bc", 1);
	check("ba\\?c", 0, "baac", 0);
	check("HeLLo", 1, "say hello", 1);
	check("[a-c]x", 1, "BX", 1);
	check("\\(ab\\)\\1", 1, "ABab", 1);
	check("x*", 0, "", 1);

	/* Errors. */
	bad("\\(ab");
	bad("ab\\)");
	bad("[ab");
	bad("a\\{2");
	bad("a\\{3,2\\}");
	bad("\\1");
	bad("[[:nosuch:]]");
	bad("a\\");
	bad("[z-a]");

	/* A pathological pattern gives up instead of overflowing the stack. */
	{
		char err[64], line[4001];
		memset(line, 'a', 4000);
		line[4000] = 0;
		struct bre *re = bre_compile("\\(a\\)*b", 0, err, sizeof err);
		int r = bre_search(re, line, 4000);
		if (r == 1) {
			printf("FAIL: (a)*b matched a line of a's\n");
			failures++;
		}
		bre_free(re);
	}

	/* Against the host's regexec, on random patterns and lines. */
	unsigned seed = 12345;
	int compared = 0;
	for (int t = 0; t < 20000; t++) {
		char pat[128], text[16];
		random_pattern(pat, sizeof pat, &seed);
		int tl = (int)(rand_r(&seed) % 10);
		for (int i = 0; i < tl; i++)
			text[i] = "abcx1a"[rand_r(&seed) % 6];
		text[tl] = 0;
		regex_t rx;
		if (regcomp(&rx, pat, REG_NOSUB) != 0)
			continue;
		char err[128];
		struct bre *re = bre_compile(pat, 0, err, sizeof err);
		if (re == NULL) {
			printf("FAIL: /%s/ compiles in libc, not here: %s\n", pat, err);
			failures++;
			regfree(&rx);
			continue;
		}
		int want = regexec(&rx, text, 0, NULL, 0) == 0;
		int got = bre_search(re, text, strlen(text));
		if (got != want) {
			printf("FAIL: /%s/ on \"%s\": %d, libc says %d\n", pat, text, got, want);
			failures++;
		}
		compared++;
		bre_free(re);
		regfree(&rx);
		if (failures > 20)
			break;
	}
	printf("bre: %d random patterns compared with libc\n", compared);
	if (failures)
		printf("%d failures\n", failures);
	else
		printf("ok: basic regular expressions\n");
	return failures != 0;
}
