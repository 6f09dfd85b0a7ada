/* The level-zero backend against its test double (tests/doubles/fake_ze.c, a stand-in
 * for libze_loader built as build/<variant>/lib/libfakeze.so): discovery, memory,
 * SPIR-V modules, launches through run() with kernel-timestamp timing, and the mapping
 * of device loss and hangs. No Intel GPU is involved. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "backend.h"
#include "backends/ze_api.h"
#include "util.h"
#include "test_backend.h"

static const kgb_backend_t *be = &kgb_backend_level_zero;

static void *open_dev(void)
{
	setenv("KGB_ZE_LIBRARY", kgb_test_double("libfakeze.so"), 1);
	void *ctx = NULL;
	char err[512] = "";
	ASSERT_OK(be->open(0, &ctx, err, sizeof err), err);
	return ctx;
}

static const char *lasterr(void *ctx)
{
	return be->last_error(ctx);
}

/* A SPIR-V word stream with one OpEntryPoint per name: enough for the double, which
 * reads the header and the entry points. *len gets the size in bytes; caller frees. */
static uint32_t *spirv_with(const char *const *names, size_t n, size_t *len)
{
	uint32_t *w = calloc(64 + 32 * n, 4);
	size_t k = 0;
	w[k++] = 0x07230203u;
	w[k++] = 0x00010000u;
	w[k++] = 0;
	w[k++] = 100;
	w[k++] = 0;
	w[k++] = (2u << 16) | 17u; /* OpCapability Kernel */
	w[k++] = 6;
	for (size_t i = 0; i < n; i++) {
		size_t sl = strlen(names[i]) + 1, sw = (sl + 3) / 4;
		w[k++] = (uint32_t)((3 + sw) << 16) | 15u; /* OpEntryPoint Kernel %id "name" */
		w[k++] = 6;
		w[k++] = (uint32_t)(10 + i);
		memcpy(&w[k], names[i], sl);
		k += sw;
	}
	*len = k * 4;
	return w;
}

static kgb_module_t *load(void *ctx, const char *entry, const char *const *names, size_t nn, const char *options,
                          const char **dn, const char **dv, size_t nd, int want)
{
	size_t len;
	uint32_t *img = spirv_with(names, nn, &len);
	kgb_compile_req_t req = { .lang = KGB_LANG_SPIRV, .entry = entry, .source = (const char *)img,
		                      .source_len = len, .name = "k.spv", .options = options, .define_names = dn,
		                      .define_values = dv, .ndefines = nd };
	kgb_module_t *m = tb_compile(be, ctx, &req, want);
	free(img);
	return m;
}

static const char *const all_kernels[] = { "fill_u32", "add_f32", "fault", "hang" };

TEST(backend_ze_symbol_table)
{
	size_t n;
	const kgb_ze_sym_t *s = kgb_ze_syms(&n);
	ASSERT_EQ_INT(n * sizeof(void (*)(void)), sizeof(kgb_ze_api_t));
	bool list_sync_optional = false;
	for (size_t i = 0; i < n; i++) {
		ASSERT_EQ_INT(strncmp(s[i].name, "ze", 2), 0);
		for (size_t j = 0; j < i; j++)
			ASSERT_TRUE(strcmp(s[i].name, s[j].name) != 0);
		if (strcmp(s[i].name, "zeCommandListHostSynchronize") == 0)
			list_sync_optional = !s[i].required;
	}
	ASSERT_TRUE(list_sync_optional);
	ASSERT_TRUE(kgb_backend_find("level-zero") == be);
	ASSERT_EQ_U64(be->langs, 1u << KGB_LANG_SPIRV);
}

TEST(backend_ze_missing_loader_zero_devices)
{
	setenv("KGB_ZE_LIBRARY", "/nonexistent/libze_loader.so.1", 1);
	kgb_device_info_t d[2];
	char why[1024] = "";
	ASSERT_EQ_INT(be->probe(d, 2, why, sizeof why), 0);
	ASSERT_CONTAINS(why, "no Level Zero loader");
	ASSERT_CONTAINS(why, "/nonexistent/libze_loader.so.1");
	void *ctx = NULL;
	char err[1024] = "";
	ASSERT_TRUE(be->open(0, &ctx, err, sizeof err) != 0);
	ASSERT_CONTAINS(err, "no Level Zero loader");
}

TEST(backend_ze_probe_gpus_only)
{
	setenv("KGB_ZE_LIBRARY", kgb_test_double("libfakeze.so"), 1);
	setenv("KGB_FAKE_ZE_DEVICES", "2", 1);
	kgb_device_info_t d[4];
	char why[512] = "";
	/* the double lists a CPU device first: it must not be counted */
	ASSERT_EQ_INT(be->probe(d, 4, why, sizeof why), 2);
	ASSERT_EQ_STR(d[0].backend, "level-zero");
	ASSERT_EQ_STR(d[0].name, "Intel(R) Data Center GPU Max 1100 (kgb test double 0)");
	ASSERT_EQ_STR(d[1].name, "Intel(R) Data Center GPU Max 1100 (kgb test double 1)");
	ASSERT_EQ_STR(d[0].arch, "0x0bda");
	ASSERT_EQ_U64(d[0].memory_bytes, (uint64_t)48 << 30); /* both memory regions */
	ASSERT_EQ_U64(d[0].l2_bytes, (uint64_t)108 << 20);
	ASSERT_EQ_INT(d[0].compute_units, 56);
	ASSERT_EQ_STR(d[0].driver_version, "Level Zero driver 1.3.25143");
	ASSERT_EQ_INT(d[1].index, 1);
}

TEST(backend_ze_probe_no_gpu)
{
	setenv("KGB_ZE_LIBRARY", kgb_test_double("libfakeze.so"), 1);
	setenv("KGB_FAKE_ZE_DEVICES", "0", 1);
	kgb_device_info_t d[2];
	char why[512] = "";
	ASSERT_EQ_INT(be->probe(d, 2, why, sizeof why), 0);
	ASSERT_CONTAINS(why, "no GPU device");
}

TEST(backend_ze_ticks_and_classify)
{
	/* a 32-bit timestamp that wrapped between start and end */
	ASSERT_NEAR(kgb_ze_ticks_ns(0xfffffff0u, 0x10u, 32, 52.0), 32 * 52.0, 1e-9);
	ASSERT_NEAR(kgb_ze_ticks_ns(100, 350, 0, 0.5), 125.0, 1e-9);
	ASSERT_EQ_INT(kgb_ze_classify(ZE_RESULT_SUCCESS), KGB_BE_OK);
	ASSERT_EQ_INT(kgb_ze_classify(ZE_RESULT_ERROR_DEVICE_LOST), KGB_BE_FAULT);
	ASSERT_EQ_INT(kgb_ze_classify(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE), KGB_BE_COMPILE);
	ASSERT_EQ_INT(kgb_ze_classify(ZE_RESULT_ERROR_INVALID_KERNEL_NAME), KGB_BE_COMPILE);
	ASSERT_EQ_INT(kgb_ze_classify(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION), KGB_BE_RESOURCE);
	ASSERT_EQ_INT(kgb_ze_classify(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY), KGB_BE_NOMEM);
	ASSERT_EQ_INT(kgb_ze_classify(ZE_RESULT_ERROR_UNINITIALIZED), KGB_BE_ERR);
	ASSERT_EQ_STR(kgb_ze_result_name(ZE_RESULT_ERROR_DEVICE_LOST), "ZE_RESULT_ERROR_DEVICE_LOST");
	ASSERT_EQ_STR(kgb_ze_result_name(0x12345u), "ZE_RESULT_0x00012345");
}

TEST(backend_ze_memory_and_views)
{
	void *ctx = open_dev();
	enum { G = 4096, N = 777 };
	kgb_dbuf_t *parent, *view, *bad = NULL;
	tb_view_round_trip(be, ctx, G, N, 0x5a, 13, 1, N - 3, 3, 0x22, &parent, &view);
	uint8_t src[N] = { 0 };
	ASSERT_EQ_INT(be->write(ctx, view, 1, src, N), KGB_BE_ERR);
	ASSERT_EQ_INT(be->view(ctx, parent, 2 * G, N + G, &bad), KGB_BE_ERR);
	be->free(ctx, view);
	be->free(ctx, parent);
	be->close(ctx);
}

static void add_and_time(void)
{
	void *ctx = open_dev();
	kgb_module_t *m = load(ctx, "add_f32", all_kernels, 4, "-ze-opt-level=2", NULL, NULL, 0, KGB_BE_OK);
	enum { N = 100000 };
	tb_vadd_t v;
	tb_vadd_init(&v, N);
	for (int i = 0; i < N; i++) {
		v.a[i] = (float)i;
		v.b[i] = 0.25f * (float)i + 3.0f;
	}
	tb_vadd_run(&v, be, ctx, m, 128);
	kgb_launch_t L = v.L;
	/* five launches in one run: more than the initial event pool holds */
	ASSERT_EQ_INT(be->flush_cache(ctx), 0);
	kgb_launch_t five[5] = { L, L, L, L, L };
	double ns5 = -1;
	ASSERT_OK(be->run(ctx, five, 5, 5000, &ns5), lasterr(ctx));
	ASSERT_TRUE(ns5 > 0);
	tb_vadd_done(&v, be, ctx, m);
}

TEST(backend_ze_spirv_run_timed)
{
	add_and_time();
}

TEST(backend_ze_spirv_run_timed_without_list_sync)
{
	setenv("KGB_FAKE_ZE_NO_LIST_SYNC", "1", 1);
	add_and_time();
}

TEST(backend_ze_specialization_constants)
{
	void *ctx = open_dev();
	const char *dn[] = { "7" }, *dv[] = { "5" };
	kgb_module_t *m = load(ctx, "fill_u32", all_kernels, 4, NULL, dn, dv, 1, KGB_BE_OK);
	kgb_dbuf_t *d;
	ASSERT_EQ_INT(be->alloc(ctx, 64 * 4, &d), 0);
	kgb_larg_t args[3] = { tb_buf_arg(d), tb_u32_arg(100), tb_u32_arg(64) };
	kgb_launch_t L = { .mod = m, .grid = { 1, 1, 1 }, .block = { 64, 1, 1 }, .args = args, .nargs = 3 };
	ASSERT_OK(be->run(ctx, &L, 1, 5000, NULL), lasterr(ctx));
	uint32_t h[64];
	ASSERT_EQ_INT(be->read(ctx, d, 0, h, sizeof h), 0);
	for (int i = 0; i < 64; i++)
		ASSERT_EQ_U64(h[i], 105);
	/* a define that is not a numeric id */
	dn[0] = "BLOCK";
	load(ctx, "fill_u32", all_kernels, 4, NULL, dn, dv, 1, KGB_BE_COMPILE);
	ASSERT_CONTAINS(lasterr(ctx), "specialization constants");
	tb_done(be, ctx, d, m);
}

TEST(backend_ze_compile_errors)
{
	void *ctx = open_dev();
	static const char text[] = "__kernel void k(void) {}";
	kgb_compile_req_t req = { .lang = KGB_LANG_SPIRV, .entry = "k", .source = text, .source_len = 24,
		                      .name = "k.cl" };
	kgb_module_t *m = NULL;
	char log[1024] = "";
	ASSERT_EQ_INT(be->compile(ctx, &req, &m, log, sizeof log), KGB_BE_COMPILE);
	ASSERT_CONTAINS(lasterr(ctx), "k.cl: not a SPIR-V module");
	req.lang = KGB_LANG_OPENCL;
	ASSERT_EQ_INT(be->compile(ctx, &req, &m, log, sizeof log), KGB_BE_UNSUPPORTED);
	/* the driver's build log reaches the caller */
	size_t len;
	uint32_t *img = spirv_with(all_kernels, 4, &len);
	kgb_compile_req_t r2 = { .lang = KGB_LANG_SPIRV, .entry = "fill_u32", .source = (const char *)img,
		                     .source_len = len, .name = "k.spv", .options = "-fake-build-error" };
	ASSERT_EQ_INT(be->compile(ctx, &r2, &m, log, sizeof log), KGB_BE_COMPILE);
	ASSERT_CONTAINS(log, "build failure requested by -fake-build-error");
	ASSERT_CONTAINS(lasterr(ctx), "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE");
	r2.options = "-I /etc";
	ASSERT_EQ_INT(be->compile(ctx, &r2, &m, log, sizeof log), KGB_BE_COMPILE);
	ASSERT_CONTAINS(lasterr(ctx), "not allowed in build flags");
	free(img);
	load(ctx, "not_here", all_kernels, 4, NULL, NULL, NULL, 0, KGB_BE_COMPILE);
	ASSERT_CONTAINS(lasterr(ctx), "no kernel 'not_here'");
	be->close(ctx);
}

TEST(backend_ze_limits)
{
	void *ctx = open_dev();
	kgb_module_t *m = load(ctx, "fill_u32", all_kernels, 4, NULL, NULL, NULL, 0, KGB_BE_OK);
	kgb_larg_t args[1] = { { .kind = KGB_LARG_LOCAL, .size = 256u << 10 } };
	kgb_launch_t L = { .mod = m, .grid = { 1, 1, 1 }, .block = { 64, 1, 1 }, .args = args, .nargs = 1 };
	ASSERT_EQ_INT(be->run(ctx, &L, 1, 1000, NULL), KGB_BE_RESOURCE);
	ASSERT_CONTAINS(lasterr(ctx), "local memory");
	L.nargs = 0;
	L.block[0] = 2048;
	ASSERT_EQ_INT(be->run(ctx, &L, 1, 1000, NULL), KGB_BE_RESOURCE);
	tb_done(be, ctx, NULL, m);
}

TEST(backend_ze_fault_is_fault)
{
	void *ctx = open_dev();
	kgb_module_t *m = load(ctx, "fault", all_kernels, 4, NULL, NULL, NULL, 0, KGB_BE_OK);
	kgb_launch_t L = { .mod = m, .grid = { 1, 1, 1 }, .block = { 1, 1, 1 } };
	tb_expect_fault(be, ctx, &L, "ZE_RESULT_ERROR_DEVICE_LOST", 16);
	ASSERT_TRUE(be->health(ctx) != 0);
	tb_done(be, ctx, NULL, m);
}

TEST(backend_ze_out_of_bounds_is_fault)
{
	void *ctx = open_dev();
	kgb_module_t *m = load(ctx, "fill_u32", all_kernels, 4, NULL, NULL, NULL, 0, KGB_BE_OK);
	tb_expect_oob_fault(be, ctx, m, 100, 9, 1000, 8);
}

static void hang(void)
{
	void *ctx = open_dev();
	kgb_module_t *m = load(ctx, "hang", all_kernels, 4, NULL, NULL, NULL, 0, KGB_BE_OK);
	kgb_module_t *f = load(ctx, "fill_u32", all_kernels, 4, NULL, NULL, NULL, 0, KGB_BE_OK);
	kgb_dbuf_t *d;
	ASSERT_EQ_INT(be->alloc(ctx, 64, &d), 0);
	kgb_larg_t args[3] = { tb_buf_arg(d), tb_u32_arg(1), tb_u32_arg(16) };
	/* the hang, then a launch queued behind it */
	kgb_launch_t L[2] = { { .mod = m, .grid = { 1, 1, 1 }, .block = { 1, 1, 1 } },
		                  { .mod = f, .grid = { 1, 1, 1 }, .block = { 16, 1, 1 }, .args = args, .nargs = 3 } };
	double t0 = kgb_now_ms(), ns = 0;
	ASSERT_EQ_INT(be->run(ctx, L, 2, 250, &ns), KGB_BE_TIMEOUT);
	double el = kgb_now_ms() - t0;
	ASSERT_TRUE(el >= 250 && el < 5000);
	ASSERT_CONTAINS(lasterr(ctx), "did not finish within 250 ms");
	uint8_t x[8];
	ASSERT_EQ_INT(be->read(ctx, d, 0, x, 8), KGB_BE_TIMEOUT);
	be->free(ctx, d);
	be->module_free(ctx, m);
	be->module_free(ctx, f);
	be->close(ctx);
}

TEST(backend_ze_hang_is_timeout)
{
	hang();
}

TEST(backend_ze_hang_is_timeout_without_list_sync)
{
	setenv("KGB_FAKE_ZE_NO_LIST_SYNC", "1", 1);
	hang();
}

TEST(backend_ze_health_runs_embedded_spirv)
{
	/* the health kernel is a real SPIR-V module: the double finds its entry point by
	 * reading the instruction stream */
	void *ctx = open_dev();
	ASSERT_OK(be->health(ctx), lasterr(ctx));
	be->close(ctx);
}

/* ---- the whole executor pipeline on the double ---- */

TEST(backend_ze_executor_job_end_to_end)
{
	/* the executor child keeps LD_LIBRARY_PATH: the double answers to the loader's name */
	static const char *const names[] = { "libze_loader.so.1" };
	tb_double_as("ze", "libfakeze.so", names, 1);
	unsetenv("KGB_ZE_LIBRARY");

	/* add, f32 [65536], other full: alpha 1 is what add_f32 computes, 0.5 is not */
	size_t len;
	uint32_t *img = spirv_with(all_kernels, 4, &len);
	Kgb__JobAssign *a = tb_add_job(
		"{\"kernels\": [{\"entry\": \"add_f32\", \"lang\": \"spirv\", \"source\": \"add.spv\", "
		"\"grid\": [\"cdiv(out.numel, 128)\"], \"block\": [\"128\"], "
		"\"args\": [{\"tensor\": \"self\"}, {\"tensor\": \"other\"}, {\"tensor\": \"out\"}, "
		"{\"scalar\": \"out.numel\"}]}]}",
		"add.spv", "");
	free(a->sources[0]->content.data);
	a->sources[0]->content.data = (uint8_t *)img;
	a->sources[0]->content.len = len;
	bool needs_health = false;
	Kgb__JobResult *r = tb_run_add_job("level-zero", a, &needs_health);
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}
