/*
 * progdoc.c - the guest programs' documentation, taken from one place: the
 * comment at the top of each apps/NAME.c, which starts
 *
 *     NAME.c - what the program does, in one sentence.
 *       NAME [OPTIONS] ARGS...      a usage line (or several), then what the
 *       NAME OTHER FORM             options mean, up to the next blank line
 *
 * From it the build makes
 *
 *   progdoc usage NAME apps/NAME.c          C source defining libos_prog_usage,
 *                                           which the library OS prints when the
 *                                           program is run with -h (libos/start.c)
 *   progdoc table NAME=apps/NAME.c ...      C source defining progdocs[], every
 *                                           program's name and sentence: the
 *                                           shell's `help` (apps/progdoc.h)
 *
 * A program whose comment lacks the sentence or a usage line stops the
 * build with a message naming the file, so the list cannot go stale.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINES 200
#define LINE_LEN  512

struct doc {
	char summary[LINE_LEN];
	char usage[MAX_LINES][LINE_LEN];
	int nusage;
};

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		perror(path);
		exit(1);
	}
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return strdup(buf);
}

static int fail(const char *path, const char *what)
{
	fprintf(stderr, "progdoc: %s: %s (see tools/progdoc.c for the form)\n", path, what);
	exit(1);
}

/* The comment's lines, with the leading " * " taken off. */
static int comment_lines(const char *path, char *text, char lines[][LINE_LEN])
{
	char *start = strstr(text, "/*");
	if (start == NULL)
		fail(path, "no comment at the top");
	char *end = strstr(start + 2, "*/");
	if (end == NULL)
		fail(path, "the first comment does not end");
	*end = 0;
	int n = 0;
	for (char *line = start + 2; line && n < MAX_LINES; ) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '*')
			s++;
		if (*s == ' ')
			s++;
		snprintf(lines[n++], LINE_LEN, "%s", s);
		line = nl ? nl + 1 : NULL;
	}
	return n;
}

static int blank(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == 0;
}

static void parse(const char *name, const char *path, struct doc *d)
{
	static char lines[MAX_LINES][LINE_LEN];
	char *text = read_file(path);
	int n = comment_lines(path, text, lines);
	free(text);
	memset(d, 0, sizeof *d);

	/* The sentence: after "NAME.c - ", to its full stop, over several lines. */
	char head[LINE_LEN];
	snprintf(head, sizeof head, "%s.c - ", name);
	int i = 0;
	while (i < n && blank(lines[i]))
		i++;
	if (i == n || strncmp(lines[i], head, strlen(head)) != 0)
		fail(path, "the comment does not start with \"NAME.c - what it does.\"");
	char sentence[4 * LINE_LEN] = "";
	for (int k = i; k < n && !blank(lines[k]); k++) {
		const char *s = k == i ? lines[k] + strlen(head) : lines[k];
		while (*s == ' ')
			s++;
		if (k > i && strncmp(s, name, strlen(name)) == 0 &&
		    (s[strlen(name)] == ' ' || s[strlen(name)] == 0))
			break;                    /* a usage line: the sentence had no stop */
		if (sentence[0])
			strncat(sentence, " ", sizeof sentence - strlen(sentence) - 1);
		strncat(sentence, s, sizeof sentence - strlen(sentence) - 1);
		char *stop = strstr(sentence, ". ");
		if (stop) {
			*stop = 0;
			break;
		}
	}
	size_t len = strlen(sentence);
	while (len && (sentence[len - 1] == '.' || sentence[len - 1] == ' ' || sentence[len - 1] == ':'))
		sentence[--len] = 0;
	if (len == 0)
		fail(path, "the sentence after \"NAME.c - \" is empty");
	snprintf(d->summary, sizeof d->summary, "%s", sentence);

	/* The usage: from the first line that starts with the name. */
	int u = -1;
	for (int k = i + 1; k < n && u < 0; k++) {
		const char *s = lines[k];
		while (*s == ' ')
			s++;
		if (strncmp(s, name, strlen(name)) == 0 && (s[strlen(name)] == ' ' || s[strlen(name)] == 0))
			u = k;
	}
	if (u < 0)
		fail(path, "no usage line (a line starting with the program's name)");
	/* Up to the next blank line, indented as the first usage line is. */
	size_t indent = strspn(lines[u], " ");
	for (int k = u; k < n && !blank(lines[k]); k++) {
		size_t in = strspn(lines[k], " ");
		snprintf(d->usage[d->nusage++], LINE_LEN, "%s", lines[k] + (in < indent ? in : indent));
	}
}

/* The sentence, shorter, for a list: without parentheses, and without what
 * follows a colon (which elaborates). */
static void short_summary(const char *s, char *out, size_t size)
{
	size_t o = 0;
	int depth = 0;
	for (; *s && o + 1 < size; s++) {
		if (*s == '(') {
			depth++;
			while (o > 0 && out[o - 1] == ' ')
				o--;
			continue;
		}
		if (*s == ')') {
			if (depth)
				depth--;
			continue;
		}
		if (depth)
			continue;
		if (*s == ':' && (s[1] == ' ' || s[1] == 0))
			break;
		out[o++] = *s;
	}
	while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == ',' || out[o - 1] == '.'))
		o--;
	out[o] = 0;
}

/* s as the inside of a C string literal. */
static void c_string(const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if (*s == '\t')
			fputs("    ", stdout);
		else
			putchar(*s);
	}
}

int main(int argc, char **argv)
{
	struct doc d;
	if (argc == 4 && strcmp(argv[1], "usage") == 0) {
		parse(argv[2], argv[3], &d);
		printf("/* Generated by tools/progdoc from %s: edit that comment instead. */\n", argv[3]);
		printf("const char libos_prog_usage[] =\n\t\"%s - ", argv[2]);
		c_string(d.summary);
		printf(".\\n\"\n");
		for (int k = 0; k < d.nusage; k++) {
			printf("\t\"%s", k == 0 ? "usage: " : "       ");
			c_string(d.usage[k]);
			printf("\\n\"\n");
		}
		printf("\t;\n");
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "table") == 0) {
		printf("/* Generated by tools/progdoc from the comments of apps/NAME.c. */\n");
		printf("#include \"apps/progdoc.h\"\n\nconst struct progdoc progdocs[] = {\n");
		for (int a = 2; a < argc; a++) {
			char name[128];
			const char *eq = strchr(argv[a], '=');
			if (eq == NULL || (size_t)(eq - argv[a]) >= sizeof name) {
				fprintf(stderr, "progdoc: %s: give NAME=FILE\n", argv[a]);
				return 2;
			}
			snprintf(name, sizeof name, "%.*s", (int)(eq - argv[a]), argv[a]);
			parse(name, eq + 1, &d);
			char shorter[LINE_LEN];
			short_summary(d.summary, shorter, sizeof shorter);
			printf("\t{ \"%s\", \"", name);
			c_string(shorter);
			printf("\" },\n");
		}
		printf("\t{ 0, 0 },\n};\n");
		return 0;
	}
	fprintf(stderr, "usage: progdoc usage NAME FILE | progdoc table NAME=FILE...\n");
	return 2;
}
