/* Python candidates (worker/pycand.h): the recorder's request built from real catalog
 * cases, and the recorder run in the sandbox on KernelGenBench-format modules of
 * tests/pycand/ with the plan it makes checked against the operator. The recording
 * tests need a Python with torch and triton ($KGB_PYREC_PYTHON, else build/venv's,
 * else python3) and skip with the reason otherwise. */
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catalog.h"
#include "compile.h"
#include "devlock.h"
#include "dtype.h"
#include "pycand.h"
#include "reccache.h"
#include "test.h"
#include "util.h"
#include "validate.h"

/* First case of op whose tensors are all f32 and contiguous, with every input of the
 * output's shape when same_shape (the fixtures' kernels index flat). */
static int find_case(const char *opname, bool same_shape, kgb_case_t *c)
{
	const kgb_op_t *op = kgb_catalog_find(opname);
	if (!op)
		return -1;
	char err[256];
	for (uint32_t i = 0; i < kgb_op_case_count(op); i++) {
		if (kgb_case_build(op, i, c, err, sizeof err) != 0)
			continue;
		bool ok = c->ntensors > 0;
		const kgb_tensor_t *out = NULL;
		for (int t = 0; t < c->ntensors; t++)
			if (c->t[t].role != KGB_ROLE_IN)
				out = &c->t[t];
		for (int t = 0; ok && t < c->ntensors; t++) {
			const kgb_tensor_t *x = &c->t[t];
			int64_t want = 1;
			ok = x->dtype == KGB_DT_F32 && x->numel > 1;
			for (int d = x->ndim - 1; ok && d >= 0; d--) {
				ok = x->stride[d] == want || x->shape[d] == 1;
				want *= x->shape[d];
			}
			if (ok && same_shape && out && x != out) {
				ok = x->ndim == out->ndim && memcmp(x->shape, out->shape, sizeof x->shape[0] * x->ndim) == 0;
			}
		}
		if (ok)
			return 0;
		kgb_case_release(c);
	}
	return -1;
}

static char *fixture(const char *name, size_t *len)
{
	char path[1024], err[256];
	const char *src = getenv("KGB_SOURCE_DIR");
	snprintf(path, sizeof path, "%s/tests/pycand/%s", src && *src ? src : ".", name);
	return kgb_read_file(path, len, err, sizeof err);
}

TEST(pycand_request_from_case)
{
	kgb_case_t c;
	ASSERT_EQ_INT(find_case("add", true, &c), 0);
	char *req = kgb_pycand_request(&c, "x = 1\n", 6, "add.py", "add_Tensor", false, 90);
	json_error_t je;
	json_t *r = json_loads(req, 0, &je);
	ASSERT_TRUE(r != NULL);
	ASSERT_EQ_STR(json_string_value(json_object_get(r, "function")), "add_Tensor");
	ASSERT_EQ_STR(json_string_value(json_object_get(r, "source")), "x = 1\n");
	json_t *args = json_object_get(r, "args");
	ASSERT_EQ_INT((int)json_array_size(args), 3); /* self, other, alpha= */
	ASSERT_EQ_STR(json_string_value(json_object_get(json_array_get(args, 0), "name")), "self");
	ASSERT_EQ_STR(json_string_value(json_object_get(json_array_get(args, 1), "name")), "other");
	json_t *alpha = json_array_get(args, 2);
	ASSERT_EQ_STR(json_string_value(json_object_get(alpha, "name")), "alpha");
	ASSERT_TRUE(json_is_true(json_object_get(alpha, "keyword")));
	json_t *self = json_object_get(json_array_get(args, 0), "tensor");
	ASSERT_EQ_STR(json_string_value(json_object_get(self, "dtype")), "f32");
	const kgb_tensor_t *st = kgb_case_tensor(&c, "self");
	ASSERT_EQ_INT((int)json_array_size(json_object_get(self, "shape")), st->ndim);
	ASSERT_EQ_U64((uint64_t)json_integer_value(json_array_get(json_object_get(self, "shape"), 0)),
	              (uint64_t)st->shape[0]);
	json_t *outs = json_object_get(r, "outputs");
	ASSERT_EQ_INT((int)json_array_size(outs), 1);
	ASSERT_EQ_STR(json_string_value(json_object_get(json_array_get(outs, 0), "name")), "out");
	ASSERT_EQ_INT((int)json_integer_value(json_object_get(json_object_get(r, "compile"), "arch")), 90);
	/* an ATen case travels whole: the recorder calls the wrapper as torch calls the
	 * overload, with the PyTorch provider's mapping of this case */
	json_t *cs = json_object_get(r, "case");
	ASSERT_EQ_STR(json_string_value(json_object_get(cs, "op")), "add");
	ASSERT_EQ_INT((int)json_array_size(json_object_get(cs, "tensors")), c.ntensors);
	ASSERT_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(cs, "tensors"), 2), "role")), "out");
	ASSERT_EQ_INT((int)json_array_size(json_object_get(cs, "scalars")), c.nscalars);
	ASSERT_TRUE(json_is_real(json_object_get(json_array_get(json_object_get(cs, "scalars"), 0), "value")));
	ASSERT_TRUE(json_is_string(json_object_get(json_object_get(cs, "params"), "dtype")));
	ASSERT_TRUE(json_object_size(json_object_get(cs, "symbols")) > 0);
	json_decref(r);
	free(req);
	/* the worker's request for an ATen case names no function: the recorder names it
	 * after the overload the case calls */
	char fn[64];
	req = kgb_pycand_request(&c, "x = 1\n", 6, "add.py", kgb_pycand_function(&c, fn, sizeof fn), false, 0);
	r = json_loads(req, 0, &je);
	ASSERT_TRUE(r != NULL);
	ASSERT_TRUE(json_is_null(json_object_get(r, "function")));
	json_decref(r);
	free(req);
	kgb_case_release(&c);
}

/* The Python to record with, or NULL (the test prints why it skips). */
static char *recording_python(void)
{
	const char *env = getenv("KGB_PYREC_PYTHON");
	const char *src = getenv("KGB_SOURCE_DIR");
	char venv[PATH_MAX];
	snprintf(venv, sizeof venv, "%s/build/venv/bin/python", src && *src ? src : ".");
	/* the sandbox runs absolute paths; the venv's own path, not the interpreter it links
	 * to (Python finds the venv's packages from the path it was started as) */
	char cwd[PATH_MAX / 2];
	if (venv[0] != '/' && getcwd(cwd, sizeof cwd)) {
		char *abs = kgb_xasprintf("%s/%s", cwd, venv);
		kgb_strlcpy(venv, abs, sizeof venv);
		free(abs);
	}
	char *py = kgb_find_program(env && *env ? env : access(venv, X_OK) == 0 ? venv : "python3");
	if (!py) {
		printf("    skipped: no python3\n");
		return NULL;
	}
	const char *probe[] = { py, "-c", "import torch, triton", NULL };
	const char *noenv[] = { "HOME=/nonexistent", NULL };
	kgb_sandbox_opts_t o = { .wall_ms = 120000, .env = noenv };
	kgb_sandbox_result_t r;
	char err[256];
	int have = 0;
	if (kgb_sandbox_run(&o, probe, NULL, NULL, &r, err, sizeof err) == 0) {
		have = r.exit_code == 0;
		kgb_sandbox_release(&r);
	}
	if (!have) {
		printf("    skipped: %s cannot import torch and triton (set KGB_PYREC_PYTHON)\n", py);
		free(py);
		return NULL;
	}
	return py;
}

/* Record tests/pycand/FILE on the first suitable case of opname, the request made as
 * the worker makes it (the function named by kgb_pycand_function). */
static void record(const char *py, const char *rec, const char *opname, const char *file, kgb_pycand_out_t *out)
{
	kgb_case_t c;
	ASSERT_EQ_INT(find_case(opname, strcmp(opname, "sum") != 0, &c), 0);
	size_t len = 0;
	char *src = fixture(file, &len), fn[128];
	ASSERT_TRUE(src != NULL);
	char *req = kgb_pycand_request(&c, src, len, file, kgb_pycand_function(&c, fn, sizeof fn), false, 0);
	char err[512] = "";
	ASSERT_OK(kgb_pycand_record(py, rec, req, &c, out, err, sizeof err), err);
	free(req);
	free(src);
	kgb_case_release(&c);
}

/* One recording per test: each starts an interpreter that imports torch (seconds). */
#define WITH_RECORDER(py, rec)                       \
	char *py = recording_python();                   \
	if (!py)                                         \
		return;                                      \
	char *rec = kgb_pycand_find_recorder();          \
	ASSERT_TRUE(rec != NULL)

/* add.py defines add (aten.add.default, two numbers), add_Tensor and add_out: a case of
 * add calls add.Tensor, so add_Tensor, and passes. */
TEST(pycand_record_add)
{
	WITH_RECORDER(py, rec);
	kgb_pycand_out_t o;
	record(py, rec, "add", "add.py", &o);
	ASSERT_EQ_STR(kgb_verdict_name(o.verdict), o.verdict == KGB_V_PASS ? "pass" : o.message);
	ASSERT_CONTAINS(o.recording, "\"function\": \"add_Tensor\"");
	ASSERT_CONTAINS(o.recording, "\"overload\": \"aten.add.Tensor\"");
	ASSERT_TRUE(o.plan != NULL);
	ASSERT_EQ_INT((int)o.plan->nkernels, 1);
	ASSERT_EQ_STR(o.plan->kernels[0].entry, "add_kernel");
	ASSERT_CONTAINS(o.plan_json, "\"tensor\": \"self\"");
	ASSERT_CONTAINS(o.plan_json, "\"tensor\": \"out\"");
	kgb_pycand_out_release(&o);
	free(rec);
	free(py);
}

/* Two requests of one module source for case c in one recorder (one import of torch). */
static void record_two(const char *py, const char *rec, const kgb_case_t *c, const char *src0, const char *src1,
                       kgb_pycand_out_t outs[2])
{
	char fn[128], err[512] = "";
	const char *f = kgb_pycand_function(c, fn, sizeof fn);
	char *reqs[2] = { kgb_pycand_request(c, src0, strlen(src0), "m0.py", f, false, 0),
		              kgb_pycand_request(c, src1, strlen(src1), "m1.py", f, false, 0) };
	const kgb_case_t *cases[2] = { c, c };
	kgb_pycand_batch_info_t info = { .startup_s = -1 };
	ASSERT_OK(kgb_pycand_record_batch(py, rec, reqs, 2, cases, 1, -1, (uint64_t)16384 << 20, NULL, outs, &info, err,
	                                  sizeof err),
	          err);
	/* the recorder reports its start-up (torch imported) and each case's whole recording */
	ASSERT_TRUE(info.startup_s > 0);
	ASSERT_TRUE(!info.server);
	for (int i = 0; i < 2; i++)
		ASSERT_TRUE(outs[i].sec[KGB_PYREC_S_TOTAL] > 0 && outs[i].sec[KGB_PYREC_S_TOTAL] < 600);
	free(reqs[0]);
	free(reqs[1]);
}

TEST(pycand_record_sum_layout)
{
	WITH_RECORDER(py, rec);
	kgb_case_t c;
	ASSERT_EQ_INT(find_case("sum", false, &c), 0);
	size_t len = 0;
	char *src = fixture("sum.py", &len);
	ASSERT_TRUE(src != NULL);
	/* sum.py defines sum (aten.sum.default, every element) only: a case of sum calls
	 * sum.dim_IntList, and the bare sum does not stand in for it. Given that wrapper
	 * reducing everything, where sum's first contiguous f32 case reduces one dim, the
	 * recorder names the output layout instead of making a wrong plan. */
	char *wrong = kgb_xasprintf("%s\ndef sum_dim_IntList(self, dim, keepdim=False, *, dtype=None):\n"
	                            "    return sum(self)\n", src);
	kgb_pycand_out_t o[2];
	record_two(py, rec, &c, src, wrong, o);
	ASSERT_EQ_STR(kgb_verdict_name(o[0].verdict), "import_error");
	ASSERT_CONTAINS(o[0].message, "the module defines no sum_dim_IntList (the case calls aten::sum.dim_IntList); "
	                              "it defines sum");
	ASSERT_EQ_STR(kgb_verdict_name(o[1].verdict), "plan_error");
	ASSERT_CONTAINS(o[1].message, "output 0 has shape");
	ASSERT_CONTAINS(o[1].recording, "\"function\": \"sum_dim_IntList\"");
	for (int i = 0; i < 2; i++)
		kgb_pycand_out_release(&o[i]);
	free(wrong);
	free(src);
	kgb_case_release(&c);
	free(rec);
	free(py);
}

/* sum's cases with dim and keepdim: the wrapper of tests/pycand/sum_dim.py is called
 * as torch calls sum.dim_IntList (self, dim, keepdim) and passes every one; the
 * module's sum (aten.sum.default) is not called. */
TEST(pycand_record_sum_dim)
{
	WITH_RECORDER(py, rec);
	const kgb_op_t *op = kgb_catalog_find("sum");
	ASSERT_TRUE(op != NULL);
	size_t len = 0;
	char *src = fixture("sum_dim.py", &len);
	ASSERT_TRUE(src != NULL);
	int done = 0;
	for (uint32_t i = 0; i < kgb_op_case_count(op) && done < 2; i++) {
		kgb_case_t c;
		char err[512] = "";
		ASSERT_OK(kgb_case_build(op, i, &c, err, sizeof err), err);
		const kgb_pval_t *keep = kgb_case_param(&c, "keepdim");
		const kgb_pval_t *dim = kgb_case_param(&c, "dim");
		/* one case keeping the dim, one dropping it, both reducing dim 0 */
		if (!keep || !dim || strcmp(dim->s, "0") != 0 || atoi(keep->s) != done) {
			kgb_case_release(&c);
			continue;
		}
		char *req = kgb_pycand_request(&c, src, len, "sum_dim.py", NULL, false, 0);
		ASSERT_CONTAINS(req, "\"keepdim\":");
		kgb_pycand_out_t o;
		ASSERT_OK(kgb_pycand_record(py, rec, req, &c, &o, err, sizeof err), err);
		ASSERT_EQ_STR(kgb_verdict_name(o.verdict), o.verdict == KGB_V_PASS ? "pass" : o.message);
		ASSERT_CONTAINS(o.recording, "\"overload\": \"aten.sum.dim_IntList\"");
		ASSERT_CONTAINS(o.recording, "\"function\": \"sum_dim_IntList\"");
		ASSERT_TRUE(o.plan != NULL);
		ASSERT_CONTAINS(o.plan_json, "\"tensor\": \"out\"");
		kgb_pycand_out_release(&o);
		free(req);
		kgb_case_release(&c);
		done++;
	}
	ASSERT_EQ_INT(done, 2);
	free(src);
	free(rec);
	free(py);
}

TEST(pycand_record_host_compute)
{
	WITH_RECORDER(py, rec);
	kgb_pycand_out_t o;
	record(py, rec, "add", "hack_host_compute.py", &o);
	ASSERT_EQ_STR(kgb_verdict_name(o.verdict), "host_compute");
	ASSERT_CONTAINS(o.message, "torch.add");
	ASSERT_TRUE(o.plan == NULL);
	kgb_pycand_out_release(&o);
	free(rec);
	free(py);
}

TEST(pycand_record_import_error)
{
	WITH_RECORDER(py, rec);
	kgb_pycand_out_t o;
	record(py, rec, "silu", "hack_import_error.py", &o);
	ASSERT_EQ_STR(kgb_verdict_name(o.verdict), "import_error");
	ASSERT_CONTAINS(o.message, "kgb_no_such_module_for_tests");
	kgb_pycand_out_release(&o);
	free(rec);
	free(py);
}

/* A module may read no file of the worker's machine (worker/pyrec/kgb_confine.py):
 * an open() of /etc/hostname, or an import from a directory outside the sandbox, makes
 * it fail to import, and nothing of the file reaches the message. */
TEST(pycand_record_confined)
{
	WITH_RECORDER(py, rec);
	kgb_case_t c;
	ASSERT_EQ_INT(find_case("silu", true, &c), 0);
	size_t len = 0;
	char *reader = fixture("hack_read_file.py", &len), *importer = fixture("hack_import_path.py", &len);
	ASSERT_TRUE(reader != NULL && importer != NULL);
	kgb_pycand_out_t o[2];
	record_two(py, rec, &c, reader, importer, o); /* one recorder: one import of torch */
	ASSERT_EQ_STR(kgb_verdict_name(o[0].verdict), "import_error");
	ASSERT_CONTAINS(o[0].message, "may not read '/etc/hostname'");
	char host[256] = "";
	FILE *f = fopen("/etc/hostname", "r");
	if (f && fgets(host, sizeof host, f))
		host[strcspn(host, "\n")] = 0;
	if (f)
		fclose(f);
	if (host[0] && !strstr("may not read '/etc/hostname'", host))
		ASSERT_TRUE(strstr(o[0].message, host) == NULL);
	ASSERT_EQ_STR(kgb_verdict_name(o[1].verdict), "import_error");
	/* the temporary directory is readable (docs/security.md): a source tree under it
	 * is inside the sandbox's reach, and the import gets further (to kgbwire's own) */
	const char *tmpd = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	const char *srcdir = getenv("KGB_SOURCE_DIR");
	char src[PATH_MAX], tmpr[PATH_MAX];
	if (!realpath(srcdir && *srcdir ? srcdir : ".", src) || !realpath(tmpd, tmpr) ||
	    strncmp(src, tmpr, strlen(tmpr)) != 0 || (src[strlen(tmpr)] != '/' && src[strlen(tmpr)] != 0))
		ASSERT_CONTAINS(o[1].message, "kgbwire");
	else
		printf("note: the source tree lies under %s, which a candidate may read: the import check is left out\n",
		       tmpd);
	kgb_pycand_out_release(&o[0]);
	kgb_pycand_out_release(&o[1]);
	kgb_case_release(&c);
	free(reader);
	free(importer);
	free(rec);
	free(py);
}

/* The reference cache holds every case's answer: a candidate may neither read an entry
 * nor list the cache, even where the cache lies under the temporary directory, which
 * it may read (here: the test's directory under it). */
TEST(pycand_record_ref_cache_refused)
{
	WITH_RECORDER(py, rec);
	kgb_case_t c;
	char err[256];
	ASSERT_EQ_INT(find_case("silu", true, &c), 0);
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	unsetenv("KGB_REF_CACHE_MB");
	kgb_hostbufs_t r;
	ASSERT_OK(kgb_case_reference(&c, 1, &r, err, sizeof err), err);
	kgb_hostbufs_release(&r);
	char *entry = kgb_ref_cache_path(&c, 1), *root = kgb_ref_cache_root();
	ASSERT_TRUE(access(entry, R_OK) == 0);
	const char *tail = "\n\ndef silu(self):\n    return torch.empty_like(self)\n";
	char *reader = kgb_xasprintf("import torch\nDATA = open(%s%s%s, 'rb').read()%s", "\"", entry, "\"", tail);
	char *lister = kgb_xasprintf("import os, torch\nNAMES = os.listdir(%s%s%s)%s", "\"", root, "\"", tail);
	kgb_pycand_out_t o[2];
	record_two(py, rec, &c, reader, lister, o);
	for (int k = 0; k < 2; k++) {
		ASSERT_EQ_STR(kgb_verdict_name(o[k].verdict), "import_error");
		ASSERT_CONTAINS(o[k].message, "may not read");
		kgb_pycand_out_release(&o[k]);
	}
	free(reader);
	free(lister);
	free(entry);
	free(root);
	free(rec);
	free(py);
	kgb_case_release(&c);
}

/* The C side names the wrapper only for vLLM and cuBLAS operators (the operator's
 * name); for an ATen operator it leaves the name to the recorder, with or without an
 * overload parameter. */
TEST(pycand_function_names)
{
	static const char *const aten[] = { "add", "mul", "sum", "gt", "_softmax" };
	static const char *const other[] = { "rms_norm", "cublasSgemm_v2" };
	char fn[128], err[256];
	kgb_case_t c;
	for (size_t i = 0; i < sizeof aten / sizeof aten[0]; i++) {
		const kgb_op_t *op = kgb_catalog_find(aten[i]);
		ASSERT_TRUE(op != NULL);
		ASSERT_OK(kgb_case_build(op, 0, &c, err, sizeof err), err);
		ASSERT_TRUE(kgb_pycand_function(&c, fn, sizeof fn) == NULL);
		kgb_case_release(&c);
	}
	for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
		const kgb_op_t *op = kgb_catalog_find(other[i]);
		ASSERT_TRUE(op != NULL);
		ASSERT_OK(kgb_case_build(op, 0, &c, err, sizeof err), err);
		ASSERT_EQ_STR(kgb_pycand_function(&c, fn, sizeof fn), other[i]);
		kgb_case_release(&c);
	}
}

/* The first case of op whose overload (the one the PyTorch provider calls) takes
 * `other` as a tensor (want_tensor) or as a Python number: kgb's case has a tensor
 * named other, or a scalar. */
static int find_other(const char *opname, bool want_tensor, kgb_case_t *c)
{
	const kgb_op_t *op = kgb_catalog_find(opname);
	char err[256];
	for (uint32_t i = 0; op && i < kgb_op_case_count(op); i++) {
		if (kgb_case_build(op, i, c, err, sizeof err) != 0)
			continue;
		if ((kgb_case_tensor(c, "other") != NULL) == want_tensor)
			return 0;
		kgb_case_release(c);
	}
	return -1;
}

/* The recorder calls the function of the overload each case calls, as KernelGenBench
 * registers them, and never another: modules defining the bare <op> (the default
 * overload: two numbers) next to <op>_Tensor and <op>_Scalar, whose wrappers only say
 * who was called. mul's cases name their overload (a grid parameter), gt's do not
 * (the PyTorch provider picks gt.Scalar for a number); a vLLM operator calls the
 * function the C side names. A module without the case's function gets import_error
 * naming it and the functions it does define. */
TEST(pycand_wrapper_per_overload)
{
	WITH_RECORDER(py, rec);
	static const char *const fmt = "def %s(a, b):\n    return a + b\n"
	                               "def %s_Tensor(self, other):\n    raise RuntimeError('called %s_Tensor')\n"
	                               "def %s_Scalar(self, other):\n    raise RuntimeError('called %s_Scalar')\n";
	static const struct {
		const char *op;
		bool tensor;
		const char *want;
	} cs[] = { { "mul", true, "mul_Tensor" }, { "mul", false, "mul_Scalar" },
		       { "gt", true, "gt_Tensor" }, { "gt", false, "gt_Scalar" } };
	enum { N = sizeof cs / sizeof cs[0] + 2 };
	kgb_case_t c[N];
	char *src[N], *reqs[N], fn[128], err[512] = "";
	const kgb_case_t *cp[N];
	for (size_t i = 0; i < N - 2; i++) {
		ASSERT_EQ_INT(find_other(cs[i].op, cs[i].tensor, &c[i]), 0);
		src[i] = kgb_xasprintf(fmt, cs[i].op, cs[i].op, cs[i].op, cs[i].op, cs[i].op);
	}
	/* add's case with a module that has every add function but add_Tensor */
	ASSERT_EQ_INT(find_other("add", true, &c[N - 2]), 0);
	src[N - 2] = kgb_xasprintf("def add(a, b):\n    return a + b\ndef add_Scalar(self, other, alpha=1):\n    pass\n"
	                           "def add_out(self, other, *, alpha=1, out):\n    pass\n"
	                           "def add_Tensor_helper(x):\n    pass\n");
	/* vLLM: the operator's name, given by the C side */
	ASSERT_OK(kgb_case_build(kgb_catalog_find("rms_norm"), 0, &c[N - 1], err, sizeof err), err);
	src[N - 1] = kgb_xasprintf("def rms_norm(*args, **kwargs):\n    raise RuntimeError('called rms_norm')\n");
	for (size_t i = 0; i < N; i++) {
		reqs[i] = kgb_pycand_request(&c[i], src[i], strlen(src[i]), "m.py", kgb_pycand_function(&c[i], fn, sizeof fn),
		                             false, 0);
		cp[i] = &c[i];
	}
	kgb_pycand_out_t o[N];
	ASSERT_OK(kgb_pycand_record_batch(py, rec, reqs, N, cp, 1, -1, (uint64_t)16384 << 20, NULL, o, NULL, err, sizeof err), err);
	for (size_t i = 0; i < N - 2; i++) {
		char want[64];
		snprintf(want, sizeof want, "called %s", cs[i].want);
		ASSERT_EQ_STR(kgb_verdict_name(o[i].verdict), "plan_error");
		ASSERT_CONTAINS(o[i].message, want);
		snprintf(want, sizeof want, "\"function\": \"%s\"", cs[i].want);
		ASSERT_CONTAINS(o[i].recording, want);
	}
	ASSERT_EQ_STR(kgb_verdict_name(o[N - 2].verdict), "import_error");
	ASSERT_EQ_STR(o[N - 2].message, "the module defines no add_Tensor (the case calls aten::add.Tensor); it defines "
	                                "add, add_Scalar, add_out");
	ASSERT_EQ_STR(kgb_verdict_name(o[N - 1].verdict), "plan_error");
	ASSERT_CONTAINS(o[N - 1].message, "called rms_norm");
	for (size_t i = 0; i < N; i++) {
		kgb_pycand_out_release(&o[i]);
		free(reqs[i]);
		free(src[i]);
		kgb_case_release(&c[i]);
	}
	free(rec);
	free(py);
}

/* A batch: two modules' cases in one recorder (each in its own child), the correct
 * one a plan, the hack its verdict; a case whose child dies is a crash. */
TEST(pycand_record_batch)
{
	WITH_RECORDER(py, rec);
	kgb_case_t c;
	ASSERT_EQ_INT(find_case("add", true, &c), 0);
	size_t l1 = 0, l2 = 0;
	char *good = fixture("add.py", &l1), *hack = fixture("hack_host_compute.py", &l2);
	ASSERT_TRUE(good && hack);
	const char *crash = "import os\nos.kill(os.getpid(), 9)\n";
	char *reqs[3] = { kgb_pycand_request(&c, good, l1, "dir/add.py", NULL, false, 0),
		              kgb_pycand_request(&c, hack, l2, "hack.py", NULL, false, 0),
		              kgb_pycand_request(&c, crash, strlen(crash), "crash.py", NULL, false, 0) };
	const kgb_case_t *cases[3] = { &c, &c, &c };
	kgb_pycand_out_t outs[3];
	char err[512] = "";
	ASSERT_OK(kgb_pycand_record_batch(py, rec, reqs, 3, cases, 1, -1, (uint64_t)16384 << 20, NULL, outs, NULL, err, sizeof err),
	          err);
	ASSERT_EQ_STR(kgb_verdict_name(outs[0].verdict), "pass");
	ASSERT_TRUE(outs[0].plan != NULL);
	ASSERT_EQ_STR(outs[0].plan->kernels[0].source, "dir/add.py");   /* the job's name for the module */
	ASSERT_EQ_STR(kgb_verdict_name(outs[1].verdict), "host_compute");
	ASSERT_CONTAINS(outs[1].message, "torch.add");
	ASSERT_EQ_STR(kgb_verdict_name(outs[2].verdict), "crash");
	ASSERT_CONTAINS(outs[2].message, "signal 9");
	for (int i = 0; i < 3; i++) {
		kgb_pycand_out_release(&outs[i]);
		free(reqs[i]);
	}
	free(good);
	free(hack);
	kgb_case_release(&c);
	free(rec);
	free(py);
}

/* A wrapper that copies a transposed input contiguously before its kernel: the copy is
 * a launch of kgb's own kernel in the plan (source kgb_steps.py, found next to the
 * recorder), named in the recording's steps. */
TEST(pycand_record_host_steps)
{
	WITH_RECORDER(py, rec);
	const kgb_op_t *op = kgb_catalog_find("silu");   /* any unary operator: only recorded */
	ASSERT_TRUE(op != NULL);
	kgb_case_t c;
	char err[512] = "";
	bool found = false;
	for (uint32_t i = 0; i < kgb_op_case_count(op) && !found; i++) {
		ASSERT_OK(kgb_case_build(op, i, &c, err, sizeof err), err);
		kgb_tensor_t *x = kgb_case_tensor(&c, "self");
		found = x->dtype == KGB_DT_F32 && x->ndim == 2 && x->shape[0] > 1 && x->shape[1] > 1 &&
		        x->stride[1] == 1 && x->stride[0] == x->shape[1];
		if (found) {   /* the same elements, column-major */
			x->stride[0] = 1;
			x->stride[1] = x->shape[0];
		} else {
			kgb_case_release(&c);
		}
	}
	ASSERT_TRUE(found);
	size_t len = 0;
	char *fix = fixture("host_steps.py", &len);
	ASSERT_TRUE(fix != NULL);
	/* the case calls aten::silu.default, whose wrapper is `silu`: the module's copying
	 * wrapper under that name (the recorder names the function, the request does not) */
	char *src = kgb_xasprintf("%s\nsilu = relu_contiguous\n", fix);
	free(fix);
	len = strlen(src);
	char *req = kgb_pycand_request(&c, src, len, "host_steps.py", NULL, false, 0);
	kgb_pycand_out_t o;
	ASSERT_OK(kgb_pycand_record(py, rec, req, &c, &o, err, sizeof err), err);
	ASSERT_EQ_STR(kgb_verdict_name(o.verdict), "pass");
	ASSERT_TRUE(o.plan != NULL);
	ASSERT_EQ_INT((int)o.plan->nkernels, 2);
	ASSERT_EQ_STR(o.plan->kernels[0].entry, "kgb_copy");
	ASSERT_EQ_STR(o.plan->kernels[0].source, KGB_PYCAND_STEPS);
	ASSERT_EQ_STR(o.plan->kernels[1].source, "host_steps.py");
	ASSERT_TRUE(o.steps != NULL);
	char want[128];
	const kgb_tensor_t *x = kgb_case_tensor(&c, "self");
	snprintf(want, sizeof want, "contiguous copy of self (f32 [%lld, %lld] strides [1, %lld])",
	         (long long)x->shape[0], (long long)x->shape[1], (long long)x->shape[0]);
	ASSERT_CONTAINS(o.steps, want);
	size_t sl = 0;
	char *steps = kgb_pycand_steps_source(rec, &sl, err, sizeof err);
	ASSERT_OK(steps ? 0 : -1, err);
	ASSERT_CONTAINS(steps, "def kgb_copy(");
	ASSERT_CONTAINS(steps, "def kgb_fill(");
	free(steps);
	ASSERT_TRUE(kgb_pycand_steps_source("/nonexistent/kgb_record.py", &sl, err, sizeof err) == NULL);
	ASSERT_CONTAINS(err, "kgb_steps.py");
	kgb_pycand_out_release(&o);
	free(req);
	free(src);
	kgb_case_release(&c);
	free(rec);
	free(py);
}

/* Recording children that record on a device hold the device lock shared, one hold per
 * case, the way a validated run holds it: behind a timing that holds the lock (or
 * waits at the gate), never inside it. Here a process holds the lock exclusively for
 * a second while a batch of two cases starts (on the CPU; the lock is what is tested). */
TEST(pycand_record_batch_holds_device_lock_shared)
{
	WITH_RECORDER(py, rec);
	char lock[PATH_MAX], trace[PATH_MAX];
	snprintf(lock, sizeof lock, "%s/dev.lock", kgb_test_tmpdir());
	snprintf(trace, sizeof trace, "%s/dev.trace", kgb_test_tmpdir());
	unlink(trace);
	setenv("KGB_DEVLOCK_TRACE", trace, 1);
	int ready[2];
	ASSERT_EQ_INT(pipe(ready), 0);
	pid_t timer = fork();
	if (timer == 0) {
		kgb_devlock_t l;
		char e[256];
		if (kgb_devlock_open(&l, lock, e, sizeof e) != 0)
			_exit(1);
		kgb_devlock_take(&l, LOCK_EX, NULL, NULL);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		usleep(1000000);
		kgb_devlock_close(&l);
		_exit(0);
	}
	char b;
	close(ready[1]);
	ASSERT_EQ_INT((int)read(ready[0], &b, 1), 1);
	close(ready[0]);
	kgb_case_t c;
	ASSERT_EQ_INT(find_case("add", true, &c), 0);
	size_t l1 = 0;
	char *good = fixture("add.py", &l1);
	ASSERT_TRUE(good != NULL);
	char *reqs[2] = { kgb_pycand_request(&c, good, l1, "add.py", "add_Tensor", false, 0),
		              kgb_pycand_request(&c, good, l1, "add.py", "add_Tensor", false, 0) };
	const kgb_case_t *cases[2] = { &c, &c };
	kgb_pycand_out_t outs[2];
	char err[512] = "";
	ASSERT_OK(kgb_pycand_record_batch(py, rec, reqs, 2, cases, 1, -1, (uint64_t)16384 << 20, lock, outs, NULL, err,
	                                  sizeof err),
	          err);
	unsetenv("KGB_DEVLOCK_TRACE");
	int st;
	waitpid(timer, &st, 0);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* the trace: the timer's exclusive hold, then one shared hold per case, by the
	 * recording children, each granted after the exclusive one ended */
	FILE *f = fopen(trace, "r");
	ASSERT_TRUE(f != NULL);
	char line[256], mode[8];
	long pid;
	unsigned long long asked, granted, released, ex_end = 0, sh_granted[4];
	int nsh = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%ld %7s %llu %llu %llu", &pid, mode, &asked, &granted, &released) == 5) {
			if (strcmp(mode, "EX") == 0 && pid == timer)
				ex_end = released;
			else if (strcmp(mode, "SH") == 0 && nsh < 4 && pid != timer && pid != getpid())
				sh_granted[nsh++] = granted;
			else
				FAIL("unexpected hold in the trace: %s", line);
		}
	fclose(f);
	ASSERT_TRUE(ex_end > 0);
	ASSERT_EQ_INT(nsh, 2);
	for (int i = 0; i < nsh; i++)
		if (sh_granted[i] < ex_end)
			FAIL("a recording child got the lock at %llu ns, inside the exclusive hold that ended at %llu ns",
			     sh_granted[i], ex_end);
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ_STR(kgb_verdict_name(outs[i].verdict), "pass");
		kgb_pycand_out_release(&outs[i]);
		free(reqs[i]);
	}
	free(good);
	kgb_case_release(&c);
	free(rec);
	free(py);
}


/* The recording cache's entries (worker/reccache.h): a plan round-trips and is checked
 * again, refusals are kept, crashes are not, a damaged entry is a miss and is removed,
 * and the directory is pruned to its bound, least recently used first. No Python. */
TEST(pycand_reccache_entries)
{
	char dir[PATH_MAX], path[PATH_MAX + 100];
	snprintf(dir, sizeof dir, "%s/cache", kgb_test_tmpdir());
	setenv("KGB_CACHE_DIR", dir, 1);
	kgb_case_t c;
	ASSERT_EQ_INT(find_case("add", true, &c), 0);
	const char *plan = "{\"kernels\": [{\"entry\": \"add_kernel\", \"lang\": \"triton\", \"source\": \"add.py\", "
	                   "\"signature\": \"*fp32,*fp32,*fp32,i32\", \"configs\": [{\"constants\": {\"BLOCK\": \"256\"}, "
	                   "\"num_warps\": 4, \"num_stages\": 3}], \"grid\": [\"4\"], \"args\": [{\"tensor\": \"self\"}, "
	                   "{\"tensor\": \"other\"}, {\"tensor\": \"out\"}, {\"scalar\": \"1024\", \"type\": \"i32\"}]}]}";
	char s1[65], s2[65], k1[65], k2[65], k3[65], k4[65];
	kgb_reccache_stamp("/nonexistent/bin/python", "/nonexistent/kgb_record.py", false, s1);
	kgb_reccache_stamp("/nonexistent/bin/python", "/nonexistent/kgb_record.py", true, s2);
	kgb_reccache_key(s1, "{\"request\": 1}", k1);
	kgb_reccache_key(s2, "{\"request\": 1}", k2);
	kgb_reccache_key(s1, "{\"request\": 2}", k3);
	kgb_reccache_key(s1, "{\"request\": 3}", k4);
	ASSERT_TRUE(strcmp(k1, k2) != 0 && strcmp(k1, k3) != 0);
	kgb_pycand_out_t o = { .verdict = KGB_V_PASS }, got;
	o.plan_json = (char *)plan;
	o.recording = (char *)"{\"verdict\": \"pass\"}";
	kgb_reccache_put(k1, &o);
	ASSERT_EQ_INT(kgb_reccache_get(k1, &c, &got), 0);
	ASSERT_EQ_STR(kgb_verdict_name(got.verdict), "pass");
	ASSERT_TRUE(got.plan != NULL);
	ASSERT_EQ_STR(got.plan->kernels[0].entry, "add_kernel");
	ASSERT_EQ_STR(got.recording, "{\"verdict\": \"pass\"}");
	kgb_pycand_out_release(&got);
	ASSERT_EQ_INT(kgb_reccache_get(k2, &c, &got), -1);   /* recorded on a device: another key */
	/* a refusal is kept; a crash is not */
	kgb_pycand_out_t r = { .verdict = KGB_V_HOST_COMPUTE }, cr = { .verdict = KGB_V_CRASH };
	snprintf(r.message, sizeof r.message, "the wrapper computes on the host: torch.add");
	kgb_reccache_put(k3, &r);
	kgb_reccache_put(k4, &cr);
	ASSERT_EQ_INT(kgb_reccache_get(k3, &c, &got), 0);
	ASSERT_EQ_STR(kgb_verdict_name(got.verdict), "host_compute");
	ASSERT_EQ_STR(got.message, "the wrapper computes on the host: torch.add");
	kgb_pycand_out_release(&got);
	ASSERT_EQ_INT(kgb_reccache_get(k4, &c, &got), -1);
	/* damaged: cut short, then a plan that does not fit the operator */
	snprintf(path, sizeof path, "%s/recordings/%s.json", dir, k1);
	ASSERT_EQ_INT(kgb_write_file_atomic(path, "{\"version\": 1, \"verd", 20), 0);
	ASSERT_EQ_INT(kgb_reccache_get(k1, &c, &got), -1);
	ASSERT_TRUE(access(path, F_OK) != 0);   /* removed */
	o.plan_json = (char *)"{\"kernels\": [{\"entry\": \"k\", \"lang\": \"triton\", \"source\": \"a.py\", "
	                      "\"grid\": [\"1\"], \"args\": [{\"tensor\": \"no_such_tensor\"}]}]}";
	kgb_reccache_put(k1, &o);
	ASSERT_TRUE(access(path, F_OK) == 0);
	ASSERT_EQ_INT(kgb_reccache_get(k1, &c, &got), -1);
	ASSERT_TRUE(access(path, F_OK) != 0);
	/* the bound (1 MiB): three entries of 400 KB, the oldest used first to go */
	setenv("KGB_PYREC_CACHE_MB", "1", 1);
	char *big = kgb_xmalloc(400001);
	memset(big, 'x', 400000);
	big[400000] = 0;
	kgb_pycand_out_t b = { .verdict = KGB_V_NO_LAUNCH };
	b.recording = big;
	const char *keys[3] = { k1, k3, k4 };
	for (int i = 0; i < 3; i++) {
		kgb_reccache_put(keys[i], &b);
		snprintf(path, sizeof path, "%s/recordings/%s.json", dir, keys[i]);
		struct timespec ts[2] = { { 1000000 + i, 0 }, { 1000000 + i, 0 } };
		ASSERT_EQ_INT(utimensat(AT_FDCWD, path, ts, 0), 0);
	}
	kgb_reccache_prune();
	snprintf(path, sizeof path, "%s/recordings/%s.json", dir, k1);
	ASSERT_TRUE(access(path, F_OK) != 0);   /* the least recently used */
	snprintf(path, sizeof path, "%s/recordings/%s.json", dir, k4);
	ASSERT_TRUE(access(path, F_OK) == 0);
	unsetenv("KGB_PYREC_CACHE_MB");
	free(big);
	kgb_case_release(&c);
}

/* The recorder server (docs/python-candidates.md, "The recorder server"), run as the
 * worker runs it: a batch through it records what a recorder of its own records, the
 * batch says it came from the server, and the server ends when its socket is removed. */
typedef struct {
	const char *py, *rec;
	char sock[256], err[512];
	int rc;
} server_t;

static void *server_main(void *arg)
{
	server_t *s = arg;
	s->rc = kgb_pycand_server_run(s->py, s->rec, 1, s->sock, s->err, sizeof s->err);
	return NULL;
}

TEST(pycand_record_batch_through_server)
{
	WITH_RECORDER(py, rec);
	char dir[] = "/tmp/kgb-pyrec-test.XXXXXX";
	ASSERT_TRUE(mkdtemp(dir) != NULL);
	setenv("KGB_PYREC_SERVER", dir, 1);
	server_t s = { .py = py, .rec = rec, .rc = -9 };
	ASSERT_TRUE(kgb_pycand_server_socket(1, s.sock, sizeof s.sock) != NULL);
	ASSERT_CONTAINS(s.sock, "/interpret.sock");
	char dsock[256];
	ASSERT_CONTAINS(kgb_pycand_server_socket(0, dsock, sizeof dsock), "/device.sock");
	pthread_t t;
	ASSERT_EQ_INT(pthread_create(&t, NULL, server_main, &s), 0);
	/* it listens once torch and Triton are imported */
	for (int i = 0; i < 3000 && access(s.sock, F_OK) != 0 && s.rc == -9; i++)
		usleep(100000);
	ASSERT_TRUE(access(s.sock, F_OK) == 0);

	kgb_case_t c;
	ASSERT_EQ_INT(find_case("add", true, &c), 0);
	size_t len = 0;
	char *src = fixture("add.py", &len), fn[128], err[512] = "";
	ASSERT_TRUE(src != NULL);
	char *reqs[2] = { kgb_pycand_request(&c, src, len, "add.py", kgb_pycand_function(&c, fn, sizeof fn), false, 0),
		              kgb_pycand_request(&c, "import os\n", 10, "bad.py", kgb_pycand_function(&c, fn, sizeof fn),
		                                 false, 0) };
	const kgb_case_t *cases[2] = { &c, &c };
	kgb_pycand_out_t o[2];
	kgb_pycand_batch_info_t info = { 0 };
	ASSERT_OK(kgb_pycand_record_batch(py, rec, reqs, 2, cases, 1, -1, (uint64_t)16384 << 20, NULL, o, &info, err,
	                                  sizeof err),
	          err);
	ASSERT_TRUE(info.server);
	ASSERT_EQ_STR(kgb_verdict_name(o[0].verdict), o[0].verdict == KGB_V_PASS ? "pass" : o[0].message);
	ASSERT_CONTAINS(o[0].recording, "\"function\": \"add_Tensor\"");
	ASSERT_TRUE(o[0].plan != NULL && o[0].sec[KGB_PYREC_S_TOTAL] > 0);
	ASSERT_EQ_STR(kgb_verdict_name(o[1].verdict), "import_error");
	for (int i = 0; i < 2; i++) {
		kgb_pycand_out_release(&o[i]);
		free(reqs[i]);
	}
	/* no server for the device mode here: that batch starts a recorder of its own */
	ASSERT_TRUE(access(dsock, F_OK) != 0);

	/* the worker removes the socket: the server ends */
	unlink(s.sock);
	pthread_join(t, NULL);
	ASSERT_EQ_INT(s.rc, 0);
	ASSERT_CONTAINS(s.err, "the recorder server ended (exit 0");
	unsetenv("KGB_PYREC_SERVER");
	kgb_rmtree(dir);
	free(src);
	kgb_case_release(&c);
	free(py);
	free(rec);
}

/* The binaries a recording keeps (kgb_record.py keep_binaries) reach the plan: kernel
 * i's as k<i>.jit.*, configuration j's of an autotuned launch as k<i>.c<j>.jit.*, each
 * binary only with its ABI. The recorder here is the real one followed by a double that
 * leaves the files a GPU recording leaves (no GPU here). */
TEST(pycand_record_batch_reads_kept_binaries)
{
	WITH_RECORDER(py, rec);
	char dir[] = "/tmp/kgb-pyrec-bin.XXXXXX";
	ASSERT_TRUE(mkdtemp(dir) != NULL);
	char *fake = kgb_xasprintf("%s/fake_record.py", dir);
	char *text = kgb_xasprintf(
		"import os, runpy, sys\n"
		"sys.argv = ['%s', '-', '.']\n"
		"sys.path.insert(0, os.path.dirname(sys.argv[0]))\n"
		"try:\n"
		"    runpy.run_path(sys.argv[0], run_name='__main__')\n"
		"    rc = 0\n"
		"except SystemExit as e:\n"
		"    rc = e.code or 0\n"
		"for d in sorted(os.listdir('.')):\n"
		"    if os.path.exists(os.path.join(d, 'plan.json')):\n"
		"        open(os.path.join(d, 'k0.c0.jit.cubin'), 'wb').write(b'cfg0-' + d.encode())\n"
		"        open(os.path.join(d, 'k0.c0.jit.abi.json'), 'w').write('{}')\n"
		"        open(os.path.join(d, 'k0.jit.cubin'), 'wb').write(b'no abi')\n"
		"sys.exit(rc)\n",
		rec);
	char err[512] = "";
	ASSERT_EQ_INT(kgb_write_file_atomic(fake, text, strlen(text)), 0);
	kgb_case_t c;
	ASSERT_EQ_INT(find_case("add", true, &c), 0);
	size_t len = 0;
	char *src = fixture("add.py", &len), fn[128];
	ASSERT_TRUE(src != NULL);
	char *req = kgb_pycand_request(&c, src, len, "add.py", kgb_pycand_function(&c, fn, sizeof fn), false, 0);
	const kgb_case_t *cases[1] = { &c };
	kgb_pycand_out_t o;
	ASSERT_OK(kgb_pycand_record_batch(py, fake, &req, 1, cases, 1, -1, (uint64_t)16384 << 20, NULL, &o, NULL, err,
	                                  sizeof err),
	          err);
	ASSERT_EQ_STR(kgb_verdict_name(o.verdict), o.verdict == KGB_V_PASS ? "pass" : o.message);
	ASSERT_TRUE(o.plan && o.plan->nkernels == 1 && o.plan->kernels[0].nconfigs == 1);
	const kgb_plan_kernel_t *k = &o.plan->kernels[0];
	/* k0.jit.cubin came without its ABI: not taken */
	ASSERT_TRUE(k->prebuilt == NULL && k->prebuilt_abi == NULL);
	ASSERT_TRUE(k->configs[0].prebuilt != NULL && k->configs[0].prebuilt_abi != NULL);
	ASSERT_EQ_INT((int)k->configs[0].prebuilt_len, 6);
	ASSERT_TRUE(memcmp(k->configs[0].prebuilt, "cfg0-0", 6) == 0);
	ASSERT_EQ_STR(k->configs[0].prebuilt_abi, "{}");
	kgb_pycand_out_release(&o);
	free(req);
	free(src);
	kgb_case_release(&c);
	free(text);
	free(fake);
	kgb_rmtree(dir);
	free(py);
	free(rec);
}
