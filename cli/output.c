/* Output for the kgb CLI: aligned tables, number formats, progress bars, CSV, JSON. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "output.h"
#include "util.h"

struct kgb_cli_table {
	int ncols;
	char **headers;
	char *align;
	char **cells;          /* row-major, ncells used */
	size_t ncells, cap;
};

/* Create a table; see output.h. */
kgb_cli_table_t *kgb_cli_table_new(int ncols, const char *const *headers, const char *align)
{
	KGB_ASSERT(ncols > 0);
	kgb_cli_table_t *t = kgb_xcalloc(1, sizeof *t);
	t->ncols = ncols;
	t->headers = kgb_xcalloc((size_t)ncols, sizeof *t->headers);
	t->align = kgb_xcalloc((size_t)ncols + 1, 1);
	for (int i = 0; i < ncols; i++) {
		t->headers[i] = kgb_xstrdup(headers[i] ? headers[i] : "");
		t->align[i] = align && align[i] && strchr("rlwdDaAs", align[i]) ? align[i] : 'l';
	}
	return t;
}

/* Free a table and set *t to NULL; see output.h. */
void kgb_cli_table_destroy(kgb_cli_table_t **tp)
{
	kgb_cli_table_t *t = tp ? *tp : NULL;
	if (!t)
		return;
	for (int i = 0; i < t->ncols; i++)
		free(t->headers[i]);
	for (size_t i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->headers);
	free(t->align);
	free(t->cells);
	free(t);
	*tp = NULL;
}

/* Append a cell; see output.h. */
void kgb_cli_table_cell(kgb_cli_table_t *t, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	KGB_ASSERT_MSG(r >= 0, "out of memory formatting a table cell");
	/* tabs and newlines would break the alignment */
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	if (t->ncells == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->cells = kgb_xrealloc(t->cells, t->cap * sizeof *t->cells);
	}
	t->cells[t->ncells++] = s;
}

/* Number of rows; see output.h. */
size_t kgb_cli_table_rows(const kgb_cli_table_t *t)
{
	return (t->ncells + (size_t)t->ncols - 1) / (size_t)t->ncols;
}

/* Display width of UTF-8 text; see output.h. */
size_t kgb_cli_text_width(const char *s)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p & 0xC0) != 0x80)
			w++;
	return w;
}

typedef struct strbuf {
	char *p;
	size_t len, cap;
} strbuf_t;

static void sb_add(strbuf_t *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = KGB_MAX(b->cap * 2, b->len + n + 1 + 256);
		b->p = kgb_xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_pad(strbuf_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sb_add(b, " ", 1);
}

/* ---- fitting a table to a width ----
 *
 * Column kinds (the align string): 'l' and 'r' hold values a user reads or types
 * (identifiers, verdicts, parameters, times, numbers): never cut. 'a' and 'A' (left,
 * right) may lose their bracketed decoration ("1.42x [1.30-1.55] tie" -> "1.42x tie",
 * "base (baseline)" -> "base"). 'd' and 'D' are decoration (device names, counts a
 * second table has): dropped when the table does not fit. 'w' is free text (failure
 * messages, notes): wrapped onto continuation lines. 's' is a key column whose rows
 * may be grouped under "HEADER: value" headings when nothing else makes the table fit.
 * A narrowed table says what it left out on its last line. */

static bool kind_left(char k)
{
	return k != 'r' && k != 'A' && k != 'D';
}

/* s without its " [...]" and " (...)" parts (caller frees). */
static char *abbreviate(const char *s)
{
	strbuf_t b = { 0 };
	for (const char *p = s; *p;) {
		if (*p == ' ' && (p[1] == '[' || p[1] == '(')) {
			const char *close = strchr(p + 2, p[1] == '[' ? ']' : ')');
			if (close) {
				p = close + 1;
				continue;
			}
		}
		sb_add(&b, p, 1);
		p++;
	}
	return b.p ? b.p : kgb_xstrdup("");
}

/* The byte length of the first line of s wrapped at w display columns (at a blank
 * when there is one, else in the middle of a word); *next: where the rest starts. */
static size_t wrap_line(const char *s, size_t w, const char **next)
{
	size_t cols = 0, last_blank = 0;
	const char *p = s;
	while (*p && cols < w) {
		if (*p == ' ')
			last_blank = (size_t)(p - s);
		p++;
		while ((*p & 0xC0) == 0x80)
			p++;
		cols++;
	}
	if (!*p) {
		*next = p;
		return (size_t)(p - s);
	}
	if (*p == ' ') {
		last_blank = (size_t)(p - s);
	}
	size_t len = last_blank > 0 ? last_blank : (size_t)(p - s);
	const char *n = s + len;
	while (*n == ' ')
		n++;
	*next = n;
	return len;
}

typedef struct fitted {
	int ncols;
	int *col;              /* the source column of each shown column */
	char *kind;
	size_t *width;
	char **hdr;            /* not owned */
	char ***rows;          /* rows[r][c], owned */
	size_t nrows;
	size_t *order;         /* row order (grouping) */
	strbuf_t pre, note;
} fitted_t;

static size_t fitted_total(const fitted_t *F)
{
	size_t total = 0;
	for (int c = 0; c < F->ncols; c++)
		if (F->kind[c] != 'S')
			total += F->width[c] + (total ? 2 : 0);
	return total;
}

/* Rows a and b under the same heading: equal in every grouped ('S') column. */
static bool same_group(const fitted_t *F, size_t a, size_t b)
{
	for (int c = 0; c < F->ncols; c++)
		if (F->kind[c] == 'S' && strcmp(F->rows[a][c], F->rows[b][c]) != 0)
			return false;
	return true;
}

static void fitted_widths(fitted_t *F)
{
	for (int c = 0; c < F->ncols; c++) {
		F->width[c] = kgb_cli_text_width(F->hdr[c]);
		for (size_t r = 0; r < F->nrows; r++)
			F->width[c] = KGB_MAX(F->width[c], kgb_cli_text_width(F->rows[r][c]));
	}
}

static void fitted_remove(fitted_t *F, int c)
{
	for (size_t r = 0; r < F->nrows; r++) {
		free(F->rows[r][c]);
		memmove(&F->rows[r][c], &F->rows[r][c + 1], (size_t)(F->ncols - c - 1) * sizeof(char *));
	}
	memmove(&F->col[c], &F->col[c + 1], (size_t)(F->ncols - c - 1) * sizeof *F->col);
	memmove(&F->kind[c], &F->kind[c + 1], (size_t)(F->ncols - c - 1));
	memmove(&F->width[c], &F->width[c + 1], (size_t)(F->ncols - c - 1) * sizeof *F->width);
	memmove(&F->hdr[c], &F->hdr[c + 1], (size_t)(F->ncols - c - 1) * sizeof *F->hdr);
	F->ncols--;
}

static void note_add(fitted_t *F, const char *what, const char *hdr)
{
	if (!F->note.p || !strstr(F->note.p, what)) {
		if (F->note.p)
			sb_add(&F->note, "; ", 2);
		sb_add(&F->note, what, strlen(what));
	} else {
		sb_add(&F->note, ",", 1);
	}
	sb_add(&F->note, " ", 1);
	sb_add(&F->note, hdr, strlen(hdr));
}

static void render_fitted_row(strbuf_t *b, const fitted_t *F, char *const *cells)
{
	/* the 'w' cells wrap at their width: continuation lines carry only them */
	const char **rest = kgb_xcalloc((size_t)F->ncols, sizeof *rest);
	char **line = kgb_xcalloc((size_t)F->ncols, sizeof *line);
	for (int c = 0; c < F->ncols; c++)
		rest[c] = cells[c];
	for (bool first = true;; first = false) {
		bool any = false;
		for (int c = 0; c < F->ncols; c++) {
			const char *next = rest[c];
			size_t len = 0;
			if (F->kind[c] == 'w') {
				len = wrap_line(rest[c], F->width[c], &next);
			} else if (first) {
				len = strlen(rest[c]);
				next = rest[c] + len;
			}
			line[c] = kgb_xasprintf("%.*s", (int)len, rest[c]);
			rest[c] = next;
			any |= len > 0;
		}
		int last = -1;
		for (int c = 0; c < F->ncols; c++)
			if (F->kind[c] != 'S' && line[c][0])
				last = c;
		bool lead = false;
		for (int c = 0; c <= last && (any || first); c++) {
			if (F->kind[c] == 'S')
				continue;
			const char *s = line[c];
			size_t w = kgb_cli_text_width(s);
			size_t pad = F->width[c] > w ? F->width[c] - w : 0;
			if (lead)
				sb_add(b, "  ", 2);
			lead = true;
			if (!kind_left(F->kind[c]))
				sb_pad(b, pad);
			sb_add(b, s, strlen(s));
			if (kind_left(F->kind[c]) && c < last)
				sb_pad(b, pad);
		}
		if (any || first)
			sb_add(b, "\n", 1);
		bool more = false;
		for (int c = 0; c < F->ncols; c++) {
			free(line[c]);
			more |= F->kind[c] == 'w' && *rest[c];
		}
		if (!more)
			break;
	}
	free(rest);
	free(line);
}

/* Render a table within max_width columns; see output.h. */
char *kgb_cli_table_render_width(const kgb_cli_table_t *t, size_t max_width)
{
	fitted_t F = { .ncols = t->ncols };
	strbuf_t b = { 0 };

	F.nrows = kgb_cli_table_rows(t);
	F.col = kgb_xcalloc((size_t)t->ncols, sizeof *F.col);
	F.kind = kgb_xcalloc((size_t)t->ncols + 1, 1);
	F.width = kgb_xcalloc((size_t)t->ncols, sizeof *F.width);
	F.hdr = kgb_xcalloc((size_t)t->ncols, sizeof *F.hdr);
	F.rows = kgb_xcalloc(F.nrows + 1, sizeof *F.rows);
	F.order = kgb_xcalloc(F.nrows + 1, sizeof *F.order);
	for (int c = 0; c < t->ncols; c++) {
		F.col[c] = c;
		F.kind[c] = t->align[c];
		F.hdr[c] = t->headers[c];
	}
	for (size_t r = 0; r < F.nrows; r++) {
		F.rows[r] = kgb_xcalloc((size_t)t->ncols, sizeof **F.rows);
		F.order[r] = r;
		for (int c = 0; c < t->ncols; c++) {
			size_t i = r * (size_t)t->ncols + (size_t)c;
			F.rows[r][c] = kgb_xstrdup(i < t->ncells ? t->cells[i] : "");
		}
	}
	fitted_widths(&F);

	/* 1. a column with one value on every row (two rows or more): said once, above */
	for (int c = 0; max_width && fitted_total(&F) > max_width && c < F.ncols; c++) {
		if (F.kind[c] == 'w' || F.nrows < 2 || !F.rows[0][c][0])
			continue;
		size_t r = 1;
		while (r < F.nrows && strcmp(F.rows[r][c], F.rows[0][c]) == 0)
			r++;
		if (r < F.nrows)
			continue;
		sb_add(&F.pre, F.hdr[c], strlen(F.hdr[c]));
		sb_add(&F.pre, ": ", 2);
		sb_add(&F.pre, F.rows[0][c], strlen(F.rows[0][c]));
		sb_add(&F.pre, "\n", 1);
		fitted_remove(&F, c--);
	}
	/* 2. bracketed decoration left out */
	for (int c = 0; max_width && fitted_total(&F) > max_width && c < F.ncols; c++) {
		if (F.kind[c] != 'a' && F.kind[c] != 'A')
			continue;
		for (size_t r = 0; r < F.nrows; r++) {
			char *s = abbreviate(F.rows[r][c]);
			free(F.rows[r][c]);
			F.rows[r][c] = s;
		}
		fitted_widths(&F);
		note_add(&F, "abbreviated:", F.hdr[c]);
	}
	/* 3. decoration columns dropped, the last first */
	for (int c = F.ncols - 1; max_width && fitted_total(&F) > max_width && c >= 0; c--) {
		if (F.kind[c] != 'd' && F.kind[c] != 'D')
			continue;
		note_add(&F, "not shown:", F.hdr[c]);
		fitted_remove(&F, c);
	}
	/* 4. free text wrapped, down to its header's width or 20 columns */
	size_t wrap_floor = 20;
	for (int pass = 0; pass < 2; pass++) {
		size_t total = fitted_total(&F);
		for (int c = 0; max_width && total > max_width && c < F.ncols; c++) {
			if (F.kind[c] != 'w')
				continue;
			size_t floor = KGB_MAX(kgb_cli_text_width(F.hdr[c]), wrap_floor);
			size_t room = F.width[c] > floor ? F.width[c] - floor : 0;
			size_t step = KGB_MIN(room, total - max_width);
			F.width[c] -= step;
			total -= step;
		}
		/* 5. rows grouped under headings of key columns ('s'), the one with the fewest
		 * distinct values first, then the next while the table is too wide */
		while (pass == 0 && max_width && total > max_width) {
			int best = -1;
			size_t best_n = F.nrows;
			for (int c = 0; c < F.ncols; c++) {
				if (F.kind[c] != 's')
					continue;
				size_t nd = 0;
				for (size_t r = 0; r < F.nrows; r++) {
					size_t k = 0;
					while (k < r && strcmp(F.rows[k][c], F.rows[r][c]) != 0)
						k++;
					nd += k == r;
				}
				if (nd < best_n) {
					best = c;
					best_n = nd;
				}
			}
			if (best < 0)
				break;
			F.kind[best] = 'S';
			/* stable: groups in order of first appearance */
			size_t k = 0;
			bool *placed = kgb_xcalloc(F.nrows + 1, sizeof *placed);
			for (size_t r = 0; r < F.nrows; r++) {
				if (placed[r])
					continue;
				for (size_t q = r; q < F.nrows; q++)
					if (!placed[q] && same_group(&F, r, q)) {
						placed[q] = true;
						F.order[k++] = q;
					}
			}
			free(placed);
			/* widths of the other columns: the wrapped ones stay narrowed */
			for (int c = 0; c < F.ncols; c++)
				if (F.kind[c] == 'w') {
					size_t keep = F.width[c];
					fitted_widths(&F);
					F.width[c] = keep;
				}
			total = fitted_total(&F);
		}
	}
	/* free text widened again into the room the headings made */
	for (int c = 0; max_width && c < F.ncols; c++) {
		size_t total = fitted_total(&F);
		if (F.kind[c] != 'w' || total >= max_width)
			continue;
		size_t natural = kgb_cli_text_width(F.hdr[c]);
		for (size_t r = 0; r < F.nrows; r++)
			natural = KGB_MAX(natural, kgb_cli_text_width(F.rows[r][c]));
		F.width[c] = KGB_MIN(natural, F.width[c] + (max_width - total));
	}
	/* 6. free text dropped last */
	for (int c = F.ncols - 1; max_width && fitted_total(&F) > max_width && c >= 0; c--) {
		if (F.kind[c] != 'w')
			continue;
		note_add(&F, "not shown:", F.hdr[c]);
		fitted_remove(&F, c);
	}

	if (F.pre.p)
		sb_add(&b, F.pre.p, F.pre.len);
	if (max_width && fitted_total(&F) > max_width) {
		/* 7. still too wide: one "HEADER  value" line per column, a block per row (as
		 * condor_q -l and scontrol show print a record) */
		size_t hw = 0;
		for (int c = 0; c < F.ncols; c++)
			hw = KGB_MAX(hw, kgb_cli_text_width(F.hdr[c]));
		for (size_t i = 0; i < F.nrows; i++) {
			size_t r = F.order[i];
			if (i)
				sb_add(&b, "\n", 1);
			for (int c = 0; c < F.ncols; c++) {
				if (!F.rows[r][c][0])
					continue;
				char *l = kgb_xasprintf("%-*s  %s\n", (int)hw, F.hdr[c], F.rows[r][c]);
				sb_add(&b, l, strlen(l));
				free(l);
			}
		}
		goto notes;
	}
	render_fitted_row(&b, &F, F.hdr);
	for (size_t i = 0; i < F.nrows; i++) {
		size_t r = F.order[i];
		if (strchr(F.kind, 'S') && (i == 0 || !same_group(&F, F.order[i - 1], r))) {
			size_t hw = 0;
			for (int c = 0; c < F.ncols; c++)
				if (F.kind[c] == 'S')
					hw += (hw ? 2 : 0) + kgb_cli_text_width(F.hdr[c]) + 2 + kgb_cli_text_width(F.rows[r][c]);
			bool lead = false;
			for (int c = 0; c < F.ncols; c++) {
				if (F.kind[c] != 'S')
					continue;
				if (lead)
					sb_add(&b, max_width && hw > max_width ? "\n" : "  ", max_width && hw > max_width ? 1 : 2);
				lead = true;
				sb_add(&b, F.hdr[c], strlen(F.hdr[c]));
				sb_add(&b, ": ", 2);
				sb_add(&b, F.rows[r][c], strlen(F.rows[r][c]));
			}
			sb_add(&b, "\n", 1);
		}
		render_fitted_row(&b, &F, F.rows[r]);
	}
notes:
	if (F.note.p) {
		char *note = kgb_xasprintf("(%s; --wide shows every column)", F.note.p);
		for (const char *p = note; *p;) {
			const char *next;
			size_t len = wrap_line(p, max_width, &next);
			sb_add(&b, p, len);
			sb_add(&b, "\n", 1);
			p = next;
		}
		free(note);
	}
	for (size_t r = 0; r < F.nrows; r++) {
		for (int c = 0; c < F.ncols; c++)
			free(F.rows[r][c]);
		free(F.rows[r]);
	}
	free(F.rows);
	free(F.order);
	free(F.col);
	free(F.kind);
	free(F.width);
	free(F.hdr);
	free(F.pre.p);
	free(F.note.p);
	if (!b.p)
		b.p = kgb_xstrdup("");
	return b.p;
}

/* Render a table; see output.h. */
char *kgb_cli_table_render(const kgb_cli_table_t *t)
{
	return kgb_cli_table_render_width(t, 0);
}

static bool g_wide;
static char *g_columns;
static void columns_check(void);

/* See output.h. */
void kgb_cli_table_options(bool wide, const char *columns)
{
	g_wide = wide;
	free(g_columns);
	g_columns = columns && *columns ? kgb_xstrdup(columns) : NULL;
	static bool registered;
	if (g_columns && !registered) {
		atexit(columns_check);
		registered = true;
	}
}

/* The default table width; see output.h. */
size_t kgb_cli_table_width(void)
{
	if (g_wide)
		return 0;
	const char *e = getenv("KGB_TABLE_WIDTH");
	if (e && *e)
		return (size_t)strtoul(e, NULL, 10);
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 120;
}

/* A column name as -o compares it: lower case, '_' and ' ' as '-'. */
static char *col_key(const char *s, size_t n)
{
	char *k = kgb_xasprintf("%.*s", (int)n, s);
	for (char *p = k; *p; p++)
		*p = *p == '_' || *p == ' ' ? '-' : (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	return k;
}

/* The -o names no table printed has: reported when the command ends. */
static char *g_unmatched_seen;   /* ",name," of every name some table had */
static char *g_headers_seen;     /* the headers of the tables printed, for the message */

/* Append tag (freed) to the string *seen unless it holds it already. */
static void seen_add(char **seen, char *tag)
{
	if (!*seen || !strstr(*seen, tag)) {
		char *n = kgb_xasprintf("%s%s", *seen ? *seen : "", tag);
		free(*seen);
		*seen = n;
	}
	free(tag);
}

static void col_matched(const char *k)
{
	seen_add(&g_unmatched_seen, kgb_xasprintf(",%s,", k));
}

static void headers_seen(const kgb_cli_table_t *t)
{
	for (int c = 0; c < t->ncols; c++) {
		char *k = col_key(t->headers[c], strlen(t->headers[c]));
		seen_add(&g_headers_seen, kgb_xasprintf(" %s", k));
		free(k);
	}
}

/* atexit: a -o name that no table printed had is an error (exit status 1). */
static void columns_check(void)
{
	if (!g_columns || !g_headers_seen)
		return;
	bool bad = false;
	for (const char *p = g_columns; *p;) {
		size_t n = strcspn(p, ",");
		char *k = col_key(p, n);
		char *tag = kgb_xasprintf(",%s,", k);
		if (*k && (!g_unmatched_seen || !strstr(g_unmatched_seen, tag))) {
			fflush(stdout);
			fprintf(stderr, "kgb: -o/--format: no table printed has a column '%s' (columns:%s)\n", k, g_headers_seen);
			bad = true;
		}
		free(tag);
		free(k);
		p += n;
		if (*p == ',')
			p++;
	}
	if (bad) {
		fflush(stderr);
		_exit(1);
	}
}

/* t limited to the -o columns it has, in their order (NULL: t as it is). Exits with
 * status 1 naming the column when a name is close to one of t's but none of them. */
static kgb_cli_table_t *project(const kgb_cli_table_t *t)
{
	if (!g_columns)
		return NULL;
	headers_seen(t);
	int sel[64], nsel = 0;
	char **keys = kgb_xcalloc((size_t)t->ncols, sizeof *keys);
	for (int c = 0; c < t->ncols; c++)
		keys[c] = col_key(t->headers[c], strlen(t->headers[c]));
	for (const char *p = g_columns; *p && nsel < 64;) {
		size_t n = strcspn(p, ",");
		char *k = col_key(p, n);
		int found = -1, prefixed = 0;
		for (int c = 0; c < t->ncols && found < 0; c++)
			if (strcmp(keys[c], k) == 0)
				found = c;
		/* a prefix of one column's name names it ("op" for OPERATOR) */
		for (int c = 0; c < t->ncols && found < 0 && *k; c++)
			if (strncmp(keys[c], k, strlen(k)) == 0)
				prefixed = prefixed ? -1 : c + 1;
		if (found < 0 && prefixed > 0)
			found = prefixed - 1;
		if (found >= 0) {
			sel[nsel++] = found;
			col_matched(k);
		} else if (*k) {
			const char *near = kgb_cli_suggest(k, (const char *const *)keys, (size_t)t->ncols);
			if (near) {
				fprintf(stderr, "kgb: -o/--format: no column '%s'; did you mean '%s'?\n", k, near);
				exit(1);
			}
		}
		free(k);
		p += n;
		if (*p == ',')
			p++;
	}
	for (int c = 0; c < t->ncols; c++)
		free(keys[c]);
	free(keys);
	if (nsel == 0)
		return NULL;
	const char *hdr[64];
	char align[65];
	for (int i = 0; i < nsel; i++) {
		hdr[i] = t->headers[sel[i]];
		align[i] = t->align[sel[i]];
	}
	align[nsel] = '\0';
	kgb_cli_table_t *p = kgb_cli_table_new(nsel, hdr, align);
	size_t rows = kgb_cli_table_rows(t);
	for (size_t r = 0; r < rows; r++)
		for (int i = 0; i < nsel; i++) {
			size_t k = r * (size_t)t->ncols + (size_t)sel[i];
			kgb_cli_table_cell(p, "%s", k < t->ncells ? t->cells[k] : "");
		}
	return p;
}

/* See output.h. */
void kgb_cli_print_wrapped(FILE *f, const char *text)
{
	size_t w = kgb_cli_table_width();
	for (const char *s = text; *s;) {
		size_t len = strcspn(s, "\n");
		char *line = kgb_xasprintf("%.*s", (int)len, s);
		if (!w || kgb_cli_text_width(line) <= w) {
			fprintf(f, "%s\n", line);
		} else {
			/* continuation lines indented two more than the line's own indent */
			size_t ind = strspn(line, " ");
			size_t cont = KGB_MIN(ind + 2, w / 2);
			const char *p = line;
			for (bool first = true; *p; first = false) {
				const char *next;
				size_t room = first ? w : w - cont;
				size_t n = wrap_line(p, room, &next);
				fprintf(f, "%*s%.*s\n", first ? 0 : (int)cont, "", (int)n, p);
				p = next;
			}
		}
		free(line);
		s += len + (s[len] == '\n');
	}
}

/* See output.h. */
char *kgb_cli_table_render_fit(const kgb_cli_table_t *t)
{
	kgb_cli_table_t *p = project(t);
	char *s = kgb_cli_table_render_width(p ? p : t, kgb_cli_table_width());
	kgb_cli_table_destroy(&p);
	return s;
}

/* Print a table; see output.h. */
void kgb_cli_table_print(const kgb_cli_table_t *t, FILE *f)
{
	char *s = kgb_cli_table_render_fit(t);
	fputs(s, f);
	free(s);
}

/* Levenshtein distance of a and b (at most 64 characters of b counted). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = KGB_MIN(strlen(b), (size_t)64);
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			best = KGB_MIN(best, up + 1);
			best = KGB_MIN(best, row[j - 1] + 1);
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* See output.h. */
const char *kgb_cli_suggest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, len = strlen(word);
	size_t limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
	for (size_t i = 0; i < n; i++) {
		if (!cands[i] || !*cands[i])
			continue;
		size_t d = edit_distance(word, cands[i]);
		/* a prefix of a longer name ("res" for "results") counts as close too */
		if (len >= 3 && strncmp(cands[i], word, len) == 0)
			d = KGB_MIN(d, (size_t)1);
		if (d < best_d) {
			best = cands[i];
			best_d = d;
		}
	}
	return best_d <= limit ? best : NULL;
}

/* A number for CSV; see output.h. */
const char *kgb_cli_fmt_num(double x, char *buf, size_t n)
{
	if (!isfinite(x)) {
		snprintf(buf, n, "%s", "");
		return buf;
	}
	if (x == trunc(x) && fabs(x) < 9.007199254740992e15) {
		snprintf(buf, n, "%.0f", x);
		return buf;
	}
	/* the shortest of %.15g..%.17g that reads back as the same double */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	return buf;
}

/* ---- number formats ---- */

/* Format a speedup; see output.h. */
const char *kgb_cli_fmt_speedup(double x, char *buf, size_t n)
{
	if (!isfinite(x) || x <= 0)
		snprintf(buf, n, "-");
	else if (x < 9.995)
		snprintf(buf, n, "%.2fx", x);
	else if (x < 99.95)
		snprintf(buf, n, "%.1fx", x);
	else
		snprintf(buf, n, "%.0fx", x);
	return buf;
}

/* Format a token count; see output.h. */
const char *kgb_cli_fmt_tokens(double x, char *buf, size_t n)
{
	static const char suffix[] = "kMGTP";

	if (!isfinite(x) || x < 0) {
		snprintf(buf, n, "-");
		return buf;
	}
	if (x < 999.5) {
		snprintf(buf, n, "%.0f", x);
		return buf;
	}
	double v = x;
	int s = -1;
	/* scale so that the printed (rounded) value stays below 1000 */
	do {
		v /= 1000.0;
		s++;
	} while (v >= 999.5 && s < (int)sizeof suffix - 2);
	if (v < 99.95)
		snprintf(buf, n, "%.1f%c", v, suffix[s]);
	else
		snprintf(buf, n, "%.0f%c", v, suffix[s]);
	return buf;
}

const char *kgb_cli_fmt_local(int64_t unix_s, const char *fmt, char *buf, size_t n)
{
	if (unix_s <= 0) {
		kgb_strlcpy(buf, "-", n);
		return buf;
	}
	time_t t = (time_t)unix_s;
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, n, fmt, &tm);
	return buf;
}

/* Format a duration; see output.h. */
const char *kgb_cli_fmt_duration(double s, char *buf, size_t n)
{
	if (!isfinite(s) || s < 0) {
		snprintf(buf, n, "-");
	} else if (s < 9.995) {
		snprintf(buf, n, "%.2fs", s);
	} else if (s < 59.95) {
		snprintf(buf, n, "%.1fs", s);
	} else if (s < 3600) {
		long t = lround(s);
		snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
	} else {
		long t = lround(s / 60.0);
		snprintf(buf, n, "%ldh%02ldm", t / 60, t % 60);
	}
	return buf;
}

/* Format the age of an event; see output.h. */
const char *kgb_cli_fmt_ago(int64_t ms, char *buf, size_t n)
{
	int64_t s = ms / 1000;

	if (ms < 0)
		snprintf(buf, n, "never");
	else if (s < 1)
		snprintf(buf, n, "now");
	else if (s < 60)
		snprintf(buf, n, "%llds ago", (long long)s);
	else if (s < 3600)
		snprintf(buf, n, "%lldm ago", (long long)(s / 60));
	else if (s < 86400)
		snprintf(buf, n, "%lldh ago", (long long)(s / 3600));
	else
		snprintf(buf, n, "%lldd ago", (long long)(s / 86400));
	return buf;
}

/* Format a percentage; see output.h. */
const char *kgb_cli_fmt_pct(double num, double den, char *buf, size_t n)
{
	if (den <= 0 || !isfinite(num) || !isfinite(den)) {
		snprintf(buf, n, "-");
		return buf;
	}
	double p = 100.0 * num / den;
	if (p > 0 && p < 9.95)
		snprintf(buf, n, "%.1f%%", p);
	else
		snprintf(buf, n, "%.0f%%", p);
	return buf;
}

/* Format a time in ns; see output.h. */
const char *kgb_cli_fmt_ns(double ns, char *buf, size_t n)
{
	static const char *unit[] = { "ns", "us", "ms", "s" };
	int u = 0;

	if (!isfinite(ns) || ns <= 0) {
		snprintf(buf, n, "-");
		return buf;
	}
	while (ns >= 999.5 && u < 3) {
		ns /= 1000.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%.0f%s", ns, unit[u]);
	else if (ns < 9.995)
		snprintf(buf, n, "%.2f%s", ns, unit[u]);
	else if (ns < 99.95)
		snprintf(buf, n, "%.1f%s", ns, unit[u]);
	else
		snprintf(buf, n, "%.0f%s", ns, unit[u]);
	return buf;
}

/* Draw a progress bar; see output.h. */
const char *kgb_cli_progress_bar(char *buf, size_t n, int width, uint32_t done, uint32_t failed,
                                 uint32_t running, uint32_t total)
{
	static const char mark[3] = { '#', '!', '>' };
	uint64_t cnt[3] = { done, failed, running };
	int cells[3] = { 0, 0, 0 };
	uint64_t sum = (uint64_t)done + failed + running;
	uint64_t tot = KGB_MAX((uint64_t)total, sum);

	KGB_ASSERT(n >= 3);
	if (width < 1)
		width = 1;
	if ((size_t)width + 3 > n)
		width = (int)n - 3;
	if (tot > 0) {
		int used = 0;
		for (int i = 0; i < 3; i++) {
			cells[i] = (int)(cnt[i] * (uint64_t)width / tot);
			if (cnt[i] > 0 && cells[i] == 0)
				cells[i] = 1;
			used += cells[i];
		}
		/* the minimum of one cell may overflow the bar: take back from the largest */
		while (used > width) {
			int big = 0;
			for (int i = 1; i < 3; i++)
				if (cells[i] > cells[big])
					big = i;
			cells[big]--;
			used--;
		}
	}
	size_t k = 0;
	buf[k++] = '[';
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < cells[i]; j++)
			buf[k++] = mark[i];
	while (k < (size_t)width + 1)
		buf[k++] = '.';
	buf[k++] = ']';
	buf[k] = '\0';
	return buf;
}

/* ---- CSV ---- */

/* Quote a CSV field; see output.h. */
char *kgb_cli_csv_quote(const char *s)
{
	size_t len = s ? strlen(s) : 0;
	bool need = len > 0 && (s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t');

	for (size_t i = 0; i < len && !need; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r')
			need = true;
	if (!need)
		return kgb_xstrdup(s ? s : "");
	char *out = kgb_xmalloc(2 * len + 3);
	size_t k = 0;
	out[k++] = '"';
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"')
			out[k++] = '"';
		out[k++] = s[i];
	}
	out[k++] = '"';
	out[k] = '\0';
	return out;
}

/* Write one CSV line; see output.h. */
void kgb_cli_csv_row(FILE *f, const char *const *fields, int n)
{
	for (int i = 0; i < n; i++) {
		char *q = kgb_cli_csv_quote(fields[i]);
		if (i > 0)
			fputc(',', f);
		fputs(q, f);
		free(q);
	}
	fputc('\n', f);
}

/* ---- JSON ---- */

static bool g_csv;

/* See output.h. */
void kgb_cli_output_csv(bool on)
{
	g_csv = on;
}

/* The rows of a JSON document as CSV prints them: the document when it is an array;
 * else its largest member that is an array of objects; else the object itself. */
static json_t *csv_rows(json_t *j)
{
	if (json_is_array(j))
		return json_incref(j);
	json_t *best = NULL, *v;
	const char *k;
	json_object_foreach(j, k, v) {
		if (json_is_array(v) && json_array_size(v) > 0 && json_is_object(json_array_get(v, 0)) &&
		    (!best || json_array_size(v) > json_array_size(best)))
			best = v;
	}
	if (best)
		return json_incref(best);
	json_t *a = json_array();
	json_array_append(a, j);
	return a;
}

/* Flatten one row: nested objects as "key.sub" columns, arrays of scalars joined with
 * ";", other arrays as compact JSON. Values go into out (an object of strings). */
static void csv_flatten(json_t *out, const char *prefix, json_t *o)
{
	const char *k;
	json_t *v;
	char nb[64];
	json_object_foreach(o, k, v) {
		char *key = prefix ? kgb_xasprintf("%s.%s", prefix, k) : kgb_xstrdup(k);
		if (json_is_object(v)) {
			csv_flatten(out, key, v);
			free(key);
			continue;
		}
		char *text = NULL;
		if (json_is_string(v)) {
			text = kgb_xstrdup(json_string_value(v));
		} else if (json_is_number(v)) {
			text = kgb_xstrdup(kgb_cli_fmt_num(json_number_value(v), nb, sizeof nb));
		} else if (json_is_boolean(v)) {
			text = kgb_xstrdup(json_is_true(v) ? "true" : "false");
		} else if (json_is_array(v)) {
			bool scalars = true;
			size_t i;
			json_t *e;
			json_array_foreach(v, i, e) scalars &= json_is_string(e) || json_is_number(e);
			if (scalars) {
				strbuf_t b = { 0 };
				json_array_foreach(v, i, e) {
					const char *t = json_is_string(e) ? json_string_value(e)
					                                  : kgb_cli_fmt_num(json_number_value(e), nb, sizeof nb);
					if (i)
						sb_add(&b, ";", 1);
					sb_add(&b, t, strlen(t));
				}
				text = b.p ? b.p : kgb_xstrdup("");
			} else {
				text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
			}
		} else {
			text = kgb_xstrdup("");
		}
		json_object_set_new(out, key, json_string(text));
		free(text);
		free(key);
	}
}

/* See output.h. */
void kgb_cli_json_to_csv(FILE *f, json_t *j)
{
	json_t *rows = csv_rows(j), *flat = json_array(), *cols = json_object(), *o;
	size_t i;
	json_array_foreach(rows, i, o) {
		json_t *r = json_object();
		if (json_is_object(o))
			csv_flatten(r, NULL, o);
		else
			json_object_set_new(r, "value", json_string(""));
		const char *k;
		json_t *v;
		json_object_foreach(r, k, v) if (!json_object_get(cols, k)) json_object_set_new(cols, k, json_true());
		json_array_append_new(flat, r);
	}
	size_t nc = json_object_size(cols), c = 0;
	const char **fields = kgb_xcalloc(nc + 1, sizeof *fields), **names = kgb_xcalloc(nc + 1, sizeof *names);
	const char *k;
	json_t *v;
	json_object_foreach(cols, k, v) names[c++] = k;
	kgb_cli_csv_row(f, names, (int)nc);
	json_array_foreach(flat, i, o) {
		for (c = 0; c < nc; c++)
			fields[c] = json_string_value(json_object_get(o, names[c]));
		kgb_cli_csv_row(f, fields, (int)nc);
	}
	free(fields);
	free(names);
	json_decref(cols);
	json_decref(flat);
	json_decref(rows);
}

/* Print a JSON value and release it; see output.h. */
void kgb_cli_json_print(FILE *f, json_t *j)
{
	if (g_csv) {
		kgb_cli_json_to_csv(f, j);
		json_decref(j);
		return;
	}
	json_dumpf(j, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	fputc('\n', f);
	json_decref(j);
}

const char *kgb_cli_seed_text(uint64_t seed, const char *state, char *buf, size_t n)
{
	if (!state || !*state)
		snprintf(buf, n, "input seed: not reported");
	else if (strcmp(state, "secret") == 0)
		snprintf(buf, n, "input seed: secret until the campaign ends");
	else if (strcmp(state, "revealed") == 0)
		snprintf(buf, n, "input seed %llu (drawn secretly, revealed now that the campaign has ended)",
		         (unsigned long long)seed);
	else
		snprintf(buf, n, "input seed %llu (fixed by the manifest: public)", (unsigned long long)seed);
	return buf;
}
