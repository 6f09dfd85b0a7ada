/* The unit-test framework.
 *
 *   #include "test.h"
 *   TEST(expr_precedence) {
 *       ASSERT_EQ_INT(eval("1+2*3"), 7);
 *   }
 *
 * TEST registers the function at load time (a constructor adds it to a list); the
 * runner (tests/unit/main.c, binary kgb-unit) runs each test in its own forked child
 * with a timeout, so a crash or a hang fails one test, not the run. A failed ASSERT
 * prints file:line and both operands, then ends the child with status 1.
 *
 * Test names must be unique across files (the runner refuses duplicates); prefix
 * them with the module: expr_, wire_, plan_, ... */
#ifndef KGB_TEST_H
#define KGB_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct kgb_test {
	const char *name;
	void (*fn)(void);
	const char *file;
	int line;
	unsigned flags; /* KGB_TEST_* */
	struct kgb_test *next;
} kgb_test_t;

/* The test runs in a fresh exec of the runner whose LeakSanitizer does not scan
 * thread-local storage (LSAN_OPTIONS gains use_tls=0). For tests that load PoCL's
 * in-process LLVM: with GCC 12's sanitizers and glibc 2.36 the leak checker's tracer
 * faults on the dynamic TLS blocks it leaves ("Tracer caught signal 11"). Without TLS
 * as a root the checker can report more, never less; it is not set for the whole run
 * because glibc keeps its own allocations there (dlerror, pthread keys). */
#define KGB_TEST_LSAN_NO_TLS 1u

/* Add t to the list of tests (called by the TEST constructor). */
void kgb_test_register(kgb_test_t *t);
/* Report a failure at file:line and end the test (exit status 1). */
_Noreturn void kgb_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A fresh empty directory for the running test, removed by the runner afterwards.
 * Static string. */
const char *kgb_test_tmpdir(void);
/* Write text to tmpdir/name and return the full path (static buffer, overwritten by
 * the next call). Fails the test if the write fails. */
const char *kgb_test_write_file(const char *name, const char *text);
/* build/<variant>/lib/<name>: a test double (tests/doubles/) built next to the bin/
 * holding kgb-unit (KGB_TEST_DOUBLES_DIR overrides). Fails the test when it is
 * missing. Static buffer, overwritten by the next call. */
const char *kgb_test_double(const char *name);
/* A parse of what that had to fail: fails the test when rc is 0, when it left an
 * output (out_null false), or when err lacks any one of the NULL-terminated wants. */
void kgb_test_refused(int rc, bool out_null, const char *what, const char *err, const char *const *wants);

#define TEST(tname) TEST_FLAGS(tname, 0)
#define TEST_FLAGS(tname, tflags)                                                                      \
	static void kgb_test_fn_##tname(void);                                                             \
	static kgb_test_t kgb_test_rec_##tname = {#tname, kgb_test_fn_##tname, __FILE__, __LINE__, (tflags), \
	                                          NULL};                                                   \
	__attribute__((constructor)) static void kgb_test_reg_##tname(void)                               \
	{                                                                                                  \
		kgb_test_register(&kgb_test_rec_##tname);                                                      \
	}                                                                                                  \
	static void kgb_test_fn_##tname(void)

#define FAIL(...) kgb_test_fail(__FILE__, __LINE__, __VA_ARGS__)

#define ASSERT_TRUE(c)                                                                                 \
	do {                                                                                               \
		if (!(c))                                                                                      \
			kgb_test_fail(__FILE__, __LINE__, "ASSERT_TRUE(%s) failed", #c);                           \
	} while (0)
#define ASSERT_FALSE(c)                                                                                \
	do {                                                                                               \
		if (c)                                                                                         \
			kgb_test_fail(__FILE__, __LINE__, "ASSERT_FALSE(%s) failed", #c);                          \
	} while (0)

#define ASSERT_EQ_INT(a, b)                                                                            \
	do {                                                                                               \
		long long kgb__a = (long long)(a), kgb__b = (long long)(b);                                    \
		if (kgb__a != kgb__b)                                                                          \
			kgb_test_fail(__FILE__, __LINE__, "ASSERT_EQ_INT(%s, %s): %lld != %lld", #a, #b, kgb__a,    \
			              kgb__b);                                                                     \
	} while (0)
#define ASSERT_NE_INT(a, b)                                                                            \
	do {                                                                                               \
		long long kgb__a = (long long)(a), kgb__b = (long long)(b);                                    \
		if (kgb__a == kgb__b)                                                                          \
			kgb_test_fail(__FILE__, __LINE__, "ASSERT_NE_INT(%s, %s): both %lld", #a, #b, kgb__a);      \
	} while (0)
#define ASSERT_EQ_U64(a, b)                                                                            \
	do {                                                                                               \
		unsigned long long kgb__a = (unsigned long long)(a), kgb__b = (unsigned long long)(b);         \
		if (kgb__a != kgb__b)                                                                          \
			kgb_test_fail(__FILE__, __LINE__, "ASSERT_EQ_U64(%s, %s): %llu (0x%llx) != %llu (0x%llx)", \
			              #a, #b, kgb__a, kgb__a, kgb__b, kgb__b);                                     \
	} while (0)

#define ASSERT_EQ_STR(a, b)                                                                            \
	do {                                                                                               \
		const char *kgb__a = (a), *kgb__b = (b);                                                       \
		if (!kgb__a || !kgb__b ? kgb__a != kgb__b : strcmp(kgb__a, kgb__b) != 0)                       \
			kgb_test_fail(__FILE__, __LINE__, "ASSERT_EQ_STR(%s, %s): \"%s\" != \"%s\"", #a, #b,        \
			              kgb__a ? kgb__a : "(null)", kgb__b ? kgb__b : "(null)");                     \
	} while (0)
/* haystack contains needle */
#define ASSERT_CONTAINS(h, n)                                                                          \
	do {                                                                                               \
		const char *kgb__h = (h), *kgb__n = (n);                                                       \
		if (!kgb__h || !strstr(kgb__h, kgb__n))                                                        \
			kgb_test_fail(__FILE__, __LINE__, "ASSERT_CONTAINS(%s, %s): \"%s\" does not contain \"%s\"", \
			              #h, #n, kgb__h ? kgb__h : "(null)", kgb__n);                                 \
	} while (0)

/* |a - b| <= tol (NaN never passes) */
#define ASSERT_NEAR(a, b, tol)                                                                         \
	do {                                                                                               \
		double kgb__a = (double)(a), kgb__b = (double)(b), kgb__t = (double)(tol);                     \
		double kgb__d = kgb__a - kgb__b;                                                               \
		if (!(kgb__d <= kgb__t && -kgb__d <= kgb__t))                                                  \
			kgb_test_fail(__FILE__, __LINE__, "ASSERT_NEAR(%s, %s, %s): %.17g vs %.17g (diff %.3g)", #a, \
			              #b, #tol, kgb__a, kgb__b, kgb__d);                                           \
	} while (0)

/* a call returning 0 on success: print err when it fails */
#define ASSERT_OK(call, errbuf)                                                                        \
	do {                                                                                               \
		if ((call) != 0)                                                                               \
			kgb_test_fail(__FILE__, __LINE__, "%s failed: %s", #call, (errbuf));                        \
	} while (0)

#endif
