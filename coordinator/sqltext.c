/* Text for the store's statements and values from its results; see sqltext.h. */
#include "sqltext.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void sbuf_room(kgb_sbuf_t *b, size_t n)
{
	if (b->len + n + 1 <= b->cap)
		return;
	b->cap = KGB_MAX(b->cap * 2, b->len + n + 64);
	b->s = kgb_xrealloc(b->s, b->cap);
}

void kgb_sbuf_add(kgb_sbuf_t *b, const char *s, size_t n)
{
	sbuf_room(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

void kgb_sbuf_addc(kgb_sbuf_t *b, char ch)
{
	sbuf_room(b, 1);
	b->s[b->len++] = ch;
	b->s[b->len] = 0;
}

void kgb_sbuf_u64(kgb_sbuf_t *b, uint64_t v)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sbuf_room(b, n);
	while (n)
		b->s[b->len++] = tmp[--n];
	b->s[b->len] = 0;
}

void kgb_sbuf_f64(kgb_sbuf_t *b, double v)
{
	if (isnan(v)) {
		kgb_sbuf_add(b, "NaN", 3);
	} else if (isinf(v)) {
		if (v > 0)
			kgb_sbuf_add(b, "Infinity", 8);
		else
			kgb_sbuf_add(b, "-Infinity", 9);
	} else if (v == 0) {
		kgb_sbuf_addc(b, '0');
	} else {
		sbuf_room(b, 32);
		b->len += (size_t)snprintf(b->s + b->len, 32, "%.17g", v);
	}
}

void kgb_sbuf_arrtext(kgb_sbuf_t *b, const char *s)
{
	if (!s) {
		kgb_sbuf_add(b, "NULL", 4);
		return;
	}
	size_t n = strlen(s);
	sbuf_room(b, 2 * n + 2);
	b->s[b->len++] = '"';
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			b->s[b->len++] = '\\';
		b->s[b->len++] = s[i];
	}
	b->s[b->len++] = '"';
	b->s[b->len] = 0;
}

char *kgb_sbuf_take(kgb_sbuf_t *b)
{
	char *s = b->s ? b->s : kgb_xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

static char numbuf[8][32];
static int numidx;

const char *kgb_coord_u64(uint64_t v)
{
	char *b = numbuf[numidx++ & 7];
	snprintf(b, 32, "%" PRIu64, v);
	return b;
}

const char *kgb_coord_i64(int64_t v)
{
	char *b = numbuf[numidx++ & 7];
	snprintf(b, 32, "%" PRId64, v);
	return b;
}

const char *kgb_coord_f64(double v)
{
	char *b = numbuf[numidx++ & 7];
	snprintf(b, 32, "%.17g", v);
	return b;
}

uint64_t kgb_coord_pq_u64(const char *s)
{
	if (!s || !*s)
		return 0;
	if (*s == '-')
		return (uint64_t)strtoll(s, NULL, 10);
	return strtoull(s, NULL, 10);
}

double kgb_coord_pq_f64(const char *s)
{
	if (!s || !*s)
		return 0;
	return strtod(s, NULL);
}

char *kgb_coord_utf8(const char *s)
{
	if (!s)
		return kgb_xstrdup("");
	size_t n = strlen(s);
	char *out = kgb_xmalloc(n + 1);
	size_t k = 0;
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		unsigned char ch = p[i];
		size_t len = ch < 0x80 ? 1 : (ch >> 5) == 6 ? 2 : (ch >> 4) == 14 ? 3 : (ch >> 3) == 30 ? 4 : 0;
		bool ok = len > 0 && i + len <= n;
		for (size_t q = 1; ok && q < len; q++)
			ok = (p[i + q] & 0xc0) == 0x80;
		/* reject overlong forms and surrogates the cheap way: what PostgreSQL refuses */
		if (ok && len == 2 && ch < 0xc2)
			ok = false;
		if (ok && len == 3 && ((ch == 0xe0 && p[i + 1] < 0xa0) || (ch == 0xed && p[i + 1] >= 0xa0)))
			ok = false;
		if (ok && len == 4 && ((ch == 0xf0 && p[i + 1] < 0x90) || ch > 0xf4 || (ch == 0xf4 && p[i + 1] >= 0x90)))
			ok = false;
		if (!ok) {
			out[k++] = '?';
			i++;
			continue;
		}
		memcpy(out + k, p + i, len);
		k += len;
		i += len;
	}
	out[k] = 0;
	return out;
}

void kgb_metrics_label(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}
