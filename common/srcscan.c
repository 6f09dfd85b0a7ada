/* What a kernel source may ask its compiler to read: see srcscan.h. */
#include "srcscan.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Toolkit headers a CUDA C or HIP source may include (resolved by NVRTC's built-in
 * headers or the toolkit's include directory, never next to the source). */
static const char *const cuda_headers[] = {
	"cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "cuda_fp6.h", "cuda_fp4.h", "mma.h",
	"cooperative_groups.h", "cooperative_groups/reduce.h", "cooperative_groups/scan.h",
	"cooperative_groups/memcpy_async.h", "cuda_pipeline.h", "cuda_awbarrier.h", "cuda/barrier",
	"cuda/pipeline", "cuda/atomic", "cuda/std/cstdint", "cuda/std/limits", "cuda/std/type_traits",
	"cuda/std/utility", "cuda/std/cmath", "cuda/std/climits", "cuda/std/array", "cuda/std/tuple",
};
static const char *const hip_headers[] = {
	"hip/hip_runtime.h", "hip/hip_fp16.h", "hip/hip_bf16.h", "hip/hip_cooperative_groups.h",
	"hip/hip_fp8.h",
};

typedef struct scan {
	char *t;          /* the text with its line splices removed */
	uint32_t *line;   /* original line of each byte of t */
	size_t n;
	const char *name;
	char *err;
	size_t errlen;
} scan_t;

static int refuse(scan_t *s, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(scan_t *s, size_t at, const char *fmt, ...)
{
	int k = snprintf(s->err, s->errlen, "%s: line %u: ", s->name, s->n ? s->line[at < s->n ? at : s->n - 1] : 1);
	if (k >= 0 && (size_t)k < s->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->err + k, s->errlen - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Remove backslash-newline splices (a backslash, optional blanks, a newline). */
static void splice(scan_t *s, const char *src, size_t len)
{
	s->t = kgb_xmalloc(len + 1);
	s->line = kgb_xmalloc((len + 1) * sizeof *s->line);
	uint32_t ln = 1;
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		if (src[i] == '\\') {
			size_t k = i + 1;
			while (k < len && (src[k] == ' ' || src[k] == '\t' || src[k] == '\r'))
				k++;
			if (k < len && src[k] == '\n') {
				ln++;
				i = k;
				continue;
			}
		}
		s->t[o] = src[i];
		s->line[o++] = ln;
		if (src[i] == '\n')
			ln++;
	}
	s->t[o] = 0;
	s->n = o;
}

/* Skip blanks and block comments on the line from i. */
static size_t skip_blank(const scan_t *s, size_t i)
{
	for (;;) {
		if (i < s->n && (s->t[i] == ' ' || s->t[i] == '\t' || s->t[i] == '\v' || s->t[i] == '\f' || s->t[i] == '\r'))
			i++;
		else if (i + 1 < s->n && s->t[i] == '/' && s->t[i + 1] == '*') {
			const char *e = strstr(s->t + i + 2, "*/");
			i = e ? (size_t)(e - s->t) + 2 : s->n;
		} else
			return i;
	}
}

static bool ident_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '$';
}

/* The rest of the line from i, shortened for a message. */
static void line_text(const scan_t *s, size_t i, char *buf, size_t n)
{
	size_t k = 0;
	while (i < s->n && s->t[i] != '\n' && k + 1 < n && k < 120) {
		unsigned char ch = (unsigned char)s->t[i++];
		buf[k++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	buf[k] = 0;
}

static bool header_allowed(kgb_lang_t lang, const char *h, size_t hl)
{
	const char *const *list = lang == KGB_LANG_HIP ? hip_headers : cuda_headers;
	size_t nlist = lang == KGB_LANG_HIP ? KGB_ARRAY_LEN(hip_headers) : KGB_ARRAY_LEN(cuda_headers);
	if (lang != KGB_LANG_CUDA && lang != KGB_LANG_HIP)
		return false;
	for (size_t i = 0; i < nlist; i++)
		if (strlen(list[i]) == hl && memcmp(list[i], h, hl) == 0)
			return true;
	return false;
}

static bool contains_word(const char *hay, size_t n, const char *w)
{
	size_t wl = strlen(w);
	for (size_t i = 0; i + wl <= n; i++)
		if (memcmp(hay + i, w, wl) == 0 && (i == 0 || !ident_char(hay[i - 1])) &&
		    (i + wl == n || !ident_char(hay[i + wl])))
			return true;
	return false;
}

/* The directive whose '#' (or "%:") ends just before i. */
static int directive(scan_t *s, size_t hash, size_t i, kgb_lang_t lang)
{
	char txt[160];
	i = skip_blank(s, i);
	if (i < s->n && s->t[i] == '\\')
		return refuse(s, hash, "an escape in a directive name is not allowed");
	size_t b = i;
	while (i < s->n && ident_char(s->t[i]))
		i++;
	size_t nl = i - b;
	const char *d = s->t + b;
	if (nl == 0)
		return 0;
	if (i < s->n && s->t[i] == '\\')
		return refuse(s, hash, "an escape in a directive name is not allowed");
#define IS(w) (nl == sizeof(w) - 1 && memcmp(d, w, nl) == 0)
	if (IS("pragma")) {
		size_t e = i;
		while (e < s->n && s->t[e] != '\n')
			e++;
		if (contains_word(s->t + i, e - i, "dependency")) {
			line_text(s, hash, txt, sizeof txt);
			return refuse(s, hash, "%s refused: a pragma that reads another file's date", txt);
		}
		return 0;
	}
	if (!(IS("include") || IS("include_next") || IS("import") || IS("embed") || IS("__include_macros")))
		return 0;
	line_text(s, hash, txt, sizeof txt);
	if (IS("include")) {
		size_t o = skip_blank(s, i);
		if (o < s->n && s->t[o] == '<') {
			size_t e = o + 1;
			while (e < s->n && s->t[e] != '>' && s->t[e] != '\n')
				e++;
			if (e < s->n && s->t[e] == '>' && header_allowed(lang, s->t + o + 1, e - o - 1))
				return 0;
		}
	}
	if (IS("include") && (lang == KGB_LANG_CUDA || lang == KGB_LANG_HIP))
		return refuse(s, hash,
		              "%s refused: a %s source is compiled alone and may include only the toolkit's own "
		              "headers (<%s>, ...; docs/security.md); put the code in the source itself",
		              txt, kgb_lang_name(lang), lang == KGB_LANG_HIP ? hip_headers[0] : cuda_headers[0]);
	return refuse(s, hash,
	              "%s refused: a kernel source is compiled alone with kgb's prelude and may include no file "
	              "(docs/security.md); put the code in the source itself",
	              txt);
#undef IS
}

int kgb_src_check(const char *src, size_t len, kgb_lang_t lang, const char *name, char *err, size_t errlen)
{
	if (lang != KGB_LANG_OPENCL && lang != KGB_LANG_CUDA && lang != KGB_LANG_HIP)
		return 0;
	scan_t s = { .name = name && *name ? name : "kernel source", .err = err, .errlen = errlen };
	splice(&s, src, len);
	int rc = 0;
	for (size_t i = 0; i < s.n && rc == 0; i++) {
		char ch = s.t[i];
		if (ch == '?' && i + 2 < s.n && s.t[i + 1] == '?' && (s.t[i + 2] == '=' || s.t[i + 2] == '/')) {
			rc = refuse(&s, i, "the trigraph ??%c is not allowed (write %s)", s.t[i + 2],
			            s.t[i + 2] == '=' ? "#" : "\\");
		} else if (ch == '_' && (i == 0 || !ident_char(s.t[i - 1])) &&
		           (strncmp(s.t + i, "__has_include", 13) == 0 || strncmp(s.t + i, "__has_embed", 11) == 0)) {
			rc = refuse(&s, i, "%.*s is not allowed: it tells whether a file outside the source exists",
			            strncmp(s.t + i, "__has_embed", 11) == 0 ? 11 : 13, s.t + i);
		} else if (ch == '#' || (ch == '%' && i + 1 < s.n && s.t[i + 1] == ':')) {
			size_t after = i + (ch == '#' ? 1 : 2);
			rc = directive(&s, i, after, lang);
		}
	}
	free(s.t);
	free(s.line);
	return rc;
}

int kgb_src_check_ocl_options(const char *opts, char *err, size_t errlen)
{
	if (!opts)
		return 0;
	const char *p = opts;
	bool want_define = false;
	while (*p) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		const char *b = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		size_t n = (size_t)(p - b);
		char tok[200];
		snprintf(tok, sizeof tok, "%.*s", (int)KGB_MIN(n, sizeof tok - 1), b);
		bool ok;
		if (want_define) {
			ok = tok[0] != '-';
			want_define = false;
		} else if (strcmp(tok, "-D") == 0) {
			ok = want_define = true;
		} else {
			ok = strncmp(tok, "-cl-", 4) == 0 || strncmp(tok, "-D", 2) == 0 || strcmp(tok, "-w") == 0 ||
			     strcmp(tok, "-Werror") == 0;
		}
		if (ok && strpbrk(tok, "/\\@"))
			ok = false;
		if (!ok)
			return kgb_err(err, errlen,
			               "build option '%s' not allowed (allowed: -cl-*, -D NAME[=VALUE], -w, -Werror: no "
			               "option that names a file)",
			               tok);
	}
	if (want_define)
		return kgb_err(err, errlen, "build option '-D' without a definition");
	return 0;
}
