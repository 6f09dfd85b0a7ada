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
		t->align[i] = (align && align[i] == 'r') ? 'r' : 'l';
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

static void render_row(strbuf_t *b, const kgb_cli_table_t *t, char *const *cells, size_t ncells,
                       const size_t *width)
{
	/* the last non-empty cell ends the line: no trailing blanks */
	int last = -1;
	for (int c = 0; c < t->ncols; c++)
		if ((size_t)c < ncells && cells[c][0])
			last = c;
	for (int c = 0; c <= last; c++) {
		const char *s = (size_t)c < ncells ? cells[c] : "";
		size_t w = kgb_cli_text_width(s);
		size_t pad = width[c] > w ? width[c] - w : 0;
		if (c > 0)
			sb_add(b, "  ", 2);
		if (t->align[c] == 'r')
			sb_pad(b, pad);
		sb_add(b, s, strlen(s));
		if (t->align[c] != 'r' && c < last)
			sb_pad(b, pad);
	}
	sb_add(b, "\n", 1);
}

/* s cut to at most w display columns, ending in "..." when cut (caller frees). */
static char *fit(const char *s, size_t w)
{
	if (kgb_cli_text_width(s) <= w)
		return kgb_xstrdup(s);
	size_t keep = w > 3 ? w - 3 : 0, cols = 0;
	const unsigned char *p = (const unsigned char *)s;
	while (*p && cols < keep) {
		p++;
		while ((*p & 0xC0) == 0x80)
			p++;
		cols++;
	}
	return kgb_xasprintf("%.*s%s", (int)((const char *)p - s), s, w >= 3 ? "..." : "");
}

/* Render a table within max_width columns; see output.h. */
char *kgb_cli_table_render_width(const kgb_cli_table_t *t, size_t max_width)
{
	size_t *width = kgb_xcalloc((size_t)t->ncols, sizeof *width);
	size_t *floor = kgb_xcalloc((size_t)t->ncols, sizeof *floor);
	strbuf_t b = { 0 };

	for (int c = 0; c < t->ncols; c++)
		width[c] = kgb_cli_text_width(t->headers[c]);
	for (size_t i = 0; i < t->ncells; i++) {
		size_t c = i % (size_t)t->ncols;
		width[c] = KGB_MAX(width[c], kgb_cli_text_width(t->cells[i]));
	}
	/* too wide: narrow the widest text (left-aligned) column first, never below its
	 * header or 12 columns; numbers (right-aligned) are never cut */
	size_t total = 0;
	for (int c = 0; c < t->ncols; c++) {
		total += width[c] + (c ? 2 : 0);
		floor[c] = KGB_MAX(kgb_cli_text_width(t->headers[c]), (size_t)12);
	}
	bool cut = false;
	while (max_width > 0 && total > max_width) {
		int widest = -1;
		for (int c = 0; c < t->ncols; c++)
			if (t->align[c] != 'r' && width[c] > floor[c] && (widest < 0 || width[c] > width[widest]))
				widest = c;
		if (widest < 0)
			break;
		size_t over = total - max_width, room = width[widest] - floor[widest];
		/* shrink to the next widest text column's width at most, so wide columns share the cut */
		size_t next = 0;
		for (int c = 0; c < t->ncols; c++)
			if (c != widest && t->align[c] != 'r' && width[c] > next)
				next = width[c];
		size_t step = KGB_MIN(over, room);
		if (next > floor[widest] && width[widest] > next && width[widest] - next < step)
			step = KGB_MAX(width[widest] - next, (size_t)1);
		width[widest] -= step;
		total -= step;
		cut = true;
	}
	char **row = kgb_xcalloc((size_t)t->ncols, sizeof *row);
	for (size_t r = 0; r == 0 || (r - 1) * (size_t)t->ncols < t->ncells; r++) {
		char *const *src = r == 0 ? t->headers : t->cells + (r - 1) * (size_t)t->ncols;
		size_t n = r == 0 ? (size_t)t->ncols : KGB_MIN((size_t)t->ncols, t->ncells - (r - 1) * (size_t)t->ncols);
		if (!cut) {
			render_row(&b, t, src, n, width);
			continue;
		}
		for (size_t c = 0; c < n; c++)
			row[c] = fit(src[c], width[c]);
		render_row(&b, t, row, n, width);
		for (size_t c = 0; c < n; c++)
			free(row[c]);
	}
	free(row);
	free(width);
	free(floor);
	if (!b.p)
		b.p = kgb_xstrdup("");
	return b.p;
}

/* Render a table; see output.h. */
char *kgb_cli_table_render(const kgb_cli_table_t *t)
{
	return kgb_cli_table_render_width(t, 0);
}

/* The default table width; see output.h. */
size_t kgb_cli_table_width(void)
{
	const char *e = getenv("KGB_TABLE_WIDTH");
	if (e && *e)
		return (size_t)strtoul(e, NULL, 10);
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 120;
}

/* Print a table; see output.h. */
void kgb_cli_table_print(const kgb_cli_table_t *t, FILE *f)
{
	char *s = kgb_cli_table_render_width(t, kgb_cli_table_width());
	fputs(s, f);
	free(s);
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

/* Print a JSON value and release it; see output.h. */
void kgb_cli_json_print(FILE *f, json_t *j)
{
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
