/* The OpenCL prelude, platform names, and the OpenCL backend used directly (runs in
 * the test's own child process, which is what an executor child is). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "daemon.h"
#include "dtype.h"
#include "prelude.h"
#include "validate.h"
#include "test.h"

TEST(worker_prelude_text)
{
	const char *names[] = { "self", "out", "idx" };
	kgb_dtype_t dts[] = { KGB_DT_F16, KGB_DT_BF16, KGB_DT_I64 };
	char *p = kgb_prelude_opencl(names, dts, 3, "my \"k\".cl");
	ASSERT_CONTAINS(p, "#define T_self half\n");
	ASSERT_CONTAINS(p, "#define T_out ushort\n");
	ASSERT_CONTAINS(p, "#define T_idx long\n");
	ASSERT_CONTAINS(p, "#define LOAD_self(p, i) vload_half((i), (p))");
	ASSERT_CONTAINS(p, "#define STORE_out(p, i, v) ((p)[i] = kgb_float_to_bf16((float)(v)))");
	ASSERT_CONTAINS(p, "#define LOAD_idx(p, i) ((p)[i])");
	ASSERT_CONTAINS(p, "#define KGB_DTYPE_self_f16 1");
	ASSERT_CONTAINS(p, "#define KGB_DTYPE_out_bf16 1");
	ASSERT_CONTAINS(p, "kgb_bf16_to_float(ushort h)");
	/* the #line directive names the candidate's file, quotes neutralised */
	ASSERT_CONTAINS(p, "#line 1 \"my _k_.cl\"\n");
	ASSERT_TRUE(p[strlen(p) - 1] == '\n');
	free(p);
}

TEST(worker_platform_names)
{
	char out[128];
	kgb_worker_platform_name("opencl", "pthread-skylake-avx512-AMD EPYC", out, sizeof out);
	ASSERT_EQ_STR(out, "opencl:pthread-skylake-avx512-amd-epyc");
	kgb_worker_platform_name("cuda", "  NVIDIA H200 ", out, sizeof out);
	ASSERT_EQ_STR(out, "cuda:nvidia-h200");
	kgb_worker_platform_name("hip", "AMD Instinct MI300X (gfx942)", out, sizeof out);
	ASSERT_EQ_STR(out, "hip:amd-instinct-mi300x-gfx942");
	kgb_worker_platform_name("cuda", "", out, sizeof out);
	ASSERT_EQ_STR(out, "cuda:");
	kgb_worker_platform_name("cuda", "NVIDIA GeForce RTX 4090", out, 12);
	ASSERT_EQ_STR(out, "cuda:nvidia");
}

static void *open_dev(const kgb_backend_t *be)
{
	kgb_device_info_t d[4];
	char why[256], err[256];
	void *ctx = NULL;
	if (be->probe(d, 4, why, sizeof why) < 1)
		FAIL("no OpenCL device: %s", why);
	ASSERT_EQ_STR(d[0].backend, "opencl");
	ASSERT_TRUE(d[0].name[0] != 0);
	ASSERT_TRUE(d[0].memory_bytes > 0);
	ASSERT_TRUE(d[0].compute_units > 0);
	if (be->open(0, &ctx, err, sizeof err) != 0)
		FAIL("open: %s", err);
	return ctx;
}

TEST_FLAGS(worker_opencl_buffers_and_views, KGB_TEST_LSAN_NO_TLS)
{
	const kgb_backend_t *be = &kgb_backend_opencl;
	void *ctx = open_dev(be);
	kgb_dbuf_t *parent = NULL, *view = NULL;
	size_t bytes = 1000;
	ASSERT_EQ_INT(be->alloc(ctx, bytes + 2 * KGB_GUARD_BYTES, &parent), 0);
	ASSERT_EQ_INT(be->fill(ctx, parent, 0, KGB_GUARD_BYTE, bytes + 2 * KGB_GUARD_BYTES), 0);
	ASSERT_EQ_INT(be->view(ctx, parent, KGB_GUARD_BYTES, bytes, &view), 0);
	uint8_t src[1000];
	for (size_t i = 0; i < bytes; i++)
		src[i] = (uint8_t)(i * 7);
	ASSERT_EQ_INT(be->write(ctx, view, 0, src, bytes), 0);
	ASSERT_EQ_INT(be->fill(ctx, view, 10, 0x11, 5), 0);
	uint8_t *all = malloc(bytes + 2 * KGB_GUARD_BYTES);
	ASSERT_EQ_INT(be->read(ctx, parent, 0, all, bytes + 2 * KGB_GUARD_BYTES), 0);
	for (size_t i = 0; i < KGB_GUARD_BYTES; i++) {
		ASSERT_EQ_INT(all[i], KGB_GUARD_BYTE);
		ASSERT_EQ_INT(all[KGB_GUARD_BYTES + bytes + i], KGB_GUARD_BYTE);
	}
	for (size_t i = 0; i < bytes; i++)
		ASSERT_EQ_INT(all[KGB_GUARD_BYTES + i], (i >= 10 && i < 15) ? 0x11 : (uint8_t)(i * 7));
	/* a view past the parent's end is refused with a message */
	kgb_dbuf_t *bad = NULL;
	ASSERT_TRUE(be->view(ctx, parent, KGB_GUARD_BYTES, bytes + 2 * KGB_GUARD_BYTES, &bad) != 0);
	ASSERT_CONTAINS(be->last_error(ctx), "outside");
	free(all);
	be->free(ctx, view);
	be->free(ctx, parent);
	ASSERT_EQ_INT(be->health(ctx), 0);
	ASSERT_EQ_INT(be->flush_cache(ctx), 0);
	be->close(ctx);
}

/* The prelude's macros on the device agree with the host conversions. */
TEST_FLAGS(worker_opencl_prelude_on_device, KGB_TEST_LSAN_NO_TLS)
{
	const kgb_backend_t *be = &kgb_backend_opencl;
	void *ctx = open_dev(be);
	static const char src[] =
		"__kernel void conv(__global const T_a *a, __global T_h *h, __global T_b *b, __global T_o *o, int n)\n"
		"{\n"
		"  int i = get_global_id(0);\n"
		"  if (i >= n) return;\n"
		"  float x = LOAD_a(a, i);\n"
		"  STORE_h(h, i, x);\n"
		"  STORE_b(b, i, x);\n"
		"#if defined(KGB_DTYPE_b_bf16) && defined(KGB_DTYPE_h_f16)\n"
		"  STORE_o(o, i, LOAD_b(b, i) + LOAD_h(h, i));\n"
		"#else\n"
		"  STORE_o(o, i, -1.0f);\n"
		"#endif\n"
		"}\n";
	const char *names[] = { "a", "h", "b", "o" };
	kgb_dtype_t dts[] = { KGB_DT_F32, KGB_DT_F16, KGB_DT_BF16, KGB_DT_F32 };
	kgb_compile_req_t req = { .lang = KGB_LANG_OPENCL, .entry = "conv", .source = src, .source_len = sizeof src - 1,
	                          .name = "conv.cl", .tensor_names = names, .tensor_dtypes = dts, .ntensors = 4 };
	kgb_module_t *m = NULL;
	char log[4096];
	if (be->compile(ctx, &req, &m, log, sizeof log) != 0)
		FAIL("compile: %s\n%s", be->last_error(ctx), log);
	enum { N = 4096 };
	float a[N], o[N];
	uint16_t h[N], b[N];
	for (int i = 0; i < N; i++)
		a[i] = (i - N / 2) * 0.37f + (i % 3) * 1e-3f + (i == 5 ? 1e-7f : 0) + (i == 6 ? 60000.0f : 0);
	kgb_dbuf_t *da, *dh, *db, *dout;
	ASSERT_EQ_INT(be->alloc(ctx, sizeof a, &da), 0);
	ASSERT_EQ_INT(be->alloc(ctx, sizeof h, &dh), 0);
	ASSERT_EQ_INT(be->alloc(ctx, sizeof b, &db), 0);
	ASSERT_EQ_INT(be->alloc(ctx, sizeof o, &dout), 0);
	ASSERT_EQ_INT(be->write(ctx, da, 0, a, sizeof a), 0);
	kgb_larg_t args[5] = { { .kind = KGB_LARG_BUF, .buf = da }, { .kind = KGB_LARG_BUF, .buf = dh },
	                       { .kind = KGB_LARG_BUF, .buf = db }, { .kind = KGB_LARG_BUF, .buf = dout },
	                       { .kind = KGB_LARG_SCALAR, .size = 4 } };
	int32_t n = N;
	memcpy(args[4].bytes, &n, 4);
	kgb_launch_t L = { .mod = m, .grid = { N / 128, 1, 1 }, .block = { 128, 1, 1 }, .args = args, .nargs = 5 };
	double el = 0;
	ASSERT_EQ_INT(be->run(ctx, &L, 1, 10000, &el), 0);
	ASSERT_TRUE(el > 0);
	ASSERT_EQ_INT(be->read(ctx, dh, 0, h, sizeof h), 0);
	ASSERT_EQ_INT(be->read(ctx, db, 0, b, sizeof b), 0);
	ASSERT_EQ_INT(be->read(ctx, dout, 0, o, sizeof o), 0);
	for (int i = 0; i < N; i++) {
		ASSERT_EQ_U64(h[i], kgb_f32_to_f16(a[i]));
		ASSERT_EQ_U64(b[i], kgb_f32_to_bf16(a[i]));
		ASSERT_NEAR(o[i], kgb_bf16_to_f32(b[i]) + kgb_f16_to_f32(h[i]), 1e-3 * (1 + (o[i] < 0 ? -o[i] : o[i])));
	}
	be->free(ctx, da);
	be->free(ctx, dh);
	be->free(ctx, db);
	be->free(ctx, dout);
	be->module_free(ctx, m);
	be->close(ctx);
}

/* The opt-in strided helpers (docs/candidate-format.md, "Strided helpers"): absent
 * without KGB_STRIDED; with it, a sum over dim 0 of a transposed [3, 5] tensor. */
TEST_FLAGS(worker_opencl_prelude_strided_helpers, KGB_TEST_LSAN_NO_TLS)
{
	const kgb_backend_t *be = &kgb_backend_opencl;
	void *ctx = open_dev(be);
	static const char src[] =
		"__kernel void red(__global const T_self *self, __global T_out *out, KGB_RED_PARAMS)\n"
		"{\n"
		"  KGB_RED_BEGIN(r);\n"
		"  kgb_acc_t acc = 0;\n"
		"  for (int i = 0; i < rlen; i++, kgb_it_next(&r.in))\n"
		"    acc += LOAD_self(self, r.base + r.in.off[0]);\n"
		"  STORE_out(out, r.out, acc);\n"
		"}\n";
	const char *names[] = { "self", "out" };
	kgb_dtype_t dts[] = { KGB_DT_F32, KGB_DT_F32 };
	kgb_compile_req_t req = { .lang = KGB_LANG_OPENCL, .entry = "red", .source = src, .source_len = sizeof src - 1,
	                          .name = "red.cl", .tensor_names = names, .tensor_dtypes = dts, .ntensors = 2 };
	kgb_module_t *m = NULL;
	char log[4096];
	ASSERT_EQ_INT(be->compile(ctx, &req, &m, log, sizeof log), KGB_BE_COMPILE);
	const char *dn[] = { "KGB_STRIDED" }, *dv[] = { "1" };
	req.define_names = dn;
	req.define_values = dv;
	req.ndefines = 1;
	if (be->compile(ctx, &req, &m, log, sizeof log) != 0)
		FAIL("compile: %s\n%s", be->last_error(ctx), log);
	/* self [3, 5] stored transposed: element (i, j) at i + 3 * j */
	float self[15], out[5];
	for (int k = 0; k < 15; k++)
		self[k] = (float)k;
	/* nout, mask, rlen, sizes, strides, out sizes, out strides */
	const int32_t sc[] = { 5, 1, 3, 3, 5, 1, 1, 1, 1, 1, 3, 0, 0, 0, 0, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0 };
	enum { NS = sizeof sc / sizeof sc[0] };
	kgb_dbuf_t *ds, *dout;
	ASSERT_EQ_INT(be->alloc(ctx, sizeof self, &ds), 0);
	ASSERT_EQ_INT(be->alloc(ctx, sizeof out, &dout), 0);
	ASSERT_EQ_INT(be->write(ctx, ds, 0, self, sizeof self), 0);
	kgb_larg_t args[2 + NS] = { { .kind = KGB_LARG_BUF, .buf = ds }, { .kind = KGB_LARG_BUF, .buf = dout } };
	for (int i = 0; i < NS; i++) {
		args[2 + i].kind = KGB_LARG_SCALAR;
		args[2 + i].size = 4;
		memcpy(args[2 + i].bytes, &sc[i], 4);
	}
	kgb_launch_t L = { .mod = m, .grid = { 1, 1, 1 }, .block = { 8, 1, 1 }, .args = args, .nargs = 2 + NS };
	ASSERT_EQ_INT(be->run(ctx, &L, 1, 10000, NULL), 0);
	ASSERT_EQ_INT(be->read(ctx, dout, 0, out, sizeof out), 0);
	for (int j = 0; j < 5; j++)
		ASSERT_NEAR(out[j], 9.0 * j + 3.0, 1e-6);
	be->free(ctx, ds);
	be->free(ctx, dout);
	be->module_free(ctx, m);
	be->close(ctx);
}

TEST_FLAGS(worker_opencl_compile_error_has_log, KGB_TEST_LSAN_NO_TLS)
{
	const kgb_backend_t *be = &kgb_backend_opencl;
	void *ctx = open_dev(be);
	static const char src[] = "__kernel void k(__global float *p) { p[0] = undefined_name; }\n";
	kgb_compile_req_t req = { .lang = KGB_LANG_OPENCL, .entry = "k", .source = src, .source_len = sizeof src - 1,
	                          .name = "bad.cl" };
	kgb_module_t *m = NULL;
	char log[4096];
	ASSERT_EQ_INT(be->compile(ctx, &req, &m, log, sizeof log), KGB_BE_COMPILE);
	ASSERT_TRUE(m == NULL);
	ASSERT_CONTAINS(log, "bad.cl:1:");
	ASSERT_CONTAINS(log, "undefined_name");
	ASSERT_CONTAINS(be->last_error(ctx), "CL_BUILD_PROGRAM_FAILURE");
	/* defines reach the compiler; a define that is not an identifier is refused */
	static const char src2[] = "__kernel void k(__global float *p) { p[0] = SCALE; }\n";
	const char *dn[] = { "SCALE" }, *dv[] = { "2.5f" };
	kgb_compile_req_t req2 = { .lang = KGB_LANG_OPENCL, .entry = "k", .source = src2, .source_len = sizeof src2 - 1,
	                           .name = "d.cl", .define_names = dn, .define_values = dv, .ndefines = 1 };
	ASSERT_EQ_INT(be->compile(ctx, &req2, &m, log, sizeof log), 0);
	be->module_free(ctx, m);
	const char *bn[] = { "2BAD" };
	req2.define_names = bn;
	ASSERT_EQ_INT(be->compile(ctx, &req2, &m, log, sizeof log), KGB_BE_COMPILE);
	ASSERT_CONTAINS(be->last_error(ctx), "2BAD");
	be->close(ctx);
}
