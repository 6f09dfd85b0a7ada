/* Expression evaluator for launch plans: a recursive-descent parser that evaluates
 * as it parses. The untaken side of ?:, && and || is parsed with evaluation errors
 * (division by zero, overflow) suppressed, so `N > 0 ? M / N : 0` is fine; unknown
 * names are reported on both sides, because they are typos, not data.
 *
 * Symbols live in an insertion-ordered array indexed by an open-addressing hash
 * table (linear probing, power-of-two size, at most half full). */
#include "expr.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define EXPR_MAX_LEN 4096
#define EXPR_MAX_DEPTH 64

/* ---- symbol table ---- */

typedef struct {
	char *name;
	kgb_value_t v;
	char *str; /* non-NULL: a string symbol */
} sym_t;

struct kgb_symtab {
	sym_t *e;
	size_t n, cap;
	uint32_t *slot; /* 0 empty, else entry index + 1 */
	size_t nslot;
};

static uint64_t name_hash(const char *s, size_t len)
{
	return kgb_hash64(s, len, 0x6b6762);
}

/* Create an empty table; destroy with kgb_symtab_destroy. */
kgb_symtab_t *kgb_symtab_new(void)
{
	kgb_symtab_t *st = kgb_xcalloc(1, sizeof *st);
	st->nslot = 32;
	st->slot = kgb_xcalloc(st->nslot, sizeof *st->slot);
	return st;
}

/* Free the table and every name and string; sets *st to NULL. */
void kgb_symtab_destroy(kgb_symtab_t **st)
{
	if (!st || !*st)
		return;
	kgb_symtab_t *t = *st;
	for (size_t i = 0; i < t->n; i++) {
		free(t->e[i].name);
		free(t->e[i].str);
	}
	free(t->e);
	free(t->slot);
	free(t);
	*st = NULL;
}

/* Slot of name (len bytes) or of the empty slot where it would go. */
static size_t find_slot(const kgb_symtab_t *st, const char *name, size_t len)
{
	size_t mask = st->nslot - 1;
	size_t i = (size_t)name_hash(name, len) & mask;
	for (;;) {
		uint32_t s = st->slot[i];
		if (s == 0)
			return i;
		const char *en = st->e[s - 1].name;
		if (strncmp(en, name, len) == 0 && en[len] == '\0')
			return i;
		i = (i + 1) & mask;
	}
}

static void rehash(kgb_symtab_t *st)
{
	free(st->slot);
	st->nslot *= 2;
	st->slot = kgb_xcalloc(st->nslot, sizeof *st->slot);
	for (size_t k = 0; k < st->n; k++) {
		size_t i = find_slot(st, st->e[k].name, strlen(st->e[k].name));
		st->slot[i] = (uint32_t)(k + 1);
	}
}

static sym_t *lookup(const kgb_symtab_t *st, const char *name, size_t len)
{
	if (!st)
		return NULL;
	uint32_t s = st->slot[find_slot(st, name, len)];
	return s ? &st->e[s - 1] : NULL;
}

static sym_t *get_or_add(kgb_symtab_t *st, const char *name)
{
	KGB_ASSERT(st && name);
	size_t len = strlen(name);
	size_t i = find_slot(st, name, len);
	if (st->slot[i])
		return &st->e[st->slot[i] - 1];
	if (st->n == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 16;
		st->e = kgb_xrealloc(st->e, st->cap * sizeof *st->e);
	}
	sym_t *e = &st->e[st->n++];
	memset(e, 0, sizeof *e);
	e->name = kgb_xstrdup(name);
	st->slot[i] = (uint32_t)st->n;
	if (st->n * 2 > st->nslot)
		rehash(st);
	return lookup(st, name, len);
}

/* Set (or replace) an integer symbol. */
void kgb_symtab_set_int(kgb_symtab_t *st, const char *name, int64_t v)
{
	sym_t *e = get_or_add(st, name);
	free(e->str);
	e->str = NULL;
	e->v = (kgb_value_t){.is_float = false, .i = v, .f = (double)v};
}

/* Set (or replace) a float symbol. */
void kgb_symtab_set_float(kgb_symtab_t *st, const char *name, double v)
{
	sym_t *e = get_or_add(st, name);
	free(e->str);
	e->str = NULL;
	e->v = (kgb_value_t){.is_float = true, .i = (int64_t)0, .f = v};
}

/* Set (or replace) a string symbol; v is copied. */
void kgb_symtab_set_str(kgb_symtab_t *st, const char *name, const char *v)
{
	sym_t *e = get_or_add(st, name);
	char *copy = kgb_xstrdup(v ? v : "");
	free(e->str);
	e->str = copy;
	e->v = (kgb_value_t){0};
}

/* True and *v for a numeric symbol. */
bool kgb_symtab_get(const kgb_symtab_t *st, const char *name, kgb_value_t *v)
{
	sym_t *e = lookup(st, name, strlen(name));
	if (!e || e->str)
		return false;
	if (v)
		*v = e->v;
	return true;
}

/* The string symbol's text, or NULL. */
const char *kgb_symtab_get_str(const kgb_symtab_t *st, const char *name)
{
	sym_t *e = lookup(st, name, strlen(name));
	return e ? e->str : NULL;
}

/* Number of symbols. */
size_t kgb_symtab_count(const kgb_symtab_t *st)
{
	return st ? st->n : 0;
}

/* Entry i in insertion order: name, numeric value (zero for strings), string or NULL. */
bool kgb_symtab_at(const kgb_symtab_t *st, size_t i, const char **name, kgb_value_t *v, const char **str)
{
	if (!st || i >= st->n)
		return false;
	if (name)
		*name = st->e[i].name;
	if (v)
		*v = st->e[i].v;
	if (str)
		*str = st->e[i].str;
	return true;
}

/* ---- evaluator ---- */

typedef struct {
	const char *src, *p;
	const kgb_symtab_t *st;
	int depth;
	int skip;      /* > 0 inside an untaken branch: evaluation errors are ignored */
	bool failed;
	char *err;
	size_t errlen;
} parser_t;

static int pos(const parser_t *ps, const char *at)
{
	return (int)(at - ps->src) + 1;
}

static __attribute__((format(printf, 3, 4))) int fail(parser_t *ps, const char *at, const char *fmt, ...)
{
	if (ps->failed)
		return -1;
	ps->failed = true;
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	kgb_err(ps->err, ps->errlen, "%s at %d", msg, pos(ps, at));
	return -1;
}

/* An evaluation error: fatal unless inside an untaken branch. */
static int eval_fail(parser_t *ps, const char *at, const char *what, kgb_value_t *out)
{
	if (ps->skip > 0) {
		*out = (kgb_value_t){.is_float = false, .i = 0, .f = 0};
		return 0;
	}
	return fail(ps, at, "%s", what);
}

static void skipws(parser_t *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static bool accept(parser_t *ps, const char *tok)
{
	skipws(ps);
	size_t n = strlen(tok);
	if (strncmp(ps->p, tok, n) != 0)
		return false;
	/* do not split "<=" into "<" and "=", "&&" into "&", ... */
	if (n == 1 && (tok[0] == '<' || tok[0] == '>' || tok[0] == '!') && ps->p[1] == '=')
		return false;
	ps->p += n;
	return true;
}

static kgb_value_t vint(int64_t i)
{
	return (kgb_value_t){.is_float = false, .i = i, .f = (double)i};
}

static kgb_value_t vflt(double f)
{
	return (kgb_value_t){.is_float = true, .i = 0, .f = f};
}

static bool truthy(kgb_value_t v)
{
	return v.is_float ? v.f != 0.0 : v.i != 0;
}

static int parse_ternary(parser_t *ps, kgb_value_t *out);

static int parse_number(parser_t *ps, kgb_value_t *out)
{
	const char *start = ps->p;
	const char *q = ps->p;
	bool is_float = false;
	if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
		q += 2;
		if (!isxdigit((unsigned char)*q))
			return fail(ps, start, "bad hexadecimal number");
		while (isxdigit((unsigned char)*q))
			q++;
	} else {
		while (isdigit((unsigned char)*q))
			q++;
		if (*q == '.') {
			is_float = true;
			q++;
			while (isdigit((unsigned char)*q))
				q++;
		}
		if (*q == 'e' || *q == 'E') {
			const char *r = q + 1;
			if (*r == '+' || *r == '-')
				r++;
			if (isdigit((unsigned char)*r)) {
				is_float = true;
				q = r;
				while (isdigit((unsigned char)*q))
					q++;
			}
		}
	}
	if (isalpha((unsigned char)*q) || *q == '_')
		return fail(ps, start, "bad number '%.*s'", (int)(q - start + 1), start);
	char buf[128];
	if ((size_t)(q - start) >= sizeof buf)
		return fail(ps, start, "number too long");
	memcpy(buf, start, (size_t)(q - start));
	buf[q - start] = '\0';
	errno = 0;
	if (is_float) {
		double f = strtod(buf, NULL);
		if (errno == ERANGE && isinf(f))
			return fail(ps, start, "number out of range '%s'", buf);
		*out = vflt(f);
	} else {
		unsigned long long u = strtoull(buf, NULL, 0);
		if (errno == ERANGE || u > (unsigned long long)INT64_MAX)
			return fail(ps, start, "integer literal out of range '%s'", buf);
		*out = vint((int64_t)u);
	}
	ps->p = q;
	return 0;
}

static int64_t floor_log2(uint64_t x)
{
	int64_t r = -1;
	while (x) {
		x >>= 1;
		r++;
	}
	return r;
}

/* double -> integer value if it fits, else an evaluation error. */
static int to_int(parser_t *ps, const char *at, double f, kgb_value_t *out)
{
	if (!isfinite(f) || f >= 0x1p63 || f < -0x1p63)
		return eval_fail(ps, at, "value out of integer range", out);
	*out = vint((int64_t)f);
	return 0;
}

static int cdiv_int(parser_t *ps, const char *at, int64_t a, int64_t b, kgb_value_t *out)
{
	if (b == 0)
		return eval_fail(ps, at, "division by zero", out);
	if (a == INT64_MIN && b == -1)
		return eval_fail(ps, at, "integer overflow", out);
	int64_t q = a / b, r = a % b;
	if (r != 0 && ((r > 0) == (b > 0)))
		q++;
	*out = vint(q);
	return 0;
}

static int call_function(parser_t *ps, const char *at, const char *fn, size_t fnlen, kgb_value_t *a,
                         int n, kgb_value_t *out)
{
#define IS(name) (fnlen == strlen(name) && strncmp(fn, name, fnlen) == 0)
#define NARGS(k)                                                                                       \
	do {                                                                                               \
		if (n != (k))                                                                                  \
			return fail(ps, at, "%.*s() takes %d argument%s, got %d", (int)fnlen, fn, (k),             \
			            (k) == 1 ? "" : "s", n);                                                       \
	} while (0)
	if (IS("min") || IS("max")) {
		if (n < 1)
			return fail(ps, at, "%.*s() needs at least one argument", (int)fnlen, fn);
		bool mx = IS("max");
		kgb_value_t r = a[0];
		for (int k = 1; k < n; k++) {
			bool any_float = r.is_float || a[k].is_float;
			bool better;
			if (any_float)
				better = mx ? kgb_value_as_double(a[k]) > kgb_value_as_double(r)
				            : kgb_value_as_double(a[k]) < kgb_value_as_double(r);
			else
				better = mx ? a[k].i > r.i : a[k].i < r.i;
			if (better)
				r = a[k];
			if (any_float && !r.is_float)
				r = vflt((double)r.i);
		}
		*out = r;
		return 0;
	}
	if (IS("cdiv") || IS("align")) {
		NARGS(2);
		kgb_value_t q;
		if (a[0].is_float || a[1].is_float) {
			double b = kgb_value_as_double(a[1]);
			if (b == 0.0)
				return eval_fail(ps, at, "division by zero", out);
			q = vflt(ceil(kgb_value_as_double(a[0]) / b));
			if (IS("align"))
				q = vflt(q.f * b);
			*out = q;
			return 0;
		}
		if (cdiv_int(ps, at, a[0].i, a[1].i, &q) != 0)
			return -1;
		if (IS("align")) {
			int64_t r;
			if (__builtin_mul_overflow(q.i, a[1].i, &r))
				return eval_fail(ps, at, "integer overflow", out);
			q = vint(r);
		}
		*out = q;
		return 0;
	}
	if (IS("next_pow2")) {
		NARGS(1);
		double x = kgb_value_as_double(a[0]);
		if (a[0].is_float && !isfinite(x))
			return eval_fail(ps, at, "next_pow2 of a value that is not finite", out);
		/* clamp before converting: a double outside int64's range must never reach
		 * the conversion (undefined behaviour) */
		int64_t v = a[0].is_float ? (x > 0x1p62 ? ((int64_t)1 << 62) + 1 : x < 1.0 ? 1 : (int64_t)ceil(x)) : a[0].i;
		if (v > ((int64_t)1 << 62))
			return eval_fail(ps, at, "integer overflow", out);
		int64_t r = 1;
		while (r < v)
			r <<= 1;
		*out = vint(r);
		return 0;
	}
	if (IS("log2")) {
		NARGS(1);
		double x = kgb_value_as_double(a[0]);
		if (!(x >= 1.0)) {
			if (x > 0.0) {
				*out = vint((int64_t)floor(log2(x)));
				return 0;
			}
			return eval_fail(ps, at, "log2 of a non-positive value", out);
		}
		if (!a[0].is_float) {
			*out = vint(floor_log2((uint64_t)a[0].i));
			return 0;
		}
		return to_int(ps, at, floor(log2(x)), out);
	}
	if (IS("abs")) {
		NARGS(1);
		if (a[0].is_float) {
			*out = vflt(fabs(a[0].f));
			return 0;
		}
		if (a[0].i == INT64_MIN)
			return eval_fail(ps, at, "integer overflow", out);
		*out = vint(a[0].i < 0 ? -a[0].i : a[0].i);
		return 0;
	}
	if (IS("floor") || IS("ceil")) {
		NARGS(1);
		if (!a[0].is_float) {
			*out = a[0];
			return 0;
		}
		return to_int(ps, at, IS("floor") ? floor(a[0].f) : ceil(a[0].f), out);
	}
#undef IS
#undef NARGS
	return fail(ps, at, "unknown function '%.*s'", (int)fnlen, fn);
}

/* Nesting (parentheses, function calls, prefix operators) is bounded so that
 * hostile input cannot exhaust the stack. */
static int enter(parser_t *ps)
{
	if (++ps->depth > EXPR_MAX_DEPTH)
		return fail(ps, ps->p, "expression nested deeper than %d", EXPR_MAX_DEPTH);
	return 0;
}

static bool name_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.';
}

static int parse_primary(parser_t *ps, kgb_value_t *out)
{
	skipws(ps);
	const char *at = ps->p;
	if (*at == '(') {
		ps->p++;
		if (enter(ps) != 0 || parse_ternary(ps, out) != 0)
			return -1;
		ps->depth--;
		if (!accept(ps, ")"))
			return fail(ps, ps->p, "expected ')'");
		return 0;
	}
	if (isdigit((unsigned char)*at) || (*at == '.' && isdigit((unsigned char)at[1])))
		return parse_number(ps, out);
	if (name_start(*at)) {
		const char *q = at;
		while (name_char(*q))
			q++;
		size_t len = (size_t)(q - at);
		ps->p = q;
		skipws(ps);
		if (*ps->p == '(') {
			ps->p++;
			if (enter(ps) != 0)
				return -1;
			kgb_value_t args[16];
			int n = 0;
			skipws(ps);
			if (*ps->p != ')') {
				for (;;) {
					if (n == (int)KGB_ARRAY_LEN(args))
						return fail(ps, ps->p, "too many arguments");
					if (parse_ternary(ps, &args[n]) != 0)
						return -1;
					n++;
					if (accept(ps, ","))
						continue;
					break;
				}
			}
			if (!accept(ps, ")"))
				return fail(ps, ps->p, "expected ')' or ','");
			ps->depth--;
			return call_function(ps, at, at, len, args, n, out);
		}
		sym_t *e = lookup(ps->st, at, len);
		if (!e)
			return fail(ps, at, "unknown name '%.*s'", (int)len, at);
		if (e->str)
			return fail(ps, at, "'%.*s' is a string ('%s'), not a number", (int)len, at, e->str);
		*out = e->v;
		return 0;
	}
	if (*at == '\0')
		return fail(ps, at, "unexpected end of expression");
	if (isprint((unsigned char)*at))
		return fail(ps, at, "unexpected '%c'", *at);
	return fail(ps, at, "unexpected byte 0x%02x", (unsigned char)*at);
}

static int parse_unary(parser_t *ps, kgb_value_t *out)
{
	int rc;
	skipws(ps);
	const char *at = ps->p;
	if (*at == '-' || *at == '+' || (*at == '!' && at[1] != '=')) {
		if (enter(ps) != 0)
			return -1;
	} else {
		return parse_primary(ps, out);
	}
	if (accept(ps, "-")) {
		kgb_value_t v;
		rc = parse_unary(ps, &v);
		if (rc == 0) {
			if (v.is_float)
				*out = vflt(-v.f);
			else if (v.i == INT64_MIN)
				rc = eval_fail(ps, at, "integer overflow", out);
			else
				*out = vint(-v.i);
		}
	} else if (accept(ps, "+")) {
		rc = parse_unary(ps, out);
	} else if (accept(ps, "!")) {
		kgb_value_t v;
		rc = parse_unary(ps, &v);
		if (rc == 0)
			*out = vint(!truthy(v));
	} else {
		KGB_ASSERT(0);
	}
	ps->depth--;
	return rc;
}

/* Apply a binary arithmetic operator. */
static int arith(parser_t *ps, const char *at, char op, kgb_value_t a, kgb_value_t b, kgb_value_t *out)
{
	if (a.is_float || b.is_float) {
		double x = kgb_value_as_double(a), y = kgb_value_as_double(b);
		switch (op) {
		case '+': *out = vflt(x + y); return 0;
		case '-': *out = vflt(x - y); return 0;
		case '*': *out = vflt(x * y); return 0;
		case '/':
			if (y == 0.0)
				return eval_fail(ps, at, "division by zero", out);
			*out = vflt(x / y);
			return 0;
		case '%':
			if (y == 0.0)
				return eval_fail(ps, at, "division by zero", out);
			*out = vflt(fmod(x, y));
			return 0;
		}
		KGB_ASSERT(0);
	}
	int64_t r;
	switch (op) {
	case '+':
		if (__builtin_add_overflow(a.i, b.i, &r))
			return eval_fail(ps, at, "integer overflow", out);
		break;
	case '-':
		if (__builtin_sub_overflow(a.i, b.i, &r))
			return eval_fail(ps, at, "integer overflow", out);
		break;
	case '*':
		if (__builtin_mul_overflow(a.i, b.i, &r))
			return eval_fail(ps, at, "integer overflow", out);
		break;
	case '/':
	case '%':
		if (b.i == 0)
			return eval_fail(ps, at, "division by zero", out);
		if (a.i == INT64_MIN && b.i == -1)
			return eval_fail(ps, at, "integer overflow", out);
		r = op == '/' ? a.i / b.i : a.i % b.i;
		break;
	default: KGB_ASSERT(0);
	}
	*out = vint(r);
	return 0;
}

/* The arithmetic operators by precedence, loosest first; past the last level come
 * the unary expressions. */
static const char *const arith_ops[] = { "+-", "*/%" };

static int parse_arith(parser_t *ps, size_t level, kgb_value_t *out)
{
	if (level == KGB_ARRAY_LEN(arith_ops))
		return parse_unary(ps, out);
	if (parse_arith(ps, level + 1, out) != 0)
		return -1;
	for (;;) {
		skipws(ps);
		const char *at = ps->p;
		char op = *at;
		if (!op || !strchr(arith_ops[level], op))
			return 0;
		ps->p++;
		kgb_value_t b;
		if (parse_arith(ps, level + 1, &b) != 0 || arith(ps, at, op, *out, b, out) != 0)
			return -1;
	}
}

static int compare(kgb_value_t a, kgb_value_t b)
{
	if (a.is_float || b.is_float) {
		double x = kgb_value_as_double(a), y = kgb_value_as_double(b);
		return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2; /* 2: unordered (NaN) */
	}
	return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
}

/* The comparisons by precedence (equality, then order), each with the outcomes of
 * compare() it holds for, as bits 1 << (outcome + 1): -1 less, 0 equal, 1 greater,
 * 2 unordered. A longer operator comes before its prefix. */
#define HOLDS(c) (1u << ((c) + 1))
static const struct {
	const char *op;
	unsigned holds;
} cmp_ops[2][4] = {
	{ { "==", HOLDS(0) }, { "!=", HOLDS(-1) | HOLDS(1) | HOLDS(2) } },
	{ { "<=", HOLDS(-1) | HOLDS(0) }, { ">=", HOLDS(0) | HOLDS(1) }, { "<", HOLDS(-1) }, { ">", HOLDS(1) } },
};

static int parse_cmp(parser_t *ps, size_t level, kgb_value_t *out)
{
	int (*operand)(parser_t *, size_t, kgb_value_t *) = level == 0 ? parse_cmp : parse_arith;
	size_t next = level == 0 ? 1 : 0;
	if (operand(ps, next, out) != 0)
		return -1;
	for (;;) {
		size_t k = 0;
		while (k < 4 && cmp_ops[level][k].op && !accept(ps, cmp_ops[level][k].op))
			k++;
		if (k == 4 || !cmp_ops[level][k].op)
			return 0;
		kgb_value_t b;
		if (operand(ps, next, &b) != 0)
			return -1;
		*out = vint((cmp_ops[level][k].holds & HOLDS(compare(*out, b))) != 0);
	}
}

/* "||" (level 0) and "&&" (level 1), short-circuit: the right side of a decided one is
 * parsed, not evaluated. */
static int parse_logic(parser_t *ps, int level, kgb_value_t *out)
{
	bool is_or = level == 0;
	if ((is_or ? parse_logic(ps, 1, out) : parse_cmp(ps, 0, out)) != 0)
		return -1;
	while (accept(ps, is_or ? "||" : "&&")) {
		bool l = truthy(*out), decided = is_or ? l : !l;
		kgb_value_t b;
		if (decided)
			ps->skip++;
		int rc = is_or ? parse_logic(ps, 1, &b) : parse_cmp(ps, 0, &b);
		if (decided)
			ps->skip--;
		if (rc != 0)
			return -1;
		*out = vint(decided ? l : truthy(b));
	}
	return 0;
}

static int parse_ternary(parser_t *ps, kgb_value_t *out)
{
	int rc = -1;
	bool entered = false;
	kgb_value_t c, a, b;
	if (parse_logic(ps, 0, &c) != 0)
		goto out;
	if (!accept(ps, "?")) {
		*out = c;
		rc = 0;
		goto out;
	}
	/* each '?' nests its branches: a chain "a ? b : c ? d : ..." counts one level per
	 * '?', like parentheses */
	if (enter(ps) != 0)
		goto out;
	entered = true;
	bool t = truthy(c);
	if (!t)
		ps->skip++;
	rc = parse_ternary(ps, &a);
	if (!t)
		ps->skip--;
	if (rc != 0)
		goto out;
	rc = -1;
	if (!accept(ps, ":")) {
		fail(ps, ps->p, "expected ':'");
		goto out;
	}
	if (t)
		ps->skip++;
	rc = parse_ternary(ps, &b);
	if (t)
		ps->skip--;
	if (rc != 0)
		goto out;
	*out = t ? a : b;
out:
	if (entered)
		ps->depth--;
	return rc;
}

/* Evaluate src; see expr.h. */
int kgb_expr_eval(const char *src, const kgb_symtab_t *st, kgb_value_t *out, char *err, size_t errlen)
{
	if (!src)
		return kgb_err(err, errlen, "no expression");
	size_t len = strnlen(src, EXPR_MAX_LEN + 1);
	if (len > EXPR_MAX_LEN)
		return kgb_err(err, errlen, "expression longer than %d characters", EXPR_MAX_LEN);
	parser_t ps = {.src = src, .p = src, .st = st, .err = err, .errlen = errlen};
	skipws(&ps);
	if (*ps.p == '\0')
		return kgb_err(err, errlen, "empty expression");
	kgb_value_t v;
	if (parse_ternary(&ps, &v) != 0)
		return -1;
	skipws(&ps);
	if (*ps.p != '\0') {
		if (isprint((unsigned char)*ps.p))
			return fail(&ps, ps.p, "unexpected '%c'", *ps.p);
		return fail(&ps, ps.p, "unexpected byte 0x%02x", (unsigned char)*ps.p);
	}
	if (v.is_float && !isfinite(v.f))
		return kgb_err(err, errlen, "result is not finite");
	*out = v;
	return 0;
}

/* Evaluate to an integer; floats must be whole and in range. */
int kgb_expr_eval_int(const char *src, const kgb_symtab_t *st, int64_t *out, char *err, size_t errlen)
{
	kgb_value_t v;
	if (kgb_expr_eval(src, st, &v, err, errlen) != 0)
		return -1;
	if (!v.is_float) {
		*out = v.i;
		return 0;
	}
	if (v.f != floor(v.f) || v.f >= 0x1p63 || v.f < -0x1p63)
		return kgb_err(err, errlen, "expected an integer, got %.17g", v.f);
	*out = (int64_t)v.f;
	return 0;
}

/* The value as a double. */
double kgb_value_as_double(kgb_value_t v)
{
	return v.is_float ? v.f : (double)v.i;
}

/* Shortest %g form that reads back to the same double. */
static void format_double(double f, char *buf, size_t n)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, f);
		if (strtod(buf, NULL) == f)
			break;
	}
	/* keep it a floating literal in C sources: "2" -> "2.0" */
	if (!strpbrk(buf, ".eEni")) {
		size_t l = strlen(buf);
		if (l + 3 <= n)
			memcpy(buf + l, ".0", 3);
	}
}

/* Substitute every {expr} in tmpl; see expr.h. */
char *kgb_expr_subst(const char *tmpl, const kgb_symtab_t *st, char *err, size_t errlen)
{
	size_t cap = strlen(tmpl) + 64, n = 0;
	char *res = kgb_xmalloc(cap);
	const char *p = tmpl;
	while (*p) {
		const char *piece;
		size_t plen;
		char num[64];
		if (p[0] == '{' && p[1] == '{') {
			piece = "{";
			plen = 1;
			p += 2;
		} else if (p[0] == '{') {
			const char *end = strchr(p + 1, '}');
			if (!end) {
				kgb_err(err, errlen, "unterminated '{' at %d", (int)(p - tmpl) + 1);
				goto fail;
			}
			size_t elen = (size_t)(end - p - 1);
			char *expr = kgb_xmalloc(elen + 1);
			memcpy(expr, p + 1, elen);
			expr[elen] = '\0';
			/* a bare string symbol (dtype names) is substituted as its text */
			const char *b = expr, *e = expr + elen;
			while (*b == ' ')
				b++;
			while (e > b && e[-1] == ' ')
				e--;
			char *trim = kgb_xmalloc((size_t)(e - b) + 1);
			memcpy(trim, b, (size_t)(e - b));
			trim[e - b] = '\0';
			const char *s = st ? kgb_symtab_get_str(st, trim) : NULL;
			free(trim);
			if (s) {
				piece = s;
				plen = strlen(s);
			} else {
				kgb_value_t v;
				char sub[256];
				if (kgb_expr_eval(expr, st, &v, sub, sizeof sub) != 0) {
					kgb_err(err, errlen, "in '{%s}': %s", expr, sub);
					free(expr);
					goto fail;
				}
				if (v.is_float)
					format_double(v.f, num, sizeof num);
				else
					snprintf(num, sizeof num, "%lld", (long long)v.i);
				piece = num;
				plen = strlen(num);
			}
			free(expr);
			p = end + 1;
		} else {
			piece = p;
			plen = 1;
			p++;
		}
		if (n + plen + 1 > cap) {
			cap = (n + plen + 1) * 2;
			res = kgb_xrealloc(res, cap);
		}
		memcpy(res + n, piece, plen);
		n += plen;
	}
	res[n] = '\0';
	return res;
fail:
	free(res);
	return NULL;
}
