/* Tests for common/expr.c: grammar, integer vs float, errors, limits, subst. */
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "test.h"

static kgb_symtab_t *syms(void)
{
	kgb_symtab_t *st = kgb_symtab_new();
	kgb_symtab_set_int(st, "N", 1000);
	kgb_symtab_set_int(st, "out.numel", 4096);
	kgb_symtab_set_int(st, "x.stride1", 3);
	kgb_symtab_set_int(st, "zero", 0);
	kgb_symtab_set_float(st, "alpha", 0.5);
	kgb_symtab_set_str(st, "out.dtype", "f16");
	return st;
}

static int64_t ival(const char *src)
{
	kgb_symtab_t *st = syms();
	kgb_value_t v;
	char err[256];
	if (kgb_expr_eval(src, st, &v, err, sizeof err) != 0)
		FAIL("eval '%s': %s", src, err);
	kgb_symtab_destroy(&st);
	if (v.is_float)
		FAIL("eval '%s': float %g, expected an integer", src, v.f);
	return v.i;
}

static double fval(const char *src)
{
	kgb_symtab_t *st = syms();
	kgb_value_t v;
	char err[256];
	if (kgb_expr_eval(src, st, &v, err, sizeof err) != 0)
		FAIL("eval '%s': %s", src, err);
	kgb_symtab_destroy(&st);
	if (!v.is_float)
		FAIL("eval '%s': integer %lld, expected a float", src, (long long)v.i);
	return v.f;
}

/* evaluation must fail and the message must contain want */
static void bad(const char *src, const char *want)
{
	kgb_symtab_t *st = syms();
	kgb_value_t v;
	char err[256] = "";
	int rc = kgb_expr_eval(src, st, &v, err, sizeof err);
	kgb_symtab_destroy(&st);
	if (rc == 0)
		FAIL("eval '%s' succeeded, expected an error containing '%s'", src, want);
	if (!strstr(err, want))
		FAIL("eval '%s': error '%s' does not contain '%s'", src, err, want);
}

TEST(expr_precedence)
{
	ASSERT_EQ_INT(ival("1 + 2 * 3"), 7);
	ASSERT_EQ_INT(ival("(1 + 2) * 3"), 9);
	ASSERT_EQ_INT(ival("10 - 4 - 3"), 3);     /* left associative */
	ASSERT_EQ_INT(ival("100 / 10 / 5"), 2);
	ASSERT_EQ_INT(ival("-2 * -3"), 6);
	ASSERT_EQ_INT(ival("7 % 4 + 1"), 4);
	ASSERT_EQ_INT(ival("1 + 2 < 4"), 1);
	ASSERT_EQ_INT(ival("1 < 2 == 1"), 1);
	ASSERT_EQ_INT(ival("1 || 0 && 0"), 1);    /* && binds tighter */
	ASSERT_EQ_INT(ival("!0 + 1"), 2);
	ASSERT_EQ_INT(ival("0 ? 1 : 2 ? 3 : 4"), 3);
	ASSERT_EQ_INT(ival("N > 10 ? N : 10"), 1000);
	ASSERT_EQ_INT(ival("3 <= 3"), 1);
	ASSERT_EQ_INT(ival("3 >= 4"), 0);
	ASSERT_EQ_INT(ival("3 != 4"), 1);
	ASSERT_EQ_INT(ival("3 != 3") + ival("3 < 3") + ival("4 > 4") + ival("2 == 3") + ival("2.5 >= 3"), 0);
	ASSERT_EQ_INT(ival("2.5 < 3") + ival("3 > 2.5") + ival("3.0 == 3") + ival("2 <= 2.5"), 4);
	ASSERT_EQ_INT(ival("3 - 2 - 1") + ival("8 / 4 / 2"), 1); /* left to right */
	ASSERT_EQ_INT(ival("0x10 + 1"), 17);
}

TEST(expr_names_and_functions)
{
	ASSERT_EQ_INT(ival("cdiv(out.numel, 256)"), 16);
	ASSERT_EQ_INT(ival("cdiv(N, 256)"), 4);
	ASSERT_EQ_INT(ival("cdiv(-7, 2)"), -3);
	ASSERT_EQ_INT(ival("x.stride1 * 2"), 6);
	ASSERT_EQ_INT(ival("min(5, 3, 9)"), 3);
	ASSERT_EQ_INT(ival("max(5, 3, 9)"), 9);
	ASSERT_EQ_INT(ival("next_pow2(N)"), 1024);
	ASSERT_EQ_INT(ival("next_pow2(1024)"), 1024);
	ASSERT_EQ_INT(ival("next_pow2(0)"), 1);
	ASSERT_EQ_INT(ival("log2(1024)"), 10);
	ASSERT_EQ_INT(ival("log2(1000)"), 9);
	ASSERT_EQ_INT(ival("abs(-5)"), 5);
	ASSERT_EQ_INT(ival("align(1000, 256)"), 1024);
	ASSERT_EQ_INT(ival("floor(2.7)"), 2);
	ASSERT_EQ_INT(ival("ceil(2.1)"), 3);
	ASSERT_EQ_INT(ival("floor(-2.5)"), -3);
	ASSERT_EQ_INT(ival("min(N, 64) * 4"), 256);
}

TEST(expr_int_vs_float)
{
	ASSERT_EQ_INT(ival("7 / 2"), 3);
	ASSERT_EQ_INT(ival("-7 / 2"), -3);         /* truncates toward zero */
	ASSERT_EQ_INT(ival("-7 % 2"), -1);
	ASSERT_NEAR(fval("7.0 / 2"), 3.5, 0);
	ASSERT_NEAR(fval("7 / 2.0"), 3.5, 0);
	ASSERT_NEAR(fval("alpha * 3"), 1.5, 0);
	ASSERT_NEAR(fval("1e3"), 1000.0, 0);
	ASSERT_NEAR(fval(".5 + 1"), 1.5, 0);
	ASSERT_NEAR(fval("max(1, 2.5)"), 2.5, 0);
	ASSERT_NEAR(fval("max(3, 2.5)"), 3.0, 0);   /* mixed: result is a float */
	int64_t i;
	char err[128];
	kgb_symtab_t *st = syms();
	ASSERT_OK(kgb_expr_eval_int("4.0 * 2", st, &i, err, sizeof err), err);
	ASSERT_EQ_INT(i, 8);
	ASSERT_EQ_INT(kgb_expr_eval_int("alpha", st, &i, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "expected an integer");
	kgb_symtab_destroy(&st);
}

TEST(expr_overflow)
{
	bad("9223372036854775807 + 1", "integer overflow");
	bad("-9223372036854775807 - 2", "integer overflow");
	bad("4611686018427387904 * 2", "integer overflow");
	bad("99999999999999999999", "out of range");
	bad("abs(-9223372036854775807 - 1)", "integer overflow");
	bad("next_pow2(4611686018427387905)", "integer overflow");
	ASSERT_EQ_INT(ival("9223372036854775807"), INT64_MAX);
	bad("1e308 * 10", "not finite");
	/* doubles far outside int64 never reach a conversion (found by fuzzing) */
	bad("next_pow2(1e300)", "integer overflow");
	ASSERT_EQ_INT(ival("next_pow2(-1e300)"), 1);
	ASSERT_EQ_INT(ival("next_pow2(0.5)"), 1);
	ASSERT_EQ_INT(ival("next_pow2(1000.5)"), 1024);
}

TEST(expr_division_by_zero)
{
	bad("1 / 0", "division by zero at 3");
	bad("N % zero", "division by zero");
	bad("1.0 / 0", "division by zero");
	bad("cdiv(N, zero)", "division by zero");
	/* the untaken side of ?:, && and || is not evaluated */
	ASSERT_EQ_INT(ival("zero > 0 ? N / zero : 7"), 7);
	ASSERT_EQ_INT(ival("zero && N / zero"), 0);
	ASSERT_EQ_INT(ival("1 || N / zero"), 1);
}

TEST(expr_errors)
{
	bad("N + M", "unknown name 'M' at 5");
	bad("foo(1)", "unknown function 'foo'");
	bad("1 +", "unexpected end");
	bad("(1 + 2", "expected ')'");
	bad("1 $ 2", "unexpected '$' at 3");
	bad("", "empty expression");
	bad("   ", "empty expression");
	bad("cdiv(1)", "takes 2 arguments");
	bad("min()", "at least one");
	bad("out.dtype + 1", "is a string");
	bad("1 ? 2", "expected ':'");
	bad("12abc", "bad number");
	bad("log2(0)", "non-positive");
	bad("0 ? Q : 1", "unknown name 'Q'"); /* typos are reported even when not taken */
	bad("1 2", "unexpected '2'");
}

TEST(expr_limits)
{
	/* nesting: 60 parentheses is fine, 100 is not */
	char buf[8192];
	size_t n = 0;
	for (int i = 0; i < 30; i++)
		buf[n++] = '(';
	buf[n++] = '1';
	for (int i = 0; i < 30; i++)
		buf[n++] = ')';
	buf[n] = '\0';
	ASSERT_EQ_INT(ival(buf), 1);
	n = 0;
	for (int i = 0; i < 100; i++)
		buf[n++] = '(';
	buf[n++] = '1';
	for (int i = 0; i < 100; i++)
		buf[n++] = ')';
	buf[n] = '\0';
	bad(buf, "nested deeper than 64");
	n = 0;
	for (int i = 0; i < 100; i++)
		buf[n++] = '-';
	buf[n++] = '1';
	buf[n] = '\0';
	bad(buf, "nested deeper");
	/* a chain of conditionals nests one level per '?': 30 deep is fine, 1,000 is not */
	for (int deep = 30; deep <= 1000; deep += 970) {
		n = 0;
		for (int i = 0; i < deep; i++)
			n += (size_t)snprintf(buf + n, sizeof buf - n, "0?1:");
		n += (size_t)snprintf(buf + n, sizeof buf - n, "7");
		if (deep == 30)
			ASSERT_EQ_INT(ival(buf), 7);
		else
			bad(buf, "nested deeper than 64");
	}
	/* length: 4096 is fine, 4097 is not */
	memset(buf, ' ', 4096);
	buf[0] = '1';
	buf[4096] = '\0';
	ASSERT_EQ_INT(ival(buf), 1);
	buf[4096] = ' ';
	buf[4097] = '\0';
	bad(buf, "longer than 4096");
}

TEST(expr_symtab)
{
	kgb_symtab_t *st = kgb_symtab_new();
	char name[32];
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof name, "t%d.size0", i);
		kgb_symtab_set_int(st, name, i * 3);
	}
	ASSERT_EQ_INT(kgb_symtab_count(st), 500);
	kgb_value_t v;
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof name, "t%d.size0", i);
		ASSERT_TRUE(kgb_symtab_get(st, name, &v));
		ASSERT_EQ_INT(v.i, i * 3);
	}
	kgb_symtab_set_int(st, "t7.size0", -1);  /* replace keeps the count */
	ASSERT_EQ_INT(kgb_symtab_count(st), 500);
	ASSERT_TRUE(kgb_symtab_get(st, "t7.size0", &v) && v.i == -1);
	ASSERT_FALSE(kgb_symtab_get(st, "t7.size", &v));
	kgb_symtab_set_str(st, "t7.size0", "f32");
	ASSERT_FALSE(kgb_symtab_get(st, "t7.size0", &v));
	ASSERT_EQ_STR(kgb_symtab_get_str(st, "t7.size0"), "f32");
	const char *nm, *s;
	ASSERT_TRUE(kgb_symtab_at(st, 0, &nm, &v, &s));
	ASSERT_EQ_STR(nm, "t0.size0");
	ASSERT_TRUE(s == NULL);
	ASSERT_FALSE(kgb_symtab_at(st, 500, &nm, &v, &s));
	kgb_symtab_destroy(&st);
	ASSERT_TRUE(st == NULL);
}

TEST(expr_subst)
{
	kgb_symtab_t *st = syms();
	char err[256];
	char *s = kgb_expr_subst("T={out.dtype} B={cdiv(N, 256)} A={alpha} L={{x}", st, err, sizeof err);
	ASSERT_TRUE(s != NULL);
	ASSERT_EQ_STR(s, "T=f16 B=4 A=0.5 L={x}");
	free(s);
	s = kgb_expr_subst("plain", st, err, sizeof err);
	ASSERT_EQ_STR(s, "plain");
	free(s);
	s = kgb_expr_subst("{ out.dtype }{alpha*4}", st, err, sizeof err);
	ASSERT_EQ_STR(s, "f162.0");
	free(s);
	ASSERT_TRUE(kgb_expr_subst("x={N", st, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "unterminated '{' at 3");
	ASSERT_TRUE(kgb_expr_subst("x={M*2}", st, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "{M*2}");
	ASSERT_CONTAINS(err, "unknown name 'M'");
	kgb_symtab_destroy(&st);
}
