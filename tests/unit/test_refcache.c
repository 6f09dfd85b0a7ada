/* The reference cache (common/catalog.h, docs/references.md "The reference cache"):
 * inputs and references of a hit are those a computation gives, bit for bit; several
 * processes and threads filling one key at once all get the right values and leave one
 * valid entry; a truncated, altered or foreign entry is recomputed; the cache stays
 * under its bound, removing the least recently used first; held-out cases of different
 * keys are different entries. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <math.h>

#include "catalog.h"
#include "dtype.h"
#include "test.h"
#include "util.h"

/* case idx of op, built (the test fails if it cannot be) */
static void build(const char *op, uint32_t idx, kgb_case_t *c)
{
	char err[256];
	const kgb_op_t *o = kgb_catalog_find(op);
	ASSERT_TRUE(o != NULL);
	ASSERT_OK(kgb_case_build(o, idx, c, err, sizeof err), err);
}

static size_t comps(const kgb_tensor_t *t)
{
	return (t->storage ? t->storage : 1) * (size_t)kgb_dtype_lanes(t->dtype);
}

/* a and b hold the same doubles, bit for bit, in every tensor */
static bool same(const kgb_case_t *c, const kgb_hostbufs_t *a, const kgb_hostbufs_t *b)
{
	for (int i = 0; i < c->ntensors; i++)
		if (memcmp(a->v[i], b->v[i], comps(&c->t[i]) * sizeof(double)) != 0)
			return false;
	return true;
}

/* The uncached inputs and reference of (c, seed). */
static void uncached(const kgb_case_t *c, uint64_t seed, kgb_hostbufs_t *ref, kgb_hostbufs_t *in)
{
	char err[256];
	setenv("KGB_REF_CACHE_MB", "0", 1);
	ASSERT_OK(kgb_case_reference_inputs(c, seed, ref, in, err, sizeof err), err);
	unsetenv("KGB_REF_CACHE_MB");
	kgb_hostbufs_t gen;
	ASSERT_OK(kgb_case_inputs(c, seed, &gen, err, sizeof err), err);
	ASSERT_TRUE(same(c, &gen, in));   /* the inputs are kgb_case_inputs' */
	kgb_hostbufs_release(&gen);
}

static uint64_t hits(void)
{
	uint64_t h, m;
	kgb_ref_cache_counts(&h, &m);
	return h;
}

/* A hit gives what a computation gives, inputs (IN and INOUT) and reference alike,
 * and generates nothing: for operators with IN/OUT, INOUT, integer, fp8 and own-check
 * tensors. */
TEST(refcache_hit_is_exact)
{
	static const struct { const char *op; uint32_t idx; } cases[] = {
		{ "silu", 3 }, { "add_", 5 }, { "sort", 2 }, { "scaled_fp8_quant", 1 }, { "topk_softmax", 0 },
		{ "index_select", 4 }, { "bitwise_not", 1 },
	};
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	unsetenv("KGB_REF_CACHE_MB");
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		kgb_case_t c;
		kgb_hostbufs_t r0, i0, r1, i1, r2, i2;
		char err[256];
		build(cases[k].op, cases[k].idx, &c);
		uncached(&c, 9, &r0, &i0);
		ASSERT_OK(kgb_case_reference_inputs(&c, 9, &r1, &i1, err, sizeof err), err);   /* a miss, stored */
		uint64_t h0 = hits(), g0 = kgb_inputs_ns();
		ASSERT_OK(kgb_case_reference_inputs(&c, 9, &r2, &i2, err, sizeof err), err);   /* a hit */
		if (hits() != h0 + 1 || kgb_inputs_ns() != g0)
			FAIL("%s: not a hit, or inputs generated on a hit", cases[k].op);
		for (int i = 0; i < c.ntensors; i++) {
			bool ok = memcmp(r0.v[i], r2.v[i], comps(&c.t[i]) * sizeof(double)) == 0 &&
			          memcmp(i0.v[i], i2.v[i], comps(&c.t[i]) * sizeof(double)) == 0;
			/* the reference of an operator without its own check comes back rounded to
			 * its dtype, as the validator uses it */
			if (!ok && c.t[i].role != KGB_ROLE_IN && !c.op->check) {
				ok = memcmp(i0.v[i], i2.v[i], comps(&c.t[i]) * sizeof(double)) == 0;
				for (size_t j = 0; ok && j < comps(&c.t[i]); j++) {
					double want = kgb_dtype_round(kgb_dtype_component(c.t[i].dtype), r0.v[i][j]);
					ok = r2.v[i][j] == want || (want != want && r2.v[i][j] != r2.v[i][j]);
				}
			}
			if (!ok)
				FAIL("%s case %u: tensor %s differs on a hit", cases[k].op, cases[k].idx, c.t[i].name);
		}
		kgb_hostbufs_release(&r0);
		kgb_hostbufs_release(&i0);
		kgb_hostbufs_release(&r1);
		kgb_hostbufs_release(&i1);
		kgb_hostbufs_release(&r2);
		kgb_hostbufs_release(&i2);
		kgb_case_release(&c);
	}
}

/* Several processes fill the same keys at once: each gets the computed values, one
 * valid entry is left per key and no temporary file. */
TEST(refcache_concurrent_fill_processes)
{
	enum { NPROC = 4, NSEED = 6 };
	kgb_case_t c;
	kgb_hostbufs_t want[NSEED], wantin[NSEED];
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	unsetenv("KGB_REF_CACHE_MB");
	build("silu", 3, &c);
	for (int s = 0; s < NSEED; s++)
		uncached(&c, 100 + (uint64_t)s, &want[s], &wantin[s]);
	pid_t pids[NPROC];
	for (int p = 0; p < NPROC; p++) {
		pids[p] = fork();
		ASSERT_TRUE(pids[p] >= 0);
		if (pids[p] == 0) {
			int bad = 0;
			for (int round = 0; round < 3; round++)
				for (int s = 0; s < NSEED; s++) {
					kgb_hostbufs_t r, in;
					char err[256];
					/* each process in its own order, so that writers meet */
					int k = (s + p) % NSEED;
					if (kgb_case_reference_inputs(&c, 100 + (uint64_t)k, &r, &in, err, sizeof err) != 0 ||
					    !same(&c, &in, &wantin[k]))
						bad++;
					kgb_hostbufs_release(&r);
					kgb_hostbufs_release(&in);
				}
			_exit(bad ? 1 : 0);
		}
	}
	for (int p = 0; p < NPROC; p++) {
		int st;
		ASSERT_EQ_INT(waitpid(pids[p], &st, 0), pids[p]);
		ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	for (int s = 0; s < NSEED; s++) {
		char *path = kgb_ref_cache_path(&c, 100 + (uint64_t)s), *dir = kgb_xstrdup(path);
		*strrchr(dir, '/') = 0;
		ASSERT_TRUE(access(path, R_OK) == 0);
		DIR *d = opendir(dir);
		struct dirent *de;
		ASSERT_TRUE(d != NULL);
		while ((de = readdir(d)))
			if (strstr(de->d_name, ".tmp"))
				FAIL("temporary file %s/%s left", dir, de->d_name);
		closedir(d);
		uint64_t h0 = hits();
		kgb_hostbufs_t r, in;
		char err[256];
		ASSERT_OK(kgb_case_reference_inputs(&c, 100 + (uint64_t)s, &r, &in, err, sizeof err), err);
		ASSERT_TRUE(hits() == h0 + 1 && same(&c, &in, &wantin[s]));
		kgb_hostbufs_release(&r);
		kgb_hostbufs_release(&in);
		kgb_hostbufs_release(&want[s]);
		kgb_hostbufs_release(&wantin[s]);
		free(path);
		free(dir);
	}
	kgb_case_release(&c);
}

typedef struct fill_arg {
	const kgb_case_t *c;
	const kgb_hostbufs_t *want;
	int bad;
} fill_arg_t;

static void *fill_thread(void *p)
{
	fill_arg_t *a = p;
	for (int round = 0; round < 8; round++) {
		kgb_hostbufs_t r, in;
		char err[256];
		if (kgb_case_reference_inputs(a->c, 77, &r, &in, err, sizeof err) != 0 || !same(a->c, &in, a->want))
			a->bad++;
		kgb_hostbufs_release(&r);
		kgb_hostbufs_release(&in);
	}
	return NULL;
}

/* Threads of one process fill one key at once: every one gets the right inputs. */
TEST(refcache_concurrent_fill_threads)
{
	enum { NT = 4 };
	kgb_case_t c;
	kgb_hostbufs_t want, wantin;
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	unsetenv("KGB_REF_CACHE_MB");
	build("add_", 5, &c);
	uncached(&c, 77, &want, &wantin);
	pthread_t t[NT];
	fill_arg_t a[NT];
	for (int i = 0; i < NT; i++) {
		a[i] = (fill_arg_t){ .c = &c, .want = &wantin };
		ASSERT_EQ_INT(pthread_create(&t[i], NULL, fill_thread, &a[i]), 0);
	}
	for (int i = 0; i < NT; i++) {
		ASSERT_EQ_INT(pthread_join(t[i], NULL), 0);
		ASSERT_EQ_INT(a[i].bad, 0);
	}
	kgb_hostbufs_release(&want);
	kgb_hostbufs_release(&wantin);
	kgb_case_release(&c);
}

/* A damaged entry is never trusted: truncated (header, payload), a byte altered in
 * the inputs, and another key's entry in its place are each recomputed (a miss, the
 * right values) and rewritten (the next lookup is a hit). */
TEST(refcache_corrupt_entries_recomputed)
{
	kgb_case_t c;
	kgb_hostbufs_t want, wantin;
	char err[256];
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	unsetenv("KGB_REF_CACHE_MB");
	build("silu", 3, &c);
	uncached(&c, 5, &want, &wantin);
	char *path = kgb_ref_cache_path(&c, 5), *other = kgb_ref_cache_path(&c, 6);
	kgb_hostbufs_t r, in;
	ASSERT_OK(kgb_case_reference_inputs(&c, 6, &r, &in, err, sizeof err), err);   /* seed 6's entry */
	kgb_hostbufs_release(&r);
	kgb_hostbufs_release(&in);
	for (int damage = 0; damage < 5; damage++) {
		ASSERT_OK(kgb_case_reference_inputs(&c, 5, &r, &in, err, sizeof err), err);   /* whole */
		kgb_hostbufs_release(&r);
		kgb_hostbufs_release(&in);
		size_t len = 0;
		char *buf = kgb_read_file(path, &len, err, sizeof err);
		ASSERT_TRUE(buf != NULL && len > 200);
		switch (damage) {
		case 0: ASSERT_EQ_INT(truncate(path, 20), 0); break;           /* inside the header */
		case 1: ASSERT_EQ_INT(truncate(path, (off_t)len / 2), 0); break; /* inside the payload */
		case 2: ASSERT_EQ_INT(truncate(path, 0), 0); break;
		case 3: {                                                         /* one byte of the inputs */
			buf[150] ^= 0x10;
			ASSERT_EQ_INT(kgb_write_file_atomic(path, buf, len), 0);
			break;
		}
		case 4: {                                                         /* another key's entry */
			size_t olen = 0;
			char *ob = kgb_read_file(other, &olen, err, sizeof err);
			ASSERT_TRUE(ob != NULL);
			ASSERT_EQ_INT(kgb_write_file_atomic(path, ob, olen), 0);
			free(ob);
			break;
		}
		}
		free(buf);
		uint64_t h0, m0, h1, m1;
		kgb_ref_cache_counts(&h0, &m0);
		ASSERT_OK(kgb_case_reference_inputs(&c, 5, &r, &in, err, sizeof err), err);
		kgb_ref_cache_counts(&h1, &m1);
		if (h1 != h0 || m1 != m0 + 1)
			FAIL("damage %d: the entry was trusted (hits %llu -> %llu)", damage, (unsigned long long)h0,
			     (unsigned long long)h1);
		ASSERT_TRUE(same(&c, &in, &wantin));
		kgb_hostbufs_release(&r);
		kgb_hostbufs_release(&in);
		ASSERT_OK(kgb_case_reference_inputs(&c, 5, &r, &in, err, sizeof err), err);   /* rewritten: a hit */
		kgb_ref_cache_counts(&h0, &m0);
		ASSERT_TRUE(h0 == h1 + 1 && m0 == m1);
		ASSERT_TRUE(same(&c, &in, &wantin));
		kgb_hostbufs_release(&r);
		kgb_hostbufs_release(&in);
	}
	free(path);
	free(other);
	kgb_hostbufs_release(&want);
	kgb_hostbufs_release(&wantin);
	kgb_case_release(&c);
}

static uint64_t g_total;
static int sum_cb(const char *p, const struct stat *st, int type, struct FTW *f)
{
	(void)p;
	(void)f;
	if (type == FTW_F)
		g_total += (uint64_t)st->st_size;
	return 0;
}

/* Under a bound of 1 MiB the cache holds at most about that much, and what goes first
 * is what was used least recently: an entry read again survives entries written before
 * that read. */
TEST(refcache_eviction_lru)
{
	kgb_case_t c;
	char err[256];
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	setenv("KGB_REF_CACHE_MB", "1", 1);
	/* the first silu case of 10,000 to 40,000 bytes an entry */
	const kgb_op_t *op = kgb_catalog_find("silu");
	ASSERT_TRUE(op != NULL);
	uint32_t idx = 0;
	size_t bytes = 0;
	for (;; idx++) {
		ASSERT_TRUE(idx < kgb_op_case_count(op));
		ASSERT_OK(kgb_case_build(op, idx, &c, err, sizeof err), err);
		bytes = 0;
		for (int i = 0; i < c.ntensors; i++)
			bytes += c.t[i].storage * kgb_dtype_size(c.t[i].dtype);
		if (bytes >= 10000 && bytes <= 40000)
			break;
		kgb_case_release(&c);
	}
	size_t fit = (1u << 20) / bytes;   /* entries the bound holds */
	kgb_hostbufs_t r, in;
	for (uint64_t s = 0; s < fit / 2; s++) {
		ASSERT_OK(kgb_case_reference_inputs(&c, s, &r, &in, err, sizeof err), err);
		kgb_hostbufs_release(&r);
		kgb_hostbufs_release(&in);
	}
	ASSERT_OK(kgb_case_reference_inputs(&c, 0, &r, &in, err, sizeof err), err);   /* seed 0 used again */
	kgb_hostbufs_release(&r);
	kgb_hostbufs_release(&in);
	for (uint64_t s = fit / 2; s < fit + fit / 4; s++) {
		ASSERT_OK(kgb_case_reference_inputs(&c, s, &r, &in, err, sizeof err), err);
		kgb_hostbufs_release(&r);
		kgb_hostbufs_release(&in);
	}
	char *p0 = kgb_ref_cache_path(&c, 0), *p1 = kgb_ref_cache_path(&c, 1);
	if (access(p0, F_OK) != 0 || access(p1, F_OK) == 0)
		FAIL("seed 0's entry (used last) %s, seed 1's (used once, earlier) %s", access(p0, F_OK) == 0 ? "kept" : "gone",
		     access(p1, F_OK) == 0 ? "kept" : "gone");
	char *root = kgb_ref_cache_root();
	g_total = 0;
	ASSERT_EQ_INT(nftw(root, sum_cb, 16, FTW_PHYS), 0);
	/* eviction runs every 1/16 of the bound written: that much slack */
	if (g_total > (1u << 20) + (1u << 20) / 16 + 2 * bytes + 4096)
		FAIL("the cache holds %llu bytes, bound 1 MiB", (unsigned long long)g_total);
	kgb_ref_cache_trim();
	g_total = 0;
	ASSERT_EQ_INT(nftw(root, sum_cb, 16, FTW_PHYS), 0);
	ASSERT_TRUE(g_total <= (1u << 20));
	free(root);
	free(p0);
	free(p1);
	unsetenv("KGB_REF_CACHE_MB");
	kgb_case_release(&c);
}

/* Held-out cases are cached under their campaign's key: two keys, two entries, each
 * a hit for its own key only. */
TEST(refcache_heldout_keyed)
{
	const kgb_op_t *add = kgb_catalog_find("add");
	ASSERT_TRUE(add != NULL && kgb_op_has_heldout(add));
	uint32_t idx = kgb_heldout_index(add, 3, 0);
	kgb_case_t a, b;
	char err[256];
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	unsetenv("KGB_REF_CACHE_MB");
	ASSERT_OK(kgb_case_build_keyed(add, idx, 1111, &a, err, sizeof err), err);
	ASSERT_OK(kgb_case_build_keyed(add, idx, 2222, &b, err, sizeof err), err);
	ASSERT_TRUE(a.heldout && b.heldout);
	char *pa = kgb_ref_cache_path(&a, 4), *pb = kgb_ref_cache_path(&b, 4);
	ASSERT_TRUE(strcmp(pa, pb) != 0);
	kgb_hostbufs_t r, in;
	ASSERT_OK(kgb_case_reference_inputs(&a, 4, &r, &in, err, sizeof err), err);
	kgb_hostbufs_release(&r);
	kgb_hostbufs_release(&in);
	ASSERT_TRUE(access(pa, F_OK) == 0 && access(pb, F_OK) != 0);
	uint64_t h0 = hits();
	ASSERT_OK(kgb_case_reference_inputs(&b, 4, &r, &in, err, sizeof err), err);   /* its own: a miss */
	kgb_hostbufs_release(&r);
	kgb_hostbufs_release(&in);
	ASSERT_TRUE(hits() == h0);
	ASSERT_OK(kgb_case_reference_inputs(&a, 4, &r, &in, err, sizeof err), err);   /* a hit */
	kgb_hostbufs_release(&r);
	kgb_hostbufs_release(&in);
	ASSERT_TRUE(hits() == h0 + 1);
	free(pa);
	free(pb);
	kgb_case_release(&a);
	kgb_case_release(&b);
}

/* The fast path of the binary16 and bfloat16 encoders (exactly representable values,
 * which is what cached inputs are) gives the rounding encoder's bits: for every
 * pattern, and for a million doubles of every magnitude, exact or not. */
TEST(refcache_narrow_encode_fast_path_exact)
{
	for (uint32_t u = 0; u < 65536; u++) {
		uint16_t h = (uint16_t)u;
		float f16 = kgb_f16_to_f32(h), b16 = kgb_bf16_to_f32(h);
		if (f16 == f16 && kgb_f32_to_f16(f16) != h)
			FAIL("binary16 %04x: decoded %g, encoded %04x", u, (double)f16, kgb_f32_to_f16(f16));
		if (b16 == b16 && kgb_f32_to_bf16(b16) != h)
			FAIL("bfloat16 %04x: decoded %g, encoded %04x", u, (double)b16, kgb_f32_to_bf16(b16));
		/* bfloat16's decoding is the float with those top bits */
		uint32_t bits = u << 16;
		float want;
		memcpy(&want, &bits, 4);
		if (b16 == b16 && memcmp(&want, &b16, 4) != 0)
			FAIL("bfloat16 %04x decodes to %g, not %g", u, (double)b16, (double)want);
	}
	kgb_rng_t r;
	kgb_rng_seed(&r, 42);
	for (int i = 0; i < 1000000; i++) {
		uint64_t x = kgb_rng_next(&r);
		double v;
		switch (i % 4) {
		case 0: v = kgb_f16_to_f32((uint16_t)x); break;                          /* exact binary16 */
		case 1: v = kgb_bf16_to_f32((uint16_t)x); break;                         /* exact bfloat16 */
		case 2: v = ldexp((double)(x >> 11) / 9007199254740992.0, (int)(x % 80) - 40); break;
		default: v = (double)kgb_f16_to_f32((uint16_t)x) * (1.0 + ldexp(1.0, -(int)(x % 30) - 1)); break;
		}
		if (x & (1ull << 63))
			v = -v;
		if (v != v)
			continue;
		uint16_t a = kgb_f32_to_f16((float)v), b = kgb__narrow_encode_rounding((double)(float)v, 10, 5);
		uint16_t c = kgb_f32_to_bf16((float)v), d = kgb__narrow_encode_rounding((double)(float)v, 7, 8);
		if (a != b || c != d)
			FAIL("%a: binary16 %04x vs %04x, bfloat16 %04x vs %04x", v, a, b, c, d);
		uint8_t s16[2], s2[2];
		kgb_dtype_store(KGB_DT_F16, s16, 0, v);   /* from the double itself, not its float */
		uint16_t e = kgb__narrow_encode_rounding(v, 10, 5);
		memcpy(s2, &e, 2);
		if (memcmp(s16, s2, 2) != 0)
			FAIL("%a: stored as binary16 %02x%02x, rounding gives %04x", v, s16[1], s16[0], e);
	}
}
