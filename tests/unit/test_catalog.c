/* Unit tests of the operator catalog (common/catalog.c and common/ops/). */
#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catalog.h"
#include "test.h"

/* Count the values of a parameter list independently of the catalog's parser. */
static uint64_t count_values(const char *s)
{
	uint64_t n = 0;
	while (*s) {
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		n++;
		if (*s == '[') {
			while (*s && *s != ']')
				s++;
			if (*s)
				s++;
		} else {
			while (*s && !isspace((unsigned char)*s))
				s++;
		}
	}
	return n;
}

TEST(catalog_case_counts_match_grids)
{
	size_t n = kgb_catalog_count();
	ASSERT_TRUE(n >= 12);
	for (size_t i = 0; i < n; i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		uint64_t total = 0;
		for (int g = 0; g < KGB_MAX_GRIDS && op->grids[g].params[0].name; g++) {
			uint64_t p = 1;
			for (int k = 0; k < KGB_MAX_PARAMS && op->grids[g].params[k].name; k++)
				p *= count_values(op->grids[g].params[k].values);
			total += p;
		}
		if (total != kgb_op_case_count(op))
			FAIL("op %s: %u cases, grids give %llu", op->name, kgb_op_case_count(op),
			     (unsigned long long)total);
		ASSERT_TRUE(kgb_catalog_find(op->name) == op);
	}
	ASSERT_TRUE(kgb_catalog_at(n) == NULL);
	ASSERT_TRUE(kgb_catalog_find("no_such_operator") == NULL);
}

/* Timed cases among the smoke subset of op (cases 0..smoke count - 1). */
static uint32_t smoke_timed_count(const kgb_op_t *op)
{
	uint32_t nt = 0;
	for (uint32_t ci = 0; ci < kgb_op_smoke_case_count(op); ci++) {
		kgb_case_t c;
		char err[256];
		ASSERT_OK(kgb_case_build(op, ci, &c, err, sizeof err), err);
		nt += c.timed;
		kgb_case_release(&c);
	}
	return nt;
}

TEST(catalog_demo_operators_present)
{
	static const char *const names[] = {
		"add", "silu", "sum", "softmax", "index_select", "clone", "cumsum", "gt",
		"rms_norm", "rotary_embedding", "cublasSgemm_v2", "cublasSaxpy_v2",
	};
	unsigned demo;
	ASSERT_EQ_INT(kgb_dataset_parse("demo", &demo), 0);
	for (size_t i = 0; i < KGB_ARRAY_LEN(names); i++) {
		const kgb_op_t *op = kgb_catalog_find(names[i]);
		uint32_t nt;
		if (!op)
			FAIL("demo operator %s missing", names[i]);
		ASSERT_TRUE(op->datasets & demo);
		ASSERT_TRUE(op->summary && op->signature && op->declared_cases > 0);
		/* the demo runs the smoke subset: small, with 1-3 timed cases */
		ASSERT_TRUE(kgb_op_smoke_case_count(op) <= 24);
		nt = smoke_timed_count(op);
		if (nt < 1 || nt > 3)
			FAIL("op %s: %u timed smoke cases (want 1-3)", op->name, nt);
	}
}

static void check_int_sym(const kgb_case_t *c, const char *name, int64_t want)
{
	kgb_value_t v;
	if (!kgb_symtab_get(c->sym, name, &v))
		FAIL("op %s case %u: symbol %s missing", c->op->name, c->index, name);
	if (v.is_float || v.i != want)
		FAIL("op %s case %u: symbol %s = %lld, want %lld", c->op->name, c->index, name, (long long)v.i,
		     (long long)want);
}

TEST(catalog_every_case_builds_with_symbols)
{
	size_t total = 0;
	for (size_t i = 0; i < kgb_catalog_count(); i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		for (uint32_t ci = 0; ci < kgb_op_case_count(op); ci++) {
			kgb_case_t c;
			char err[512], name[96];
			ASSERT_OK(kgb_case_build(op, ci, &c, err, sizeof err), err);
			ASSERT_TRUE(c.label[0] != '\0');
			ASSERT_TRUE(c.ntensors > 0);
			ASSERT_TRUE(c.rtol >= 0 && c.atol_rel >= 0);
			for (int t = 0; t < c.ntensors; t++) {
				const kgb_tensor_t *x = &c.t[t];
				int64_t rows = 1;
				for (int d = 0; d + 1 < x->ndim; d++)
					rows *= x->shape[d];
				snprintf(name, sizeof name, "%s.numel", x->name);
				check_int_sym(&c, name, (int64_t)x->numel);
				snprintf(name, sizeof name, "%s.ndim", x->name);
				check_int_sym(&c, name, x->ndim);
				snprintf(name, sizeof name, "%s.storage", x->name);
				check_int_sym(&c, name, (int64_t)x->storage);
				snprintf(name, sizeof name, "%s.rows", x->name);
				check_int_sym(&c, name, rows);
				snprintf(name, sizeof name, "%s.cols", x->name);
				check_int_sym(&c, name, x->ndim ? x->shape[x->ndim - 1] : 1);
				for (int d = 0; d < x->ndim; d++) {
					snprintf(name, sizeof name, "%s.size%d", x->name, d);
					check_int_sym(&c, name, x->shape[d]);
					snprintf(name, sizeof name, "%s.stride%d", x->name, d);
					check_int_sym(&c, name, x->stride[d]);
				}
				snprintf(name, sizeof name, "%s.dtype", x->name);
				ASSERT_EQ_STR(kgb_symtab_get_str(c.sym, name), kgb_dtype_name(x->dtype));
			}
			for (int s = 0; s < c.nscalars; s++) {
				kgb_value_t v;
				ASSERT_TRUE(kgb_symtab_get(c.sym, c.s[s].name, &v));
			}
			for (int p = 0; p < KGB_MAX_PARAMS && op->grids[c.grid].params[p].name; p++) {
				kgb_value_t v;
				if (c.pv[p]->kind == KGB_PV_INT || c.pv[p]->kind == KGB_PV_FLOAT)
					ASSERT_TRUE(kgb_symtab_get(c.sym, op->grids[c.grid].params[p].name, &v));
			}
			kgb_case_release(&c);
			total++;
		}
	}
	ASSERT_TRUE(total >= 100);
}

/* ---- a private operator to test the framework itself ---- */

static int g_ref_calls;

static int fw_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const kgb_pval_t *sh = kgb_case_param(c, "shape");
	const char *layout = kgb_case_pstr(c, "layout", "contig");
	kgb_tensor_t *t;
	if (!sh)
		return kgb_err(err, errlen, "no shape");
	t = kgb_case_add_tensor(c, "x", KGB_ROLE_IN, KGB_DT_F32, sh->ndim, sh->dims);
	if (kgb_tensor_layout(t, layout) != 0)
		return kgb_err(err, errlen, "layout %s", layout);
	kgb_case_add_tensor(c, "y", KGB_ROLE_OUT, KGB_DT_F32, sh->ndim, sh->dims);
	kgb_case_add_scalar(c, "k", KGB_DT_I32, (double)kgb_case_pint(c, "k", 3));
	return 0;
}

static int fw_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0];
	g_ref_calls++;
	for (size_t i = 0; i < x->numel; i++)
		b->v[1][kgb_tensor_flat_offset(&c->t[1], i)] = 2 * b->v[0][kgb_tensor_flat_offset(x, i)];
	return 0;
}

static const kgb_op_t fw_op = {
	.name = "catalog_test_op",
	.source = "test",
	.signature = "x:in y:out k:i32",
	.grids = {
		{ .params = { { "k", "1 2 3" }, { "shape", "[3,4] [64,32]" }, { "layout", "contig transposed strided" } } },
		{ .params = { { "shape", "[] [ 5 , 7 ]" }, { "k", "0.5" } } },
	},
	.setup = fw_setup,
	.ref = fw_ref,
};

TEST(catalog_mixed_radix_last_param_fastest)
{
	kgb_case_t c;
	char err[256];
	ASSERT_EQ_INT(kgb_op_case_count(&fw_op), 3 * 2 * 3 + 2);
	ASSERT_OK(kgb_case_build(&fw_op, 0, &c, err, sizeof err), err);
	ASSERT_EQ_STR(c.label, "k=1 shape=[3,4] layout=contig");
	kgb_case_release(&c);
	ASSERT_OK(kgb_case_build(&fw_op, 1, &c, err, sizeof err), err);
	ASSERT_EQ_STR(c.label, "k=1 shape=[3,4] layout=transposed");
	kgb_case_release(&c);
	ASSERT_OK(kgb_case_build(&fw_op, 3 * 1 + 6 * 2 + 2, &c, err, sizeof err), err);
	ASSERT_EQ_STR(c.label, "k=3 shape=[64,32] layout=strided");
	ASSERT_EQ_INT(c.grid, 0);
	kgb_case_release(&c);
	ASSERT_OK(kgb_case_build(&fw_op, 18, &c, err, sizeof err), err);
	ASSERT_EQ_INT(c.grid, 1);
	ASSERT_EQ_INT(c.t[0].ndim, 0);
	ASSERT_EQ_INT(c.t[0].numel, 1);
	check_int_sym(&c, "x.rows", 1);
	check_int_sym(&c, "x.cols", 1);
	kgb_case_release(&c);
	ASSERT_OK(kgb_case_build(&fw_op, 19, &c, err, sizeof err), err);
	ASSERT_EQ_INT(c.t[0].shape[1], 7);          /* spaces inside a shape are allowed */
	ASSERT_NEAR(kgb_case_pfloat(&c, "k", 0), 0.5, 0);
	check_int_sym(&c, "k", 0);                  /* the i32 scalar wins over the param */
	kgb_case_release(&c);
	ASSERT_EQ_INT(kgb_case_build(&fw_op, 20, &c, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "out of range");
}

TEST(catalog_layouts)
{
	kgb_case_t c;
	char err[256];
	ASSERT_OK(kgb_case_build(&fw_op, 1, &c, err, sizeof err), err);   /* [3,4] transposed */
	ASSERT_EQ_INT(c.t[0].stride[0], 1);
	ASSERT_EQ_INT(c.t[0].stride[1], 3);
	ASSERT_EQ_INT(c.t[0].storage, 12);
	check_int_sym(&c, "x.stride1", 3);
	kgb_case_release(&c);
	ASSERT_OK(kgb_case_build(&fw_op, 2, &c, err, sizeof err), err);   /* [3,4] strided */
	ASSERT_EQ_INT(c.t[0].stride[1], 2);
	ASSERT_EQ_INT(c.t[0].stride[0], 9);
	ASSERT_EQ_INT(c.t[0].storage, 1 + 2 * 9 + 3 * 2);
	ASSERT_EQ_INT(c.t[0].numel, 12);
	ASSERT_EQ_INT(kgb_tensor_flat_offset(&c.t[0], 5), 9 + 2);
	kgb_case_release(&c);
}

static double mean_of_view(const kgb_tensor_t *t, const double *v)
{
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	double s = 0;
	do
		s += v[kgb_tensor_offset(t, idx)];
	while (kgb_index_next(t, idx));
	return s / (double)t->numel;
}

TEST(catalog_inputs_deterministic_and_seeded)
{
	size_t checked = 0;
	for (size_t i = 0; i < kgb_catalog_count(); i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		uint32_t ci, n = kgb_op_case_count(op);
		kgb_case_t c;
		kgb_hostbufs_t a, b, d;
		char err[256];
		/* the first case big enough for a mean to mean something (>= 256 elements)
		 * and small enough to generate quickly */
		for (ci = 0; ci < n; ci++) {
			size_t big = 0, most = 0;
			ASSERT_OK(kgb_case_build(op, ci, &c, err, sizeof err), err);
			for (int t = 0; t < c.ntensors; t++) {
				big = KGB_MAX(big, c.t[t].numel);
				most = KGB_MAX(most, c.t[t].storage);
			}
			if ((big >= 256 && most <= (1u << 18)) || ci == n - 1)
				break;
			kgb_case_release(&c);
		}
		ASSERT_OK(kgb_case_inputs(&c, 1, &a, err, sizeof err), err);
		ASSERT_OK(kgb_case_inputs(&c, 1, &b, err, sizeof err), err);
		ASSERT_OK(kgb_case_inputs(&c, 2, &d, err, sizeof err), err);
		{
			bool changed = false;
			for (int t = 0; t < c.ntensors; t++)
				if (c.t[t].role != KGB_ROLE_OUT &&
				    memcmp(a.v[t], d.v[t], c.t[t].storage * sizeof(double)) != 0)
					changed = true;
			if (!changed && c.ntensors > 1 && c.t[0].role != KGB_ROLE_OUT)
				FAIL("op %s case %u: seeds 1 and 2 give the same inputs", op->name, ci);
		}
		for (int t = 0; t < c.ntensors; t++) {
			const kgb_tensor_t *x = &c.t[t];
			if (memcmp(a.v[t], b.v[t], x->storage * sizeof(double)) != 0)
				FAIL("op %s tensor %s: inputs differ for the same seed", op->name, x->name);
			if (x->role == KGB_ROLE_OUT || x->numel < 256 || x->gen != KGB_GEN_DEFAULT ||
			    !kgb_dtype_is_float(x->dtype))
				continue;
			/* an input rule (gen_inputs) may make a tensor seed-independent on
			 * purpose (a cos/sin table); the case as a whole must still change */
			if (memcmp(a.v[t], d.v[t], x->storage * sizeof(double)) == 0 && !op->gen_inputs)
				FAIL("op %s tensor %s: seeds 1 and 2 give the same inputs", op->name, x->name);
			if (op->gen_inputs == NULL && fabs(mean_of_view(x, a.v[t])) < 0.1)
				FAIL("op %s tensor %s: mean %g is too close to zero", op->name, x->name,
				     mean_of_view(x, a.v[t]));
			checked++;
		}
		kgb_hostbufs_release(&a);
		kgb_hostbufs_release(&b);
		kgb_hostbufs_release(&d);
		kgb_case_release(&c);
	}
	ASSERT_TRUE(checked >= 10);
}

TEST(catalog_inputs_rounded_and_gaps_filled)
{
	kgb_case_t c;
	kgb_hostbufs_t a;
	char err[256];
	const kgb_op_t *op = kgb_catalog_find("clone");
	uint8_t *mask;
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	double gap = NAN;
	/* clone case 11: f16 [33,65] strided */
	ASSERT_TRUE(op != NULL);
	ASSERT_OK(kgb_case_build(op, 11, &c, err, sizeof err), err);
	ASSERT_EQ_STR(c.label, "dtype=f16 shape=[33,65] layout=strided");
	ASSERT_OK(kgb_case_inputs(&c, 3, &a, err, sizeof err), err);
	mask = calloc(c.t[0].storage, 1);
	do
		mask[kgb_tensor_offset(&c.t[0], idx)] = 1;
	while (kgb_index_next(&c.t[0], idx));
	for (size_t i = 0; i < c.t[0].storage; i++) {
		double v = a.v[0][i];
		ASSERT_TRUE(v == kgb_dtype_round(KGB_DT_F16, v));
		if (!mask[i]) {
			if (isnan(gap))
				gap = v;
			ASSERT_TRUE(v == gap);     /* one fixed filler in every gap */
		}
	}
	ASSERT_FALSE(isnan(gap));
	free(mask);
	kgb_hostbufs_release(&a);
	kgb_case_release(&c);
}

TEST(catalog_gt_has_ties)
{
	kgb_case_t c;
	kgb_hostbufs_t a;
	char err[256];
	size_t ties = 0, n;
	ASSERT_OK(kgb_case_build(kgb_catalog_find("gt"), 0, &c, err, sizeof err), err);
	ASSERT_OK(kgb_case_inputs(&c, 9, &a, err, sizeof err), err);
	n = c.t[0].numel;
	for (size_t i = 0; i < n; i++)
		ties += a.v[0][i] == a.v[1][i];
	ASSERT_TRUE(ties > n / 20 && ties < n / 4);
	kgb_hostbufs_release(&a);
	kgb_case_release(&c);
}

static char *cache_file(const kgb_case_t *c, uint64_t seed)
{
	return kgb_xasprintf("%s/ref/%s/%s/%u-%llu.bin", kgb_test_tmpdir(), kgb_catalog_version(), c->op->name,
	                     c->index, (unsigned long long)seed);
}

TEST(catalog_reference_cache)
{
	kgb_case_t c;
	kgb_hostbufs_t a, b, d;
	char err[256], *path, *buf;
	size_t len;
	FILE *f;
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	unsetenv("KGB_REF_CACHE_MB");
	ASSERT_OK(kgb_case_build(&fw_op, 4, &c, err, sizeof err), err);
	g_ref_calls = 0;
	ASSERT_OK(kgb_case_reference(&c, 5, &a, err, sizeof err), err);
	ASSERT_EQ_INT(g_ref_calls, 1);
	path = cache_file(&c, 5);
	ASSERT_TRUE(access(path, F_OK) == 0);
	/* a hit: same bytes, the reference is not run again */
	ASSERT_OK(kgb_case_reference(&c, 5, &b, err, sizeof err), err);
	ASSERT_EQ_INT(g_ref_calls, 1);
	ASSERT_TRUE(memcmp(a.v[1], b.v[1], c.t[1].storage * sizeof(double)) == 0);
	ASSERT_TRUE(memcmp(a.v[0], b.v[0], c.t[0].storage * sizeof(double)) == 0);
	kgb_hostbufs_release(&b);
	/* flip one byte of the payload: recomputed, not trusted */
	buf = kgb_read_file(path, &len, err, sizeof err);
	ASSERT_TRUE(buf != NULL);
	buf[len - 3] ^= 0x40;
	f = fopen(path, "wb");
	ASSERT_TRUE(f && fwrite(buf, 1, len, f) == len && fclose(f) == 0);
	ASSERT_OK(kgb_case_reference(&c, 5, &d, err, sizeof err), err);
	ASSERT_EQ_INT(g_ref_calls, 2);
	ASSERT_TRUE(memcmp(a.v[1], d.v[1], c.t[1].storage * sizeof(double)) == 0);
	kgb_hostbufs_release(&d);
	/* truncated: recomputed too, and the rewritten file is a hit again */
	ASSERT_EQ_INT(truncate(path, 40), 0);
	ASSERT_OK(kgb_case_reference(&c, 5, &d, err, sizeof err), err);
	ASSERT_EQ_INT(g_ref_calls, 3);
	kgb_hostbufs_release(&d);
	ASSERT_OK(kgb_case_reference(&c, 5, &d, err, sizeof err), err);
	ASSERT_EQ_INT(g_ref_calls, 3);
	ASSERT_TRUE(memcmp(a.v[1], d.v[1], c.t[1].storage * sizeof(double)) == 0);
	/* another seed is another entry */
	kgb_hostbufs_release(&d);
	ASSERT_OK(kgb_case_reference(&c, 6, &d, err, sizeof err), err);
	ASSERT_EQ_INT(g_ref_calls, 4);
	ASSERT_TRUE(memcmp(a.v[0], d.v[0], c.t[0].storage * sizeof(double)) != 0);
	kgb_hostbufs_release(&d);
	kgb_hostbufs_release(&a);
	free(buf);
	free(path);
	kgb_case_release(&c);
}

TEST(catalog_reference_cache_bounded)
{
	/* 64x32 f32 output: 16 KiB of doubles per entry; a 1 MiB bound keeps ~60 */
	char err[256], *dir;
	kgb_case_t c;
	size_t total = 0, files = 0;
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	setenv("KGB_REF_CACHE_MB", "1", 1);
	ASSERT_OK(kgb_case_build(&fw_op, 3, &c, err, sizeof err), err);
	ASSERT_EQ_INT(c.t[1].numel, 64 * 32);
	for (uint64_t seed = 0; seed < 200; seed++) {
		kgb_hostbufs_t b;
		ASSERT_OK(kgb_case_reference(&c, seed, &b, err, sizeof err), err);
		kgb_hostbufs_release(&b);
	}
	dir = kgb_xasprintf("%s/ref/%s/%s", kgb_test_tmpdir(), kgb_catalog_version(), fw_op.name);
	for (uint64_t seed = 0; seed < 200; seed++) {
		char *p = kgb_xasprintf("%s/%u-%llu.bin", dir, c.index, (unsigned long long)seed);
		struct stat st;
		if (stat(p, &st) == 0) {
			total += (size_t)st.st_size;
			files++;
		}
		free(p);
	}
	free(dir);
	/* eviction runs every 1/16 of the bound written, so allow that much slack */
	if (total > (1u << 20) + (1u << 20) / 16 + 20000)
		FAIL("cache holds %zu bytes in %zu files, bound 1 MiB", total, files);
	ASSERT_TRUE(files >= 10);
	unsetenv("KGB_REF_CACHE_MB");
	kgb_case_release(&c);
}

TEST(catalog_version_and_datasets)
{
	const char *v = kgb_catalog_version();
	const char *dash = strchr(v, '-');
	unsigned m;
	ASSERT_TRUE(dash != NULL);
	ASSERT_EQ_INT(strlen(dash + 1), 12);
	for (const char *p = dash + 1; *p; p++)
		ASSERT_TRUE(isxdigit((unsigned char)*p));
	ASSERT_TRUE(v == kgb_catalog_version());
	ASSERT_EQ_INT(kgb_dataset_parse("ms", &m), 0);
	ASSERT_EQ_INT(m, KGB_DS_ATEN | KGB_DS_VLLM | KGB_DS_CUBLAS);
	ASSERT_EQ_INT(kgb_dataset_parse("mc", &m), 0);
	ASSERT_EQ_INT(m, KGB_DS_ATEN);
	ASSERT_EQ_INT(kgb_dataset_parse("nocublas", &m), 0);
	ASSERT_EQ_INT(m, KGB_DS_ATEN | KGB_DS_VLLM);
	ASSERT_EQ_INT(kgb_dataset_parse("bogus", &m), -1);
}

TEST(catalog_default_tolerance)
{
	kgb_case_t c;
	char err[256];
	const kgb_op_t *sum = kgb_catalog_find("sum"), *add = kgb_catalog_find("add"), *gt = kgb_catalog_find("gt");
	ASSERT_OK(kgb_case_build(add, 9, &c, err, sizeof err), err);    /* f16 */
	ASSERT_NEAR(c.rtol, 1e-3, 1e-15);
	ASSERT_NEAR(c.atol_rel, 1e-4, 1e-15);
	kgb_case_release(&c);
	ASSERT_OK(kgb_case_build(sum, 3, &c, err, sizeof err), err);    /* f32 [7,4096] */
	ASSERT_NEAR(c.reduce_len, 4096, 0);
	ASSERT_NEAR(c.rtol, 1e-5 * 64, 1e-15);
	ASSERT_NEAR(c.atol_rel, 1e-5 * 64 * 0.1, 1e-15);
	kgb_case_release(&c);
	ASSERT_OK(kgb_case_build(gt, 0, &c, err, sizeof err), err);     /* bool: exact */
	ASSERT_NEAR(c.rtol, 0, 0);
	ASSERT_NEAR(c.atol_rel, 0, 0);
	kgb_case_release(&c);
}

static int bad_setup(kgb_case_t *c, char *err, size_t errlen)
{
	(void)c;
	(void)err;
	(void)errlen;
	return 0;
}

static const kgb_op_t bad_op = {
	.name = "catalog_bad_op",
	.source = "test",
	.grids = { { .params = { { "shape", "[1,2] [3,x]" } } } },
	.setup = bad_setup,
	.ref = fw_ref,
};

TEST(catalog_malformed_list_aborts_naming_op_and_param)
{
	int fds[2], status;
	pid_t pid;
	char out[1024] = { 0 };
	ssize_t n, got = 0;
	ASSERT_EQ_INT(pipe(fds), 0);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		signal(SIGABRT, SIG_DFL);
		(void)kgb_op_case_count(&bad_op);
		_exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + got, sizeof out - 1 - (size_t)got)) > 0)
		got += n;
	close(fds[0]);
	ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	ASSERT_CONTAINS(out, "catalog_bad_op");
	ASSERT_CONTAINS(out, "'shape'");
	ASSERT_CONTAINS(out, "[3,x]");
}

/* ---- smoke subsets ---- */

static const kgb_op_t smoke_op = {
	.name = "catalog_smoke_op",
	.source = "test",
	.signature = "x:in y:out k:i32",
	.grids = {
		{ .params = { { "k", "1 2 3" }, { "shape", "[3,4] [64,32]" }, { "layout", "contig transposed strided" } } },
		{ .params = { { "shape", "[] [ 5 , 7 ]" }, { "k", "0.5" } } },
	},
	.setup = fw_setup,
	.ref = fw_ref,
	.smoke_grids = 1,
};

static const kgb_op_t bad_smoke_op = {
	.name = "catalog_bad_smoke_op",
	.source = "test",
	.grids = { { .params = { { "shape", "[1,2] [3,4]" } } } },
	.setup = bad_setup,
	.ref = fw_ref,
	.smoke_grids = 2,
};

TEST(catalog_smoke_case_count)
{
	kgb_case_t c;
	char err[256];
	/* smoke_grids 0: the smoke subset is every case */
	ASSERT_EQ_INT(kgb_op_smoke_case_count(&fw_op), kgb_op_case_count(&fw_op));
	/* smoke_grids 1: the 18 cases of the first grid, numbered as before */
	ASSERT_EQ_INT(kgb_op_case_count(&smoke_op), 3 * 2 * 3 + 2);
	ASSERT_EQ_INT(kgb_op_smoke_case_count(&smoke_op), 3 * 2 * 3);
	ASSERT_OK(kgb_case_build(&smoke_op, 17, &c, err, sizeof err), err);
	ASSERT_EQ_INT(c.grid, 0);
	ASSERT_EQ_STR(c.label, "k=3 shape=[64,32] layout=strided");
	kgb_case_release(&c);
	ASSERT_OK(kgb_case_build(&smoke_op, 18, &c, err, sizeof err), err);
	ASSERT_EQ_INT(c.grid, 1);
	kgb_case_release(&c);

	/* every catalog operator: the smoke subset is its first smoke_grids grids, in order */
	for (size_t i = 0; i < kgb_catalog_count(); i++) {
		const kgb_op_t *op = kgb_catalog_at(i);
		uint32_t ns = kgb_op_smoke_case_count(op), n = kgb_op_case_count(op);
		uint64_t want = 0;
		ASSERT_TRUE(op->smoke_grids >= 0 && op->smoke_grids < KGB_MAX_GRIDS);
		for (int g = 0; g < (op->smoke_grids ? op->smoke_grids : KGB_MAX_GRIDS) && op->grids[g].params[0].name; g++) {
			uint64_t p = 1;
			for (int k = 0; k < KGB_MAX_PARAMS && op->grids[g].params[k].name; k++)
				p *= count_values(op->grids[g].params[k].values);
			want += p;
		}
		if (ns != want)
			FAIL("op %s: %u smoke cases, its first %d grids give %llu", op->name, ns, op->smoke_grids,
			     (unsigned long long)want);
		ASSERT_TRUE(ns >= 1 && ns <= n);
		if (op->smoke_grids > 0) {
			ASSERT_TRUE(ns < n);
			ASSERT_OK(kgb_case_build(op, ns - 1, &c, err, sizeof err), err);
			ASSERT_EQ_INT(c.grid, op->smoke_grids - 1);
			kgb_case_release(&c);
			ASSERT_OK(kgb_case_build(op, ns, &c, err, sizeof err), err);
			ASSERT_EQ_INT(c.grid, op->smoke_grids);
			kgb_case_release(&c);
		}
	}
	/* the eight ATen operators of the demo have full grids behind their smoke subset */
	static const char *const full[] = { "add", "silu", "sum", "softmax", "index_select", "clone", "cumsum", "gt" };
	for (size_t i = 0; i < KGB_ARRAY_LEN(full); i++) {
		const kgb_op_t *op = kgb_catalog_find(full[i]);
		ASSERT_TRUE(op != NULL && op->smoke_grids > 0);
		if (kgb_op_case_count(op) < 4 * kgb_op_smoke_case_count(op))
			FAIL("op %s: %u cases, %u smoke: the full grids are missing", op->name, kgb_op_case_count(op),
			     kgb_op_smoke_case_count(op));
		ASSERT_TRUE(kgb_op_case_count(op) <= 800);
	}
	/* the two vLLM operators of the demo keep the demo's cases as their smoke subset,
	 * their full vLLM grids behind it; the demo's cuBLAS operators have none */
	ASSERT_EQ_INT(kgb_op_smoke_case_count(kgb_catalog_find("rms_norm")), 12);
	ASSERT_TRUE(kgb_op_case_count(kgb_catalog_find("rms_norm")) > 12);
	ASSERT_EQ_INT(kgb_op_smoke_case_count(kgb_catalog_find("rotary_embedding")), 6);
	ASSERT_TRUE(kgb_op_case_count(kgb_catalog_find("rotary_embedding")) > 6);
	ASSERT_EQ_INT(kgb_op_smoke_case_count(kgb_catalog_find("cublasSgemm_v2")),
	              kgb_op_case_count(kgb_catalog_find("cublasSgemm_v2")));
}

TEST(catalog_bad_smoke_grids_aborts_naming_op)
{
	int fds[2], status;
	pid_t pid;
	char out[1024] = { 0 };
	ssize_t n, got = 0;
	ASSERT_EQ_INT(pipe(fds), 0);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		signal(SIGABRT, SIG_DFL);
		(void)kgb_op_smoke_case_count(&bad_smoke_op);
		_exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + got, sizeof out - 1 - (size_t)got)) > 0)
		got += n;
	close(fds[0]);
	ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	ASSERT_CONTAINS(out, "catalog_bad_smoke_op");
	ASSERT_CONTAINS(out, "smoke_grids = 2");
}

/* The smoke cases keep the demo's symbols (the demo kernels are written against them);
 * the full cases add dims and layouts. */
TEST(catalog_smoke_cases_keep_demo_symbols)
{
	kgb_case_t c;
	char err[256];
	const kgb_op_t *sm = kgb_catalog_find("softmax"), *is = kgb_catalog_find("index_select");
	for (uint32_t ci = 0; ci < kgb_op_smoke_case_count(sm); ci++) {
		ASSERT_OK(kgb_case_build(sm, ci, &c, err, sizeof err), err);
		ASSERT_EQ_INT(kgb_case_tensor(&c, "self")->ndim, 2);
		check_int_sym(&c, "dim", -1);
		check_int_sym(&c, "rows", kgb_case_tensor(&c, "self")->shape[0]);
		check_int_sym(&c, "cols", kgb_case_tensor(&c, "self")->shape[1]);
		kgb_case_release(&c);
	}
	for (uint32_t ci = 0; ci < kgb_op_smoke_case_count(is); ci++) {
		ASSERT_OK(kgb_case_build(is, ci, &c, err, sizeof err), err);
		check_int_sym(&c, "dim", 0);
		check_int_sym(&c, "rows", kgb_case_tensor(&c, "self")->shape[0]);
		check_int_sym(&c, "cols", kgb_case_tensor(&c, "self")->shape[1]);
		kgb_case_release(&c);
	}
	/* a full softmax case along dim 0 of [2,3,4,5,6]: a line is 2 long, 360 apart */
	bool seen = false;
	for (uint32_t ci = kgb_op_smoke_case_count(sm); ci < kgb_op_case_count(sm); ci++) {
		ASSERT_OK(kgb_case_build(sm, ci, &c, err, sizeof err), err);
		if (strcmp(c.label, "shape=[2,3,4,5,6] dtype=bf16 dim=0") == 0) {
			seen = true;
			check_int_sym(&c, "dim", 0);
			check_int_sym(&c, "len", 2);
			check_int_sym(&c, "inner", 360);
			check_int_sym(&c, "outer", 1);
			check_int_sym(&c, "rows", 360);
			check_int_sym(&c, "cols", 2);
		}
		kgb_case_release(&c);
	}
	ASSERT_TRUE(seen);
}

/* Build op's case labelled `label`, generate its inputs (seed 5) and run the
 * reference. */
static void full_case(const char *opname, const char *label, kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_op_t *op = kgb_catalog_find(opname);
	char err[256];
	ASSERT_TRUE(op != NULL);
	for (uint32_t ci = 0; ci < kgb_op_case_count(op); ci++) {
		ASSERT_OK(kgb_case_build(op, ci, c, err, sizeof err), err);
		if (strcmp(c->label, label) == 0) {
			ASSERT_OK(kgb_case_inputs(c, 5, b, err, sizeof err), err);
			ASSERT_EQ_INT(op->ref(c, b), 0);
			return;
		}
		kgb_case_release(c);
	}
	FAIL("op %s has no case labelled '%s'", opname, label);
}

/* Element of tensor `name` at multi-index idx. */
static double at(const kgb_case_t *c, const kgb_hostbufs_t *b, const char *name, const int64_t *idx)
{
	int i = kgb_case_tensor_index(c, name);
	ASSERT_TRUE(i >= 0);
	return b->v[i][kgb_tensor_offset(&c->t[i], idx)];
}

/* The full grids' references, checked against sums written out here over strided
 * inputs and broadcasts. */
TEST(catalog_full_grid_references)
{
	kgb_case_t c;
	kgb_hostbufs_t b;

	/* sum over dim 1 of [3,2,17], keepdim: out [3,1,17] */
	full_case("sum", "shape=[3,2,17] dtype=f32 dim=1 keepdim=1", &c, &b);
	ASSERT_EQ_INT(kgb_case_tensor(&c, "out")->ndim, 3);
	ASSERT_EQ_INT(kgb_case_tensor(&c, "out")->shape[1], 1);
	for (int64_t i = 0; i < 3; i++)
		for (int64_t k = 0; k < 17; k++) {
			int64_t o[3] = { i, 0, k }, x0[3] = { i, 0, k }, x1[3] = { i, 1, k };
			ASSERT_NEAR(at(&c, &b, "out", o), at(&c, &b, "self", x0) + at(&c, &b, "self", x1), 1e-12);
		}
	kgb_hostbufs_release(&b);
	kgb_case_release(&c);

	/* sum of every element: a 0-d out */
	full_case("sum", "shape=[33,65] dtype=bf16 dim=all keepdim=0", &c, &b);
	{
		double s = 0;
		int64_t idx[2] = { 0, 0 }, none[1] = { 0 };
		do
			s += at(&c, &b, "self", idx);
		while (kgb_index_next(kgb_case_tensor(&c, "self"), idx));
		ASSERT_EQ_INT(kgb_case_tensor(&c, "out")->ndim, 0);
		ASSERT_NEAR(at(&c, &b, "out", none), s, 1e-9);
	}
	kgb_hostbufs_release(&b);
	kgb_case_release(&c);

	/* softmax along dim 0 of a transposed [33,65]: every column sums to 1 */
	full_case("softmax", "shape=[33,65] dtype=f32 dim=0 layout=transposed", &c, &b);
	ASSERT_TRUE(kgb_case_tensor(&c, "self")->stride[0] == 1);
	for (int64_t j = 0; j < 65; j++) {
		double s = 0;
		for (int64_t i = 0; i < 33; i++) {
			int64_t o[2] = { i, j };
			s += at(&c, &b, "out", o);
		}
		ASSERT_NEAR(s, 1.0, 1e-12);
	}
	kgb_hostbufs_release(&b);
	kgb_case_release(&c);

	/* cumsum of int16 along dim 0: int64 out, differences give the input back */
	full_case("cumsum", "shape=[33,65] dtype=i16 dim=0", &c, &b);
	ASSERT_EQ_INT(kgb_case_tensor(&c, "out")->dtype, KGB_DT_I64);
	for (int64_t i = 0; i < 33; i++)
		for (int64_t j = 0; j < 65; j++) {
			int64_t o[2] = { i, j }, p[2] = { i - 1, j };
			double prev = i ? at(&c, &b, "out", p) : 0;
			ASSERT_NEAR(at(&c, &b, "out", o) - prev, at(&c, &b, "self", o), 0);
		}
	kgb_hostbufs_release(&b);
	kgb_case_release(&c);

	/* index_select along the last dim of a strided [100,64] */
	full_case("index_select", "shape=[100,64] dtype=f16 dim=1 n=37 layout=strided", &c, &b);
	ASSERT_EQ_INT(kgb_case_tensor(&c, "out")->shape[1], 37);
	for (int64_t i = 0; i < 100; i++)
		for (int64_t j = 0; j < 37; j++) {
			int64_t o[2] = { i, j }, k[1] = { j };
			int64_t s[2] = { i, (int64_t)at(&c, &b, "index", k) };
			ASSERT_TRUE(s[1] >= 0 && s[1] < 64);
			ASSERT_NEAR(at(&c, &b, "out", o), at(&c, &b, "self", s), 0);
		}
	kgb_hostbufs_release(&b);
	kgb_case_release(&c);

	/* add with a column broadcast, int64: exact, alpha truncated to 3 */
	full_case("add", "shape=[33,65] dtype=i64 other=col alpha=3.5", &c, &b);
	ASSERT_NEAR(c.rtol, 0, 0);
	for (int64_t i = 0; i < 33; i++)
		for (int64_t j = 0; j < 65; j++) {
			int64_t o[2] = { i, j }, y[2] = { i, 0 };
			ASSERT_NEAR(at(&c, &b, "out", o), at(&c, &b, "self", o) + 3 * at(&c, &b, "other", y), 0);
		}
	kgb_hostbufs_release(&b);
	kgb_case_release(&c);

	/* gt against the Python scalar: ties give false, and both answers occur */
	full_case("gt", "shape=[1000] dtype=f16 other=scalar", &c, &b);
	{
		size_t ties = 0, trues = 0;
		for (int64_t i = 0; i < 1000; i++) {
			int64_t o[1] = { i };
			double x = at(&c, &b, "self", o), r = at(&c, &b, "out", o);
			ASSERT_NEAR(r, x > 0.25 ? 1.0 : 0.0, 0);
			ties += x == 0.25;
			trues += r == 1.0;
		}
		ASSERT_TRUE(ties >= 50 && trues >= 200 && trues <= 800);
	}
	kgb_hostbufs_release(&b);
	kgb_case_release(&c);
}

static int tol_setup(kgb_case_t *c, char *err, size_t errlen)
{
	int64_t sh[1] = { 8 };
	kgb_dtype_t dt;
	if (kgb_dtype_parse(kgb_case_pstr(c, "dtype", "f32"), &dt) != 0)
		return kgb_err(err, errlen, "bad dtype");
	kgb_case_add_tensor(c, "x", KGB_ROLE_IN, dt, 1, sh);
	kgb_case_add_tensor(c, "y", KGB_ROLE_OUT, dt, 1, sh);
	c->reduce_len = (double)kgb_case_pint(c, "len", 1);
	return 0;
}

static const kgb_op_t tol_op = {
	.name = "catalog_tol_op",
	.source = "test",
	.grids = { { .params = { { "dtype", "f16 bf16 f32" }, { "len", "4 1000000" } } } },
	.setup = tol_setup,
	.ref = fw_ref,
};

/* The default tolerance grows with sqrt(reduce_len) up to 16 elements for half types
 * and 4096 for f32; reduce_len itself is left alone. */
TEST(catalog_default_tolerance_growth_is_capped)
{
	static const struct { double rtol, atol_rel; } want[6] = {
		{ 1e-3, 1e-3 * 2 * 0.1 },          /* f16, 4 */
		{ 1e-3, 1e-3 * 4 * 0.1 },          /* f16, 1e6: capped at 16 */
		{ 1.6e-2, 1.6e-2 * 2 * 0.1 },      /* bf16, 4 */
		{ 1.6e-2, 1.6e-2 * 4 * 0.1 },      /* bf16, 1e6 */
		{ 1e-5 * 2, 1e-5 * 2 * 0.1 },      /* f32, 4 */
		{ 1e-5 * 64, 1e-5 * 64 * 0.1 },    /* f32, 1e6: capped at 4096 */
	};
	ASSERT_EQ_INT(kgb_op_case_count(&tol_op), 6);
	for (uint32_t i = 0; i < 6; i++) {
		kgb_case_t c;
		char err[256];
		ASSERT_OK(kgb_case_build(&tol_op, i, &c, err, sizeof err), err);
		ASSERT_NEAR(c.rtol, want[i].rtol, 1e-15);
		ASSERT_NEAR(c.atol_rel, want[i].atol_rel, 1e-15);
		ASSERT_NEAR(c.reduce_len, i % 2 ? 1e6 : 4, 0);
		kgb_case_release(&c);
	}
	/* the demo's f16 softmax over 40000 columns: the capped bar would be below one
	 * subnormal step of fp16 (its outputs are ~2.5e-5), so softmax keeps atol_rel at
	 * two steps of 2^-24 over its smallest possible maximum, 1/40000; over 1024
	 * columns the capped default is larger and stays */
	kgb_case_t c;
	char err[256];
	const kgb_op_t *sm = kgb_catalog_find("softmax");
	bool seen = false;
	for (uint32_t ci = 0; ci < kgb_op_smoke_case_count(sm); ci++) {
		ASSERT_OK(kgb_case_build(sm, ci, &c, err, sizeof err), err);
		if (strcmp(c.label, "dtype=f16 shape=[2,40000]") == 0) {
			seen = true;
			ASSERT_NEAR(c.atol_rel, 40000 * ldexp(1.0, -23), 1e-15);
			ASSERT_NEAR(c.rtol, 1e-3, 1e-15);
		}
		if (strcmp(c.label, "dtype=f16 shape=[16,1024]") == 0)
			ASSERT_NEAR(c.atol_rel, 1e-3 * 4 * 0.1, 1e-15);
		kgb_case_release(&c);
	}
	ASSERT_TRUE(seen);
}
