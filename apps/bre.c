/*
 * bre.c - basic regular expressions (bre.h): a parser into a tree of
 * sequences, and a backtracking matcher.
 *
 * A compiled expression is a sequence of atoms, each with a repetition
 * count [min, max].  A group atom holds a sequence of its own.  Matching
 * tries atoms left to right; a single-character atom takes as many
 * characters as it can and gives them back one at a time if what follows
 * fails (greedy, as POSIX wants the leftmost-longest and grep only asks
 * "is there a match").  A repeated group is matched iteration by iteration
 * through a small chain of frames on the C stack that says where to go on
 * when the group's sequence ends; backreferences compare with what the group
 * last matched.  Recursion is bounded (MAX_DEPTH), so a pathological
 * pattern makes bre_search answer -1 instead of overflowing the stack.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/bre.h"

#define REP_INF   -1
#define MAX_GROUPS 9
#define MAX_DEPTH  1500

enum kind { A_CHAR, A_ANY, A_SET, A_BOL, A_EOL, A_GROUP, A_BACKREF };

struct seq;

struct atom {
	enum kind kind;
	int min, max;                 /* repetition; max REP_INF: no limit */
	unsigned char c;              /* A_CHAR */
	unsigned char set[32];        /* A_SET: a bit per byte */
	struct seq *body;             /* A_GROUP */
	int group;                    /* A_GROUP, A_BACKREF: 1..9 */
};

struct seq {
	struct atom *a;
	int n, cap;
};

struct bre {
	struct seq top;
	int icase;
	int ngroups;
};

/* ---- compiling ------------------------------------------------------------ */

struct parser {
	const char *p;
	int icase;
	int ngroups;
	char *err;
	size_t errsize;
};

static int error(struct parser *ps, const char *msg)
{
	snprintf(ps->err, ps->errsize, "%s", msg);
	return -1;
}

static struct atom *add(struct seq *s)
{
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 8;
		struct atom *a = realloc(s->a, (size_t)cap * sizeof *a);
		if (a == NULL)
			return NULL;
		s->a = a;
		s->cap = cap;
	}
	struct atom *a = &s->a[s->n++];
	memset(a, 0, sizeof *a);
	a->min = a->max = 1;
	return a;
}

static void free_seq(struct seq *s)
{
	for (int i = 0; i < s->n; i++)
		if (s->a[i].kind == A_GROUP) {
			free_seq(s->a[i].body);
			free(s->a[i].body);
		}
	free(s->a);
}

static void set_bit(struct atom *a, unsigned c) { a->set[c >> 3] |= (unsigned char)(1u << (c & 7)); }

static int class_has(const char *name, size_t n, int c)
{
#define IS(s) (n == strlen(s) && strncmp(name, s, n) == 0)
	if (IS("alpha")) return isalpha(c);
	if (IS("digit")) return isdigit(c);
	if (IS("alnum")) return isalnum(c);
	if (IS("space")) return isspace(c);
	if (IS("upper")) return isupper(c);
	if (IS("lower")) return islower(c);
	if (IS("punct")) return ispunct(c);
	if (IS("xdigit")) return isxdigit(c);
	if (IS("blank")) return c == ' ' || c == '\t';
	if (IS("cntrl")) return iscntrl(c);
	if (IS("print")) return isprint(c);
	if (IS("graph")) return isgraph(c);
	return -1;
#undef IS
}

/* A bracket expression; p points after '['. */
static int bracket(struct parser *ps, struct atom *a)
{
	const char *p = ps->p;
	int negate = 0;
	a->kind = A_SET;
	if (*p == '^') {
		negate = 1;
		p++;
	}
	int first = 1;
	while (*p && (*p != ']' || first)) {
		first = 0;
		if (p[0] == '[' && p[1] == ':') {
			const char *name = p + 2, *end = strstr(name, ":]");
			if (end == NULL)
				return error(ps, "[: without :]");
			if (class_has(name, (size_t)(end - name), 'a') < 0)
				return error(ps, "unknown character class");
			for (int c = 1; c < 256; c++)
				if (class_has(name, (size_t)(end - name), c) > 0)
					set_bit(a, (unsigned)c);
			p = end + 2;
			continue;
		}
		unsigned lo = (unsigned char)*p++, hi = lo;
		if (p[0] == '-' && p[1] && p[1] != ']') {
			hi = (unsigned char)p[1];
			p += 2;
			if (hi < lo)
				return error(ps, "a range in [] runs backwards");
		}
		for (unsigned c = lo; c <= hi; c++)
			set_bit(a, c);
	}
	if (*p != ']')
		return error(ps, "[ without ]");
	ps->p = p + 1;
	if (ps->icase)
		for (int c = 'a'; c <= 'z'; c++) {
			int l = a->set[c >> 3] & (1 << (c & 7)), u = a->set[toupper(c) >> 3] & (1 << (toupper(c) & 7));
			if (l || u) {
				set_bit(a, (unsigned)c);
				set_bit(a, (unsigned)toupper(c));
			}
		}
	if (negate) {
		for (int i = 0; i < 32; i++)
			a->set[i] = (unsigned char)~a->set[i];
		a->set[0] &= (unsigned char)~1u;       /* never NUL */
	}
	return 0;
}

static int number(const char **pp, int *v)
{
	const char *p = *pp;
	if (!isdigit((unsigned char)*p))
		return -1;
	long n = 0;
	while (isdigit((unsigned char)*p)) {
		n = n * 10 + (*p++ - '0');
		if (n > 32767)
			return -1;
	}
	*v = (int)n;
	*pp = p;
	return 0;
}

/* A sequence, up to the end of the pattern or (in a group) "\)". */
static int parse_seq(struct parser *ps, struct seq *s, int in_group)
{
	int at_start = 1;
	for (;;) {
		const char *p = ps->p;
		if (*p == 0) {
			if (in_group)
				return error(ps, "\\( without \\)");
			return 0;
		}
		if (p[0] == '\\' && p[1] == ')') {
			if (!in_group)
				return error(ps, "\\) without \\(");
			ps->p = p + 2;
			return 0;
		}
		/* Repetition of the atom before. */
		int rep = (*p == '*') || (p[0] == '\\' && (p[1] == '{' || p[1] == '+' || p[1] == '?'));
		if (rep && !at_start && s->n > 0 && s->a[s->n - 1].kind != A_BOL) {
			struct atom *a = &s->a[s->n - 1];
			if (a->kind == A_EOL)
				return error(ps, "nothing to repeat");
			int min = 0, max = REP_INF;
			if (*p == '*') {
				p++;
			} else if (p[1] == '+') {
				min = 1;
				p += 2;
			} else if (p[1] == '?') {
				max = 1;
				p += 2;
			} else {
				p += 2;
				if (number(&p, &min) < 0)
					return error(ps, "\\{ needs a number");
				max = min;
				if (*p == ',') {
					p++;
					max = REP_INF;
					if (isdigit((unsigned char)*p) && number(&p, &max) < 0)
						return error(ps, "bad number in \\{\\}");
				}
				if (p[0] != '\\' || p[1] != '}')
					return error(ps, "\\{ without \\}");
				p += 2;
				if (max != REP_INF && max < min)
					return error(ps, "\\{m,n\\} with n < m");
			}
			/* a** and the like: the counts combine. */
			if (a->min != 1 || a->max != 1) {
				a->min = a->min * min;
				a->max = (a->max == REP_INF || max == REP_INF) ? REP_INF : a->max * max;
			} else {
				a->min = min;
				a->max = max;
			}
			ps->p = p;
			continue;
		}
		struct atom *a = add(s);
		if (a == NULL)
			return error(ps, "out of memory");
		if (*p == '^' && at_start) {
			a->kind = A_BOL;
			p++;
		} else if (*p == '$' && (p[1] == 0 || (p[1] == '\\' && p[2] == ')' && in_group))) {
			a->kind = A_EOL;
			p++;
		} else if (*p == '.') {
			a->kind = A_ANY;
			p++;
		} else if (*p == '[') {
			ps->p = p + 1;
			if (bracket(ps, a) < 0)
				return -1;
			p = ps->p;
		} else if (p[0] == '\\' && p[1] == '(') {
			if (ps->ngroups == MAX_GROUPS)
				return error(ps, "more than 9 \\( groups");
			a->kind = A_GROUP;
			a->group = ++ps->ngroups;
			a->body = calloc(1, sizeof *a->body);
			if (a->body == NULL)
				return error(ps, "out of memory");
			ps->p = p + 2;
			if (parse_seq(ps, a->body, 1) < 0)
				return -1;
			p = ps->p;
		} else if (p[0] == '\\' && p[1] >= '1' && p[1] <= '9') {
			int g = p[1] - '0';
			if (g > ps->ngroups)
				return error(ps, "\\N names a group not yet closed");
			a->kind = A_BACKREF;
			a->group = g;
			p += 2;
		} else if (p[0] == '\\') {
			if (p[1] == 0)
				return error(ps, "a \\ at the end");
			a->kind = A_CHAR;
			a->c = (unsigned char)p[1];
			p += 2;
		} else {
			a->kind = A_CHAR;
			a->c = (unsigned char)*p++;
		}
		if (a->kind == A_CHAR && ps->icase)
			a->c = (unsigned char)tolower(a->c);
		ps->p = p;
		at_start = 0;
	}
}

struct bre *bre_compile(const char *pattern, int icase, char *err, size_t errsize)
{
	struct bre *re = calloc(1, sizeof *re);
	if (re == NULL) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	struct parser ps = { .p = pattern, .icase = icase, .err = err, .errsize = errsize };
	re->icase = icase;
	if (parse_seq(&ps, &re->top, 0) < 0) {
		bre_free(re);
		return NULL;
	}
	re->ngroups = ps.ngroups;
	return re;
}

void bre_free(struct bre *re)
{
	if (re == NULL)
		return;
	free_seq(&re->top);
	free(re);
}

/* ---- matching ------------------------------------------------------------- */

struct ctx {
	const struct bre *re;
	const unsigned char *s;
	long len;
	long gstart[MAX_GROUPS + 1], gend[MAX_GROUPS + 1];
	int depth;
	int too_deep;
};

/* Where to go when a group's sequence ends. */
struct frame {
	const struct atom *grp;       /* the group atom */
	int count;                    /* iterations done, this one included */
	long start;                   /* where this iteration began */
	const struct seq *seq;        /* the sequence holding the group atom */
	int idx;                      /* its index there */
	const struct frame *up;       /* the frame of the enclosing group */
};

static int m(struct ctx *c, const struct seq *seq, int idx, long pos, const struct frame *up);

static int one(const struct ctx *c, const struct atom *a, long pos)
{
	if (pos >= c->len)
		return 0;
	unsigned ch = c->s[pos];
	switch (a->kind) {
	case A_ANY:
		return 1;
	case A_CHAR:
		return (c->re->icase ? (unsigned)tolower((int)ch) : ch) == a->c;
	case A_SET:
		return (a->set[ch >> 3] >> (ch & 7)) & 1;
	default:
		return 0;
	}
}

/* Try iteration count+1 of group atom seq->a[idx] at pos, then (if allowed)
 * going on without it.  Greedy: more iterations first. */
static int group_iter(struct ctx *c, const struct seq *seq, int idx, int count, long pos,
                      const struct frame *up)
{
	const struct atom *a = &seq->a[idx];
	if (a->max == REP_INF || count < a->max) {
		long ss = c->gstart[a->group], se = c->gend[a->group];
		struct frame f = { a, count + 1, pos, seq, idx, up };
		c->gstart[a->group] = pos;
		if (m(c, a->body, 0, pos, &f))
			return 1;
		c->gstart[a->group] = ss;
		c->gend[a->group] = se;
	}
	if (count >= a->min)
		return m(c, seq, idx + 1, pos, up);
	return 0;
}

static int m(struct ctx *c, const struct seq *seq, int idx, long pos, const struct frame *up)
{
	if (c->too_deep)
		return 0;
	if (++c->depth > MAX_DEPTH) {
		c->too_deep = 1;
		c->depth--;
		return 0;
	}
	int r = 0;
	if (idx == seq->n) {
		if (up == NULL) {
			r = 1;
		} else {
			/* One iteration of a group is done. */
			long se = c->gend[up->grp->group];
			c->gend[up->grp->group] = pos;
			if (pos == up->start && up->count >= up->grp->min)
				r = m(c, up->seq, up->idx + 1, pos, up->up);   /* empty: no more turns */
			else
				r = group_iter(c, up->seq, up->idx, up->count, pos, up->up);
			if (!r)
				c->gend[up->grp->group] = se;
		}
		c->depth--;
		return r;
	}
	const struct atom *a = &seq->a[idx];
	switch (a->kind) {
	case A_BOL:
		r = pos == 0 && m(c, seq, idx + 1, pos, up);
		break;
	case A_EOL:
		r = pos == c->len && m(c, seq, idx + 1, pos, up);
		break;
	case A_GROUP:
		r = group_iter(c, seq, idx, 0, pos, up);
		break;
	case A_BACKREF: {
		long gs = c->gstart[a->group], ge = c->gend[a->group];
		long gl = gs >= 0 && ge >= gs ? ge - gs : 0;
		/* Count how many copies follow, then try from the most. */
		long k = 0, p = pos;
		while ((a->max == REP_INF || k < a->max) && p + gl <= c->len) {
			int same = 1;
			for (long i = 0; i < gl && same; i++) {
				unsigned x = c->s[gs + i], y = c->s[p + i];
				same = c->re->icase ? tolower((int)x) == tolower((int)y) : x == y;
			}
			if (!same)
				break;
			k++;
			p += gl;
			if (gl == 0)
				break;
		}
		for (; k >= a->min && !r; k--)
			r = m(c, seq, idx + 1, pos + k * gl, up);
		break;
	}
	default: {
		long k = 0;
		while ((a->max == REP_INF || k < a->max) && one(c, a, pos + k))
			k++;
		for (; k >= a->min && !r; k--)
			r = m(c, seq, idx + 1, pos + k, up);
		break;
	}
	}
	c->depth--;
	return r;
}

int bre_search(const struct bre *re, const char *text, size_t len)
{
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.re = re;
	c.s = (const unsigned char *)text;
	c.len = (long)len;
	int anchored = re->top.n > 0 && re->top.a[0].kind == A_BOL;
	for (long start = 0; start <= c.len; start++) {
		for (int g = 0; g <= MAX_GROUPS; g++)
			c.gstart[g] = c.gend[g] = -1;
		c.depth = 0;
		if (m(&c, &re->top, 0, start, NULL))
			return 1;
		if (c.too_deep)
			return -1;
		if (anchored)
			break;
	}
	return 0;
}
