/* The HIP backend against its test double (tests/doubles/fake_hip.c, a stand-in for
 * libamdhip64 + libhiprtc built as build/<variant>/lib/libfakehip.so): discovery,
 * memory, HIPRTC compile and code-object loading, launches through run() with event
 * timing, and the mapping of faults and hangs. No AMD GPU is involved. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "backend.h"
#include "backends/backend_common.h"
#include "backends/hip_api.h"
#include "util.h"
#include "test_backend.h"

#define FAKE_ARCH "gfx90a:sramecc+:xnack-"

/* Point the backend at the double (before anything loads the runtime). */
static void use_double(const char *lib)
{
	const char *p = kgb_test_double(lib);
	setenv("KGB_HIP_LIBRARY", p, 1);
	setenv("KGB_HIPRTC_LIBRARY", p, 1);
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
}

static void *open_dev(void)
{
	use_double("libfakehip.so");
	void *ctx = NULL;
	char err[512] = "";
	ASSERT_OK(kgb_backend_hip.open(0, &ctx, err, sizeof err), err);
	ASSERT_TRUE(ctx != NULL);
	return ctx;
}

static const char *lasterr(void *ctx)
{
	return kgb_backend_hip.last_error(ctx);
}

static kgb_module_t *load_hsaco(void *ctx, const char *image, const char *entry, int want_rc)
{
	kgb_compile_req_t req = { .lang = KGB_LANG_HSACO, .entry = entry, .source = image,
		                      .source_len = strlen(image), .name = "k.hsaco" };
	return tb_compile(&kgb_backend_hip, ctx, &req, want_rc);
}


TEST(backend_hip_symbol_tables)
{
	size_t n;
	const kgb_hip_sym_t *s = kgb_hip_runtime_syms(&n);
	ASSERT_EQ_INT(n * sizeof(void (*)(void)), sizeof(kgb_hip_api_t));
	bool launch = false, r0600 = false;
	for (size_t i = 0; i < n; i++) {
		ASSERT_TRUE(s[i].symbol[0] != 0);
		ASSERT_EQ_INT(strncmp(s[i].symbol, s[i].field, strlen(s[i].field)) == 0 ||
		              strcmp(s[i].fallback, "hipGetDeviceProperties") == 0, 1);
		for (size_t j = 0; j < i; j++)
			ASSERT_TRUE(strcmp(s[i].field, s[j].field) != 0);
		launch |= strcmp(s[i].symbol, "hipModuleLaunchKernel") == 0 && s[i].required;
		r0600 |= strcmp(s[i].symbol, "hipGetDevicePropertiesR0600") == 0 && !s[i].required;
	}
	ASSERT_TRUE(launch);
	ASSERT_TRUE(r0600);
	s = kgb_hip_rtc_syms(&n);
	ASSERT_EQ_INT(n * sizeof(void (*)(void)), sizeof(kgb_hiprtc_api_t));
	/* the backend is registered under its name */
	ASSERT_TRUE(kgb_backend_find("hip") == &kgb_backend_hip);
	ASSERT_TRUE(kgb_backend_hip.langs & (1u << KGB_LANG_HIP));
	ASSERT_TRUE(kgb_backend_hip.langs & (1u << KGB_LANG_HSACO));
	ASSERT_FALSE(kgb_backend_hip.langs & (1u << KGB_LANG_CUBIN));
}

TEST(backend_hip_missing_library_zero_devices)
{
	setenv("KGB_HIP_LIBRARY", "/nonexistent/libamdhip64.so.6", 1);
	kgb_device_info_t d[4];
	char why[1024] = "";
	ASSERT_EQ_INT(kgb_backend_hip.probe(d, 4, why, sizeof why), 0);
	ASSERT_CONTAINS(why, "no HIP runtime");
	ASSERT_CONTAINS(why, "/nonexistent/libamdhip64.so.6");
	ASSERT_CONTAINS(why, "libamdhip64.so.5"); /* the defaults were tried too */
	void *ctx = NULL;
	char err[1024] = "";
	ASSERT_TRUE(kgb_backend_hip.open(0, &ctx, err, sizeof err) != 0);
	ASSERT_CONTAINS(err, "no HIP runtime");
	ASSERT_TRUE(ctx == NULL);
}

TEST(backend_hip_library_without_symbols_says_which)
{
	setenv("KGB_HIP_LIBRARY", "libc.so.6", 1);
	kgb_device_info_t d[1];
	char why[1024] = "";
	ASSERT_EQ_INT(kgb_backend_hip.probe(d, 1, why, sizeof why), 0);
	ASSERT_CONTAINS(why, "unusable: symbol hipInit missing");
}

TEST(backend_hip_probe_rocm6_layout)
{
	use_double("libfakehip.so");
	setenv("KGB_FAKE_HIP_DEVICES", "2", 1);
	setenv("KGB_FAKE_HIP_ARCH", "gfx942:sramecc+:xnack-", 1);
	kgb_device_info_t d[4];
	char why[512] = "";
	ASSERT_EQ_INT(kgb_backend_hip.probe(d, 4, why, sizeof why), 2);
	ASSERT_EQ_STR(d[0].backend, "hip");
	ASSERT_EQ_STR(d[0].name, "AMD Instinct MI210 (kgb test double 0)");
	ASSERT_EQ_STR(d[1].name, "AMD Instinct MI210 (kgb test double 1)");
	ASSERT_EQ_STR(d[0].arch, "gfx942");
	ASSERT_EQ_U64(d[0].memory_bytes, (uint64_t)64 << 30);
	ASSERT_EQ_U64(d[0].l2_bytes, 8u << 20);
	ASSERT_EQ_INT(d[0].compute_units, 104);
	ASSERT_EQ_STR(d[0].driver_version, "HIP 6.2.41134");
	ASSERT_EQ_INT(d[1].index, 1);
	/* max bounds the count */
	ASSERT_EQ_INT(kgb_backend_hip.probe(d, 1, why, sizeof why), 1);
}

TEST(backend_hip_probe_rocm5_layout)
{
	use_double("libfakehip5.so");
	kgb_device_info_t d[2];
	char why[512] = "";
	ASSERT_EQ_INT(kgb_backend_hip.probe(d, 2, why, sizeof why), 1);
	ASSERT_EQ_STR(d[0].arch, "gfx90a");
	ASSERT_EQ_U64(d[0].memory_bytes, (uint64_t)32 << 30);
	ASSERT_EQ_U64(d[0].l2_bytes, 4u << 20);
	ASSERT_EQ_INT(d[0].compute_units, 52);
}

TEST(backend_hip_probe_no_devices)
{
	use_double("libfakehip.so");
	setenv("KGB_FAKE_HIP_DEVICES", "0", 1);
	kgb_device_info_t d[2];
	char why[512] = "";
	ASSERT_EQ_INT(kgb_backend_hip.probe(d, 2, why, sizeof why), 0);
	ASSERT_CONTAINS(why, "reports no devices");
	void *ctx = NULL;
	char err[512] = "";
	ASSERT_TRUE(kgb_backend_hip.open(0, &ctx, err, sizeof err) != 0);
	ASSERT_CONTAINS(err, "hip device 0 not found");
}

TEST(backend_hip_arch_base)
{
	char a[64];
	kgb_hip_arch_base("gfx942:sramecc+:xnack-", a, sizeof a);
	ASSERT_EQ_STR(a, "gfx942");
	kgb_hip_arch_base("gfx1100", a, sizeof a);
	ASSERT_EQ_STR(a, "gfx1100");
}

TEST(backend_hip_classify)
{
	ASSERT_EQ_INT(kgb_hip_classify(hipSuccess), KGB_BE_OK);
	ASSERT_EQ_INT(kgb_hip_classify(hipErrorIllegalAddress), KGB_BE_FAULT);
	ASSERT_EQ_INT(kgb_hip_classify(hipErrorLaunchFailure), KGB_BE_FAULT);
	ASSERT_EQ_INT(kgb_hip_classify(hipErrorAssert), KGB_BE_FAULT);
	ASSERT_EQ_INT(kgb_hip_classify(hipErrorLaunchOutOfResources), KGB_BE_RESOURCE);
	ASSERT_EQ_INT(kgb_hip_classify(hipErrorInvalidConfiguration), KGB_BE_RESOURCE);
	ASSERT_EQ_INT(kgb_hip_classify(hipErrorNoBinaryForGpu), KGB_BE_COMPILE);
	ASSERT_EQ_INT(kgb_hip_classify(hipErrorInvalidImage), KGB_BE_COMPILE);
	ASSERT_EQ_INT(kgb_hip_classify(hipErrorOutOfMemory), KGB_BE_NOMEM);
	ASSERT_EQ_INT(kgb_hip_classify(hipErrorNotInitialized), KGB_BE_ERR);
}

TEST(backend_hip_memory_and_views)
{
	void *ctx = open_dev();
	const kgb_backend_t *be = &kgb_backend_hip;
	enum { G = 4096, N = 1000 };
	kgb_dbuf_t *parent, *view;
	tb_view_round_trip(be, ctx, G, N, 0xa5, 7, 3, 10, 5, 0x11, &parent, &view);
	uint8_t back[8];
	/* ranges are checked before the runtime sees them */
	ASSERT_EQ_INT(be->read(ctx, view, N - 4, back, 8), KGB_BE_ERR);
	ASSERT_CONTAINS(lasterr(ctx), "outside a buffer of 1000 bytes");
	kgb_dbuf_t *bad = NULL;
	ASSERT_EQ_INT(be->view(ctx, parent, G, N + 2 * G, &bad), KGB_BE_ERR);
	ASSERT_TRUE(bad == NULL);
	be->free(ctx, view);
	be->free(ctx, parent);
	be->close(ctx);
}

/* Freed buffers are kept for an allocation of the same size (backend_common.h,
 * KGB_BE_POOL_MAX): the double fills fresh memory with 0xcd, so a buffer that still
 * holds what was written before it was freed is a reused one. Beyond the pool's
 * count, a free goes to the runtime; another size never gets a kept buffer. */
TEST(backend_hip_freed_buffers_reused_by_size)
{
	void *ctx = open_dev();
	const kgb_backend_t *be = &kgb_backend_hip;
	enum { B = 4096, M = KGB_BE_POOL_MAX + 1 };
	static kgb_dbuf_t *b[M];
	uint8_t back[B];
	for (int i = 0; i < M; i++) {
		ASSERT_EQ_INT(be->alloc(ctx, B, &b[i]), 0);
		ASSERT_EQ_INT(be->fill(ctx, b[i], 0, (uint8_t)(i + 1), B), 0);
	}
	for (int i = 0; i < M; i++)
		be->free(ctx, b[i]);   /* the last one finds the pool full */
	/* another size: fresh memory */
	kgb_dbuf_t *other = NULL;
	ASSERT_EQ_INT(be->alloc(ctx, 2 * B, &other), 0);
	ASSERT_EQ_INT(be->read(ctx, other, 0, back, B), 0);
	ASSERT_EQ_INT(back[0], 0xcd);
	be->free(ctx, other);
	/* the same size: the KGB_BE_POOL_MAX kept ones, each with its old contents, then fresh */
	bool seen[M] = { false };
	for (int i = 0; i < M; i++) {
		ASSERT_EQ_INT(be->alloc(ctx, B, &b[i]), 0);
		ASSERT_EQ_INT(be->read(ctx, b[i], 0, back, B), 0);
		if (i < KGB_BE_POOL_MAX) {
			int tag = back[0] - 1;
			ASSERT_TRUE(tag >= 0 && tag < KGB_BE_POOL_MAX && !seen[tag]);
			ASSERT_EQ_INT(back[B - 1], tag + 1);
			seen[tag] = true;
		} else {
			ASSERT_EQ_INT(back[0], 0xcd);
		}
	}
	for (int i = 0; i < M; i++)
		be->free(ctx, b[i]);
	be->close(ctx);   /* drains the pool: ASan sees the double's memory freed */
}

static const char add_src[] =
	"extern \"C\" __global__ void add_f32(const float *a, const float *b, float *c, int n)\n"
	"{\n"
	"\tint i = blockIdx.x * BLOCK + threadIdx.x;\n"
	"\tif (i < n) STORE_c(c, i, LOAD_a(a, i) + LOAD_b(b, i));\n"
	"}\n";

TEST(backend_hip_compile_and_run_timed)
{
	void *ctx = open_dev();
	const kgb_backend_t *be = &kgb_backend_hip;
	const char *dn[] = { "BLOCK" }, *dv[] = { "256" };
	const char *tn[] = { "a", "b", "c" };
	kgb_dtype_t td[] = { KGB_DT_F32, KGB_DT_F32, KGB_DT_F32 };
	kgb_compile_req_t req = { .lang = KGB_LANG_HIP, .entry = "add_f32", .source = add_src,
		                      .source_len = sizeof add_src - 1, .name = "add.hip", .define_names = dn,
		                      .define_values = dv, .ndefines = 1, .options = "-ffast-math -O2",
		                      .tensor_names = tn, .tensor_dtypes = td, .ntensors = 3 };
	kgb_module_t *m = NULL;
	char log[4096] = "";
	ASSERT_OK(be->compile(ctx, &req, &m, log, sizeof log), lasterr(ctx));
	/* what reached HIPRTC: the device's full target, the defines, the options */
	ASSERT_CONTAINS(log, "--offload-arch=" FAKE_ARCH);
	ASSERT_CONTAINS(log, "-DBLOCK=256");
	ASSERT_CONTAINS(log, "-ffast-math");

	enum { N = 200000 };
	tb_vadd_t v;
	tb_vadd_init(&v, N);
	for (int i = 0; i < N; i++) {
		v.a[i] = (float)i * 0.5f;
		v.b[i] = 1.0f - (float)i;
	}
	tb_vadd_run(&v, be, ctx, m, 256);
	kgb_launch_t L = v.L;
	double ns = -1;
	/* the same launch twice in one run(), and the cache flush between samples */
	ASSERT_EQ_INT(be->flush_cache(ctx), 0);
	kgb_launch_t two[2] = { L, L };
	ASSERT_OK(be->run(ctx, two, 2, 5000, &ns), lasterr(ctx));
	ASSERT_TRUE(ns > 0);
	/* a second compile of the same source comes from the compile cache */
	kgb_module_t *m2 = NULL;
	ASSERT_OK(be->compile(ctx, &req, &m2, log, sizeof log), lasterr(ctx));
	be->module_free(ctx, m2);
	/* block limits are checked before the launch */
	L.block[0] = 2048;
	ASSERT_EQ_INT(be->run(ctx, &L, 1, 5000, NULL), KGB_BE_RESOURCE);
	L.block[0] = 256;
	L.shared_bytes = 1 << 20;
	ASSERT_EQ_INT(be->run(ctx, &L, 1, 5000, NULL), KGB_BE_RESOURCE);
	ASSERT_CONTAINS(lasterr(ctx), "dynamic shared memory");
	tb_vadd_done(&v, be, ctx, m);
}

TEST(backend_hip_compile_errors)
{
	void *ctx = open_dev();
	const kgb_backend_t *be = &kgb_backend_hip;
	static const char bad[] = "extern \"C\" __global__ void k(float *x)\n{\n#error boom\n}\n";
	kgb_compile_req_t req = { .lang = KGB_LANG_HIP, .entry = "k", .source = bad, .source_len = sizeof bad - 1,
		                      .name = "bad.hip" };
	kgb_module_t *m = NULL;
	char log[4096] = "";
	ASSERT_EQ_INT(be->compile(ctx, &req, &m, log, sizeof log), KGB_BE_COMPILE);
	ASSERT_TRUE(m == NULL);
	ASSERT_CONTAINS(log, "bad.hip:3: error: #error boom");
	ASSERT_CONTAINS(lasterr(ctx), "HIP compile failed");
	/* an option naming a file is refused before HIPRTC runs */
	req.source = add_src;
	req.source_len = sizeof add_src - 1;
	req.options = "-include /etc/passwd";
	ASSERT_EQ_INT(be->compile(ctx, &req, &m, log, sizeof log), KGB_BE_COMPILE);
	ASSERT_CONTAINS(lasterr(ctx), "option '-include' not allowed");
	/* a kernel that is not in the module */
	req.options = NULL;
	static const char dn0[] = "BLOCK";
	const char *dn[] = { dn0 }, *dv[] = { "64" };
	req.define_names = dn;
	req.define_values = dv;
	req.ndefines = 1;
	req.entry = "not_there";
	ASSERT_EQ_INT(be->compile(ctx, &req, &m, log, sizeof log), KGB_BE_COMPILE);
	ASSERT_CONTAINS(lasterr(ctx), "no kernel 'not_there'");
	/* a define that is not an identifier */
	dn[0] = "A B";
	req.entry = "add_f32";
	ASSERT_EQ_INT(be->compile(ctx, &req, &m, log, sizeof log), KGB_BE_COMPILE);
	ASSERT_CONTAINS(lasterr(ctx), "not an identifier");
	/* languages of other backends */
	req.lang = KGB_LANG_OPENCL;
	ASSERT_EQ_INT(be->compile(ctx, &req, &m, log, sizeof log), KGB_BE_UNSUPPORTED);
	be->close(ctx);
}

TEST(backend_hip_code_object)
{
	void *ctx = open_dev();
	const kgb_backend_t *be = &kgb_backend_hip;
	kgb_module_t *m = load_hsaco(ctx, "KGBFAKEHSACO " FAKE_ARCH "\nfill_u32 add_f32", "fill_u32", KGB_BE_OK);
	enum { N = 3000 };
	kgb_dbuf_t *d;
	ASSERT_EQ_INT(be->alloc(ctx, N * 4, &d), 0);
	ASSERT_EQ_INT(be->fill(ctx, d, 0, 0, N * 4), 0);
	kgb_larg_t args[3] = { tb_buf_arg(d), tb_u32_arg(0xdeadbeef), tb_u32_arg(N - 1) };
	kgb_launch_t L = { .mod = m, .grid = { (N + 127) / 128, 1, 1 }, .block = { 128, 1, 1 }, .args = args,
		               .nargs = 3 };
	ASSERT_OK(be->run(ctx, &L, 1, 5000, NULL), lasterr(ctx));
	uint32_t *h = malloc(N * 4);
	ASSERT_EQ_INT(be->read(ctx, d, 0, h, N * 4), 0);
	for (int i = 0; i < N - 1; i++)
		ASSERT_EQ_U64(h[i], 0xdeadbeefu);
	ASSERT_EQ_U64(h[N - 1], 0); /* n bounds the kernel */
	free(h);
	/* built for another chip */
	load_hsaco(ctx, "KGBFAKEHSACO gfx1100\nfill_u32", "fill_u32", KGB_BE_COMPILE);
	ASSERT_CONTAINS(lasterr(ctx), "hipErrorNoBinaryForGpu");
	/* not a code object at all */
	load_hsaco(ctx, "\x7f" "ELFjunk", "fill_u32", KGB_BE_COMPILE);
	ASSERT_CONTAINS(lasterr(ctx), "hipErrorInvalidImage");
	tb_done(be, ctx, d, m);
}

TEST(backend_hip_fault_is_fault)
{
	void *ctx = open_dev();
	const kgb_backend_t *be = &kgb_backend_hip;
	kgb_module_t *m = load_hsaco(ctx, "KGBFAKEHSACO " FAKE_ARCH "\nfault", "fault", KGB_BE_OK);
	kgb_launch_t L = { .mod = m, .grid = { 1, 1, 1 }, .block = { 64, 1, 1 } };
	/* the context is dead from now on */
	tb_expect_fault(be, ctx, &L, "hipErrorIllegalAddress", 64);
	ASSERT_EQ_INT(be->run(ctx, &L, 1, 5000, NULL), KGB_BE_FAULT);
	ASSERT_TRUE(be->health(ctx) != 0);
	tb_done(be, ctx, NULL, m);
}

TEST(backend_hip_out_of_bounds_is_fault)
{
	void *ctx = open_dev();
	const kgb_backend_t *be = &kgb_backend_hip;
	kgb_module_t *m = load_hsaco(ctx, "KGBFAKEHSACO " FAKE_ARCH "\nfill_u32", "fill_u32", KGB_BE_OK);
	/* n = 2048 on a buffer of 1024 elements */
	tb_expect_oob_fault(be, ctx, m, 1024, 1, 2048, 16);
}

TEST(backend_hip_hang_is_timeout)
{
	void *ctx = open_dev();
	const kgb_backend_t *be = &kgb_backend_hip;
	kgb_module_t *m = load_hsaco(ctx, "KGBFAKEHSACO " FAKE_ARCH "\nhang", "hang", KGB_BE_OK);
	kgb_dbuf_t *d;
	ASSERT_EQ_INT(be->alloc(ctx, 64, &d), 0);
	kgb_launch_t L = { .mod = m, .grid = { 1, 1, 1 }, .block = { 1, 1, 1 } };
	double t0 = kgb_now_ms(), ns = 0;
	ASSERT_EQ_INT(be->run(ctx, &L, 1, 300, &ns), KGB_BE_TIMEOUT);
	double el = kgb_now_ms() - t0;
	ASSERT_TRUE(el >= 300 && el < 5000);
	ASSERT_CONTAINS(lasterr(ctx), "did not finish within 300 ms");
	/* nothing waits on the hung stream again (the double exits if anything does) */
	uint8_t x[8];
	ASSERT_EQ_INT(be->read(ctx, d, 0, x, 8), KGB_BE_TIMEOUT);
	ASSERT_EQ_INT(be->run(ctx, &L, 1, 300, NULL), KGB_BE_TIMEOUT);
	tb_done(be, ctx, d, m);
}

TEST(backend_hip_health_and_args)
{
	void *ctx = open_dev();
	const kgb_backend_t *be = &kgb_backend_hip;
	ASSERT_OK(be->health(ctx), lasterr(ctx));
	kgb_module_t *m = load_hsaco(ctx, "KGBFAKEHSACO " FAKE_ARCH "\nfill_u32", "fill_u32", KGB_BE_OK);
	kgb_larg_t args[1] = { { .kind = KGB_LARG_LOCAL, .size = 256 } };
	kgb_launch_t L = { .mod = m, .grid = { 1, 1, 1 }, .block = { 1, 1, 1 }, .args = args, .nargs = 1 };
	ASSERT_EQ_INT(be->run(ctx, &L, 1, 1000, NULL), KGB_BE_ERR);
	ASSERT_CONTAINS(lasterr(ctx), "OpenCL local memory");
	/* an empty grid runs nothing and succeeds */
	L.nargs = 0;
	L.grid[0] = 0;
	double ns = -1;
	ASSERT_OK(be->run(ctx, &L, 1, 1000, &ns), lasterr(ctx));
	ASSERT_TRUE(ns >= 0);
	tb_done(be, ctx, NULL, m);
}

/* ---- the whole executor pipeline on the double ---- */


/* add_f32 of add_src with BLOCK 256, compiled through the double's HIPRTC. */
static kgb_module_t *compile_add(void *ctx)
{
	const char *dn[] = { "BLOCK" }, *dv[] = { "256" };
	const char *tn[] = { "a", "b", "c" };
	kgb_dtype_t td[] = { KGB_DT_F32, KGB_DT_F32, KGB_DT_F32 };
	kgb_compile_req_t req = { .lang = KGB_LANG_HIP, .entry = "add_f32", .source = add_src,
		                      .source_len = sizeof add_src - 1, .name = "add.hip", .define_names = dn,
		                      .define_values = dv, .ndefines = 1, .tensor_names = tn, .tensor_dtypes = td,
		                      .ntensors = 3 };
	kgb_module_t *m = NULL;
	char log[4096] = "";
	ASSERT_OK(kgb_backend_hip.compile(ctx, &req, &m, log, sizeof log), lasterr(ctx));
	return m;
}

/* A batch of timing samples (run_samples): each sample's restore steps run before its
 * launch, every sample gets its own event time, the batch's span covers them all, and
 * a bad batch is refused or reported like a run. */
TEST(backend_hip_run_samples)
{
	void *ctx = open_dev();
	const kgb_backend_t *be = &kgb_backend_hip;
	ASSERT_TRUE(be->run_samples != NULL);
	kgb_module_t *m = compile_add(ctx);
	enum { N = 4096 };
	float *a = malloc(N * 4), *b = malloc(N * 4), *c = malloc(N * 4);
	for (int i = 0; i < N; i++) {
		a[i] = (float)i;
		b[i] = 0.25f;
	}
	kgb_dbuf_t *da, *db, *dc, *pa, *scratch;
	ASSERT_EQ_INT(be->alloc(ctx, N * 4, &da), 0);
	ASSERT_EQ_INT(be->alloc(ctx, N * 4, &db), 0);
	ASSERT_EQ_INT(be->alloc(ctx, N * 4, &dc), 0);
	ASSERT_EQ_INT(be->alloc(ctx, N * 4, &pa), 0);
	ASSERT_EQ_INT(be->alloc(ctx, 256, &scratch), 0);
	/* a holds zeros; its pristine copy holds i: only a restore before the launch makes c = i + 0.25 */
	ASSERT_EQ_INT(be->fill(ctx, da, 0, 0, N * 4), 0);
	ASSERT_EQ_INT(be->write(ctx, pa, 0, a, N * 4), 0);
	ASSERT_EQ_INT(be->write(ctx, db, 0, b, N * 4), 0);
	ASSERT_EQ_INT(be->fill(ctx, dc, 0, 0xff, N * 4), 0);
	kgb_prep_t prep[2] = { { .dst = da, .src = pa, .bytes = N * 4 }, { .dst = scratch, .byte = 7, .bytes = 256 } };
	kgb_larg_t args[4] = { tb_buf_arg(da), tb_buf_arg(db), tb_buf_arg(dc), tb_u32_arg(N) };
	kgb_launch_t L = { .mod = m, .grid = { N / 256, 1, 1 }, .block = { 256, 1, 1 }, .args = args, .nargs = 4 };
	double ns[6] = { -1, -1, -1, -1, -1, -1 }, busy = -1;
	ASSERT_OK(be->run_samples(ctx, prep, 2, &L, 1, 5, 5000, ns, &busy, false), lasterr(ctx));
	double sum = 0;
	for (int k = 0; k < 5; k++) {
		ASSERT_TRUE(ns[k] >= 0);
		sum += ns[k];
	}
	ASSERT_TRUE(ns[5] == -1);          /* nothing past the batch */
	ASSERT_TRUE(busy >= sum);
	ASSERT_EQ_INT(be->read(ctx, dc, 0, c, N * 4), 0);
	for (int i = 0; i < N; i++)
		if (c[i] != (float)i + 0.25f)
			FAIL("c[%d] = %g, expected %g", i, c[i], (float)i + 0.25f);
	uint8_t sb[256];
	ASSERT_EQ_INT(be->read(ctx, scratch, 0, sb, sizeof sb), 0);
	for (size_t i = 0; i < sizeof sb; i++)
		ASSERT_EQ_INT(sb[i], 7);

	/* a pool with a stride: sample k copies slot k (the last sample's slot is in c) */
	kgb_dbuf_t *pool;
	ASSERT_EQ_INT(be->alloc(ctx, 3 * N * 4, &pool), 0);
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < N; i++)
			c[i] = (float)(i + 1000 * k);
		ASSERT_EQ_INT(be->write(ctx, pool, (size_t)k * N * 4, c, N * 4), 0);
	}
	kgb_prep_t strided = { .dst = da, .src = pool, .bytes = N * 4, .stride = N * 4 };
	ASSERT_OK(be->run_samples(ctx, &strided, 1, &L, 1, 3, 5000, ns, &busy, false), lasterr(ctx));
	ASSERT_EQ_INT(be->read(ctx, dc, 0, c, N * 4), 0);
	for (int i = 0; i < N; i++)
		if (c[i] != (float)(i + 2000) + 0.25f)
			FAIL("strided: c[%d] = %g, expected %g", i, c[i], (float)(i + 2000) + 0.25f);
	/* a fourth sample would read past the pool */
	ASSERT_EQ_INT(be->run_samples(ctx, &strided, 1, &L, 1, 4, 5000, ns, &busy, false), KGB_BE_ERR);
	ASSERT_CONTAINS(lasterr(ctx), "batch prep 0");
	be->free(ctx, pool);

	/* refused before anything is queued */
	ASSERT_EQ_INT(be->run_samples(ctx, prep, 2, &L, 1, 0, 5000, ns, &busy, false), KGB_BE_ERR);
	ASSERT_EQ_INT(be->run_samples(ctx, prep, 2, &L, 1, KGB_BE_MAX_BATCH + 1, 5000, ns, &busy, false), KGB_BE_ERR);
	kgb_prep_t big = { .dst = scratch, .src = pa, .bytes = N * 4 };
	ASSERT_EQ_INT(be->run_samples(ctx, &big, 1, &L, 1, 2, 5000, ns, &busy, false), KGB_BE_ERR);
	ASSERT_CONTAINS(lasterr(ctx), "batch prep 0");
	/* a launch the device refuses: its error, and the context stays usable */
	L.block[0] = 2048;
	ASSERT_EQ_INT(be->run_samples(ctx, prep, 2, &L, 1, 3, 5000, ns, &busy, false), KGB_BE_RESOURCE);
	L.block[0] = 256;
	ASSERT_OK(be->run_samples(ctx, prep, 2, &L, 1, 2, 5000, ns, &busy, false), lasterr(ctx));

	/* a kernel that hangs in a batch: the batch times out within its limit */
	kgb_module_t *hm = load_hsaco(ctx, "KGBFAKEHSACO " FAKE_ARCH "\nhang", "hang", KGB_BE_OK);
	kgb_launch_t H = { .mod = hm, .grid = { 1, 1, 1 }, .block = { 1, 1, 1 } };
	double t0 = kgb_now_ms();
	ASSERT_EQ_INT(be->run_samples(ctx, prep, 2, &H, 1, 4, 300, ns, &busy, false), KGB_BE_TIMEOUT);
	ASSERT_TRUE(kgb_now_ms() - t0 >= 300);
	ASSERT_EQ_INT(be->run_samples(ctx, prep, 2, &L, 1, 1, 300, ns, &busy, false), KGB_BE_TIMEOUT);
	kgb_dbuf_t *bufs[] = { da, db, dc, pa, scratch };
	for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
		be->free(ctx, bufs[i]);
	be->module_free(ctx, hm);
	tb_done(be, ctx, NULL, m);
	free(a);
	free(b);
	free(c);
}

/* The scrub of shared memory (scrub_local, docs/security.md): compiled on first use,
 * it runs before a sample's first event, after its restore, and never between a
 * sample's events; a batch scrubs every sample when asked to and never when not. The
 * double's stream log gives the order of everything queued. */
TEST(backend_hip_scrub_between_samples)
{
	void *ctx = open_dev();
	const kgb_backend_t *be = &kgb_backend_hip;
	ASSERT_TRUE(be->scrub_local != NULL);
	void *lib = dlopen(getenv("KGB_HIP_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
	ASSERT_TRUE(lib != NULL);
	const char *(*stream_log)(int) = (const char *(*)(int))dlsym(lib, "kgb_fake_hip_stream_log");
	ASSERT_TRUE(stream_log != NULL);
	kgb_module_t *m = compile_add(ctx);
	enum { N = 1024 };
	kgb_dbuf_t *da, *db, *dc, *pa;
	ASSERT_EQ_INT(be->alloc(ctx, N * 4, &da), 0);
	ASSERT_EQ_INT(be->alloc(ctx, N * 4, &db), 0);
	ASSERT_EQ_INT(be->alloc(ctx, N * 4, &dc), 0);
	ASSERT_EQ_INT(be->alloc(ctx, N * 4, &pa), 0);
	ASSERT_EQ_INT(be->fill(ctx, pa, 0, 0, N * 4), 0);
	ASSERT_EQ_INT(be->fill(ctx, db, 0, 0, N * 4), 0);
	kgb_prep_t prep = { .dst = da, .src = pa, .bytes = N * 4 };
	kgb_larg_t args[4] = { tb_buf_arg(da), tb_buf_arg(db), tb_buf_arg(dc), tb_u32_arg(N) };
	kgb_launch_t L = { .mod = m, .grid = { N / 256, 1, 1 }, .block = { 256, 1, 1 }, .args = args, .nargs = 4 };
	double ns[3], busy;

	/* one sample at a time, as the executor drives the first ones: scrub, flush, run */
	stream_log(1);
	ASSERT_OK(be->scrub_local(ctx), lasterr(ctx));
	ASSERT_OK(be->flush_cache(ctx), lasterr(ctx));
	ASSERT_OK(be->run(ctx, &L, 1, 5000, ns), lasterr(ctx));
	ASSERT_EQ_STR(stream_log(1), "launch:kgb_scrub_shared fill event launch:add_f32 event");

	/* a batch: per sample the restore, the scrub, the flush, then the sample's events */
	ASSERT_OK(be->run_samples(ctx, &prep, 1, &L, 1, 3, 5000, ns, &busy, true), lasterr(ctx));
	const char *sample = "copy launch:kgb_scrub_shared fill event launch:add_f32 event";
	char want[512];
	snprintf(want, sizeof want, "event %s %s %s", sample, sample, sample);
	ASSERT_EQ_STR(stream_log(1), want);
	/* not asked: no scrub */
	ASSERT_OK(be->run_samples(ctx, &prep, 1, &L, 1, 2, 5000, ns, &busy, false), lasterr(ctx));
	ASSERT_EQ_STR(stream_log(1), "event copy fill event launch:add_f32 event copy fill event launch:add_f32 event");
	kgb_dbuf_t *bufs[] = { da, db, dc, pa };
	for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
		be->free(ctx, bufs[i]);
	tb_done(be, ctx, NULL, m);
	dlclose(lib);
}

/* A fault inside a batch is a fault: the context is dead. */
TEST(backend_hip_run_samples_fault)
{
	void *ctx = open_dev();
	const kgb_backend_t *be = &kgb_backend_hip;
	kgb_module_t *m = load_hsaco(ctx, "KGBFAKEHSACO " FAKE_ARCH "\nfault", "fault", KGB_BE_OK);
	kgb_dbuf_t *d;
	ASSERT_EQ_INT(be->alloc(ctx, 64, &d), 0);
	kgb_prep_t prep = { .dst = d, .byte = 1, .bytes = 64 };
	kgb_launch_t L = { .mod = m, .grid = { 1, 1, 1 }, .block = { 64, 1, 1 } };
	double ns[3], busy;
	ASSERT_EQ_INT(be->run_samples(ctx, &prep, 1, &L, 1, 3, 5000, ns, &busy, false), KGB_BE_FAULT);
	ASSERT_CONTAINS(lasterr(ctx), "hipErrorIllegalAddress");
	ASSERT_EQ_INT(be->run_samples(ctx, &prep, 1, &L, 1, 1, 5000, ns, &busy, false), KGB_BE_FAULT);
	tb_done(be, ctx, d, m);
}

TEST(backend_hip_executor_job_end_to_end)
{
	/* The executor child gets a cleaned environment, but LD_LIBRARY_PATH passes: the
	 * double is found under the runtime's own file names. */
	static const char *const names[] = { "libamdhip64.so.6", "libhiprtc.so.6" };
	tb_double_as("rocm", "libfakehip.so", names, 2);
	setenv("KGB_CACHE_DIR", kgb_test_tmpdir(), 1);
	unsetenv("KGB_HIP_LIBRARY");

	Kgb__JobAssign *a = tb_add_job(
		"{\"kernels\": [{\"entry\": \"add_f32\", \"lang\": \"hip\", \"source\": \"add.hip\", "
		"\"defines\": {\"BLOCK\": \"256\"}, \"grid\": [\"cdiv(out.numel, 256)\"], \"block\": [\"256\"], "
		"\"args\": [{\"tensor\": \"self\"}, {\"tensor\": \"other\"}, {\"tensor\": \"out\"}, "
		"{\"scalar\": \"out.numel\"}]}]}",
		"add.hip", add_src);
	bool needs_health = false;
	/* timed with the HIP events of the double; alpha = 0.5 caught by validation */
	Kgb__JobResult *r = tb_run_add_job("hip", a, &needs_health);
	/* past the validated samples they run in batches: the batches' span (restores,
	 * flushes, kernels) exceeds the kernels' own time */
	ASSERT_TRUE(r->device_ms > 0);
	if (!(r->occupied_ms > r->device_ms))
		FAIL("occupied %.3f ms, kernels %.3f ms: no batch ran\n%s", r->occupied_ms, r->device_ms, r->log);
	ASSERT_FALSE(needs_health);
	kgb__job_result__free_unpacked(r, NULL);
	kgb__job_assign__free_unpacked(a, NULL);
}

TEST(backend_hip_rtc_from_runtime_library)
{
	/* ROCm 5 kept HIPRTC inside libamdhip64: with no libhiprtc to load, the symbols
	 * are taken from the runtime library itself */
	use_double("libfakehip5.so");
	setenv("KGB_HIPRTC_LIBRARY", "/nonexistent/libhiprtc.so", 1);
	void *ctx = NULL;
	char err[512] = "";
	ASSERT_OK(kgb_backend_hip.open(0, &ctx, err, sizeof err), err);
	ASSERT_OK(kgb_backend_hip.health(ctx), lasterr(ctx));
	char why[512] = "";
	ASSERT_TRUE(kgb_hip_rtc(why, sizeof why) != NULL);
	kgb_backend_hip.close(ctx);
}
