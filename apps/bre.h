/*
 * bre.h - POSIX basic regular expressions (what grep takes by default):
 * compile once, match many lines.  Portable C11 (also built on the host,
 * where tests/host/apps/test_bre.c checks it).
 *
 * The syntax (POSIX.1-2017 9.3, plus GNU's \+ and \?):
 *   c        a character stands for itself       \c   the character c (\. \* \[ ...)
 *   .        any character                       [...] [^...]  a set: ranges a-z,
 *   ^  $     start / end of the line (^ first,         classes [:alpha:] [:digit:]
 *            $ last, else themselves)                  [:space:] [:upper:] ...
 *   *        the item before, any number of times (greedy)
 *   \{m\}  \{m,\}  \{m,n\}   ... m times, at least m, m to n
 *   \+  \?   one or more, zero or one (GNU)
 *   \( \)    a group (repeatable); \1 .. \9 what group N matched
 */
#ifndef APPS_BRE_H
#define APPS_BRE_H

#include <stddef.h>

struct bre;

/* Compile pattern; icase: letters match either case.  NULL on error, with a
 * message in err (errsize bytes). */
struct bre *bre_compile(const char *pattern, int icase, char *err, size_t errsize);
/* Does the regular expression match somewhere in text[0..len)?  1 yes,
 * 0 no, -1 when the line is too complex to decide (deep backtracking). */
int bre_search(const struct bre *re, const char *text, size_t len);
void bre_free(struct bre *re);

#endif
