/* The CUDA backend's parts that run without a GPU: the symbol tables and their
 * loader, error classification, the Triton ABI parser, the CUDA C prelude, and NVRTC
 * (which compiles without a device when the toolkit is installed). */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "backend.h"
#include "backends/cuda_api.h"

TEST(cuda_symbols_complete_and_unique)
{
	size_t n;
	const kgb_cuda_sym_t *s = kgb_cuda_driver_syms(&n);
	ASSERT_EQ_INT(n * sizeof(void (*)(void)), sizeof(kgb_cuda_api_t));
	bool launch_ex = false, memalloc_v2 = false;
	for (size_t i = 0; i < n; i++) {
		ASSERT_TRUE(s[i].symbol && s[i].symbol[0]);
		ASSERT_EQ_INT(s[i].offset, i * sizeof(void (*)(void)));
		for (size_t j = 0; j < i; j++)
			ASSERT_TRUE(strcmp(s[i].field, s[j].field) != 0);
		/* the symbol names the field or a versioned variant of it */
		ASSERT_EQ_INT(strncmp(s[i].symbol, s[i].field, strlen(s[i].field)), 0);
		launch_ex |= strcmp(s[i].symbol, "cuLaunchKernelEx") == 0;
		memalloc_v2 |= strcmp(s[i].symbol, "cuMemAlloc_v2") == 0 && strcmp(s[i].fallback, "cuMemAlloc") == 0;
	}
	ASSERT_TRUE(launch_ex);
	ASSERT_TRUE(memalloc_v2);
	s = kgb_cuda_nvrtc_syms(&n);
	ASSERT_EQ_INT(n * sizeof(void (*)(void)), sizeof(kgb_nvrtc_api_t));
	s = kgb_cuda_nvml_syms(&n);
	ASSERT_EQ_INT(n * sizeof(void (*)(void)), sizeof(kgb_nvml_api_t));
	ASSERT_EQ_INT(sizeof(CUlaunchAttribute), 72);
}

TEST(cuda_resolve_names_missing_symbol)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW);
	ASSERT_TRUE(libc != NULL);
	struct { void *a, *b; } api = { 0 };
	kgb_cuda_sym_t syms[2] = { { "a", "nope_strlen", "strlen", 0 }, { "b", "kgb_no_such_fn", "", sizeof(void *) } };
	char err[256];
	ASSERT_OK(kgb_cuda_resolve(libc, syms, 1, &api, err, sizeof err), err);
	ASSERT_TRUE(api.a == dlsym(libc, "strlen")); /* the fallback was used */
	ASSERT_EQ_INT(kgb_cuda_resolve(libc, syms, 2, &api, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "kgb_no_such_fn");
	dlclose(libc);
}

TEST(cuda_probe_without_driver_says_why)
{
	setenv("KGB_CUDA_DRIVER_LIB", "/nonexistent/libcuda.so.1", 1);
	kgb_device_info_t devs[4];
	char why[512] = "";
	int n = kgb_backend_cuda.probe(devs, 4, why, sizeof why);
	ASSERT_EQ_INT(n, 0);
	ASSERT_CONTAINS(why, "no CUDA driver (");
	ASSERT_CONTAINS(why, "/nonexistent/libcuda.so.1");
	void *ctx = NULL;
	char err[512];
	ASSERT_TRUE(kgb_backend_cuda.open(0, &ctx, err, sizeof err) != 0);
	ASSERT_CONTAINS(err, "no CUDA driver");
	ASSERT_TRUE(ctx == NULL);
}

TEST(cuda_classify_errors)
{
	ASSERT_EQ_INT(kgb_cuda_classify(CUDA_SUCCESS), KGB_BE_OK);
	ASSERT_EQ_INT(kgb_cuda_classify(CUDA_ERROR_ILLEGAL_ADDRESS), KGB_BE_FAULT);
	ASSERT_EQ_INT(kgb_cuda_classify(CUDA_ERROR_LAUNCH_FAILED), KGB_BE_FAULT);
	ASSERT_EQ_INT(kgb_cuda_classify(CUDA_ERROR_ILLEGAL_INSTRUCTION), KGB_BE_FAULT);
	ASSERT_EQ_INT(kgb_cuda_classify(CUDA_ERROR_HARDWARE_STACK_ERROR), KGB_BE_FAULT);
	ASSERT_EQ_INT(kgb_cuda_classify(CUDA_ERROR_MISALIGNED_ADDRESS), KGB_BE_FAULT);
	ASSERT_EQ_INT(kgb_cuda_classify(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), KGB_BE_RESOURCE);
	ASSERT_EQ_INT(kgb_cuda_classify(CUDA_ERROR_INVALID_VALUE), KGB_BE_RESOURCE);
	ASSERT_EQ_INT(kgb_cuda_classify(CUDA_ERROR_INVALID_PTX), KGB_BE_COMPILE);
	ASSERT_EQ_INT(kgb_cuda_classify(CUDA_ERROR_OUT_OF_MEMORY), KGB_BE_NOMEM);
	ASSERT_EQ_INT(kgb_cuda_classify(CUDA_ERROR_NOT_INITIALIZED), KGB_BE_ERR);
}

static const char abi_ok[] =
	"{\"abi\": 1, \"kernel_name\": \"add_kernel\", \"args\": ["
	"{\"name\": \"x_ptr\", \"type\": \"*fp32\"}, {\"name\": \"y_ptr\", \"type\": \"*fp16\"},"
	"{\"name\": \"n\", \"type\": \"i32\"}, {\"name\": \"eps\", \"type\": \"fp32\"}],"
	"\"num_warps\": 8, \"num_ctas\": 1, \"shared\": 65536, \"cluster_dims\": [1, 1, 1],"
	"\"global_scratch_size\": 128, \"global_scratch_align\": 16,"
	"\"profile_scratch_size\": 0, \"profile_scratch_align\": 1, \"cooperative\": false,"
	"\"triton_version\": \"3.6.0\"}";

TEST(cuda_abi_parse_ok)
{
	kgb_cuda_abi_t a;
	char err[256];
	ASSERT_OK(kgb_cuda_abi_parse(abi_ok, strlen(abi_ok), "t.json", &a, err, sizeof err), err);
	ASSERT_EQ_STR(a.kernel_name, "add_kernel");
	ASSERT_EQ_INT(a.nargs, 4);
	ASSERT_EQ_STR(a.args[1].type, "*fp16");
	ASSERT_EQ_STR(a.args[3].name, "eps");
	ASSERT_EQ_INT(a.num_warps, 8);
	ASSERT_EQ_INT(a.shared, 65536);
	ASSERT_EQ_U64(a.gscratch_size, 128);
	ASSERT_EQ_U64(a.gscratch_align, 16);
	ASSERT_EQ_U64(a.pscratch_size, 0);
	ASSERT_EQ_INT(a.cluster[0] * a.cluster[1] * a.cluster[2], 1);
	ASSERT_EQ_STR(a.triton_version, "3.6.0");
	ASSERT_EQ_INT(kgb_cuda_triton_type_size("*fp32"), 0);
	ASSERT_EQ_INT(kgb_cuda_triton_type_size("i64"), 8);
	ASSERT_EQ_INT(kgb_cuda_triton_type_size("fp16"), 2);
	ASSERT_EQ_INT(kgb_cuda_triton_type_size("f32"), -1);
}

TEST(cuda_abi_parse_errors_name_field)
{
	kgb_cuda_abi_t a;
	char err[256];
	const char *bad_shared = "{\"abi\":1,\"kernel_name\":\"k\",\"args\":[],\"num_warps\":4,\"shared\":\"x\"}";
	ASSERT_EQ_INT(kgb_cuda_abi_parse(bad_shared, strlen(bad_shared), "k.abi.json", &a, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "k.abi.json");
	ASSERT_CONTAINS(err, "'shared'");
	ASSERT_CONTAINS(err, "\"x\"");
	const char *bad_type = "{\"abi\":1,\"kernel_name\":\"k\",\"args\":[{\"name\":\"a\",\"type\":\"float\"}],"
	                       "\"num_warps\":4,\"shared\":0}";
	ASSERT_EQ_INT(kgb_cuda_abi_parse(bad_type, strlen(bad_type), "k.abi.json", &a, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "args[0].type");
	ASSERT_CONTAINS(err, "float");
	const char *no_name = "{\"abi\":1,\"args\":[],\"num_warps\":4,\"shared\":0}";
	ASSERT_EQ_INT(kgb_cuda_abi_parse(no_name, strlen(no_name), "k.abi.json", &a, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "kernel_name");
	const char *warps = "{\"abi\":1,\"kernel_name\":\"k\",\"args\":[],\"num_warps\":0,\"shared\":0}";
	ASSERT_EQ_INT(kgb_cuda_abi_parse(warps, strlen(warps), "k.abi.json", &a, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "num_warps");
	const char *version = "{\"abi\":2,\"kernel_name\":\"k\",\"args\":[],\"num_warps\":4,\"shared\":0}";
	ASSERT_EQ_INT(kgb_cuda_abi_parse(version, strlen(version), "k.abi.json", &a, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "'abi'");
	ASSERT_EQ_INT(kgb_cuda_abi_parse("{", 1, "k.abi.json", &a, err, sizeof err), -1);
	ASSERT_CONTAINS(err, "k.abi.json: line 1");
}

TEST(cuda_prelude_types)
{
	const char *names[] = { "x", "out", "idx" };
	kgb_dtype_t dts[] = { KGB_DT_F16, KGB_DT_F32, KGB_DT_I64 };
	char *p = kgb_cuda_prelude(names, dts, 3, "add.cu");
	ASSERT_CONTAINS(p, "#include <cuda_fp16.h>");
	ASSERT_TRUE(strstr(p, "cuda_bf16.h") == NULL);
	ASSERT_CONTAINS(p, "typedef __half T_x;");
	ASSERT_CONTAINS(p, "typedef float T_out;");
	ASSERT_CONTAINS(p, "KGB_DTYPE_idx_i64 1");
	ASSERT_CONTAINS(p, "#define LOAD_x(p, i) ((float)((p)[(i)]))");
	ASSERT_CONTAINS(p, "#line 1 \"add.cu\"");
	free(p);
}

static const char saxpy_cu[] =
	"extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n"
	"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) y[i] = a * x[i] + y[i];\n"
	"}\n";

TEST(cuda_nvrtc_compiles_to_ptx_without_gpu)
{
	char why[256];
	if (!kgb_cuda_nvrtc(why, sizeof why)) {
		printf("    skipped: %s\n", why);
		return;
	}
	char *out = NULL;
	size_t n = 0;
	char log[4096];
	int rc = kgb_cuda_nvrtc_compile(saxpy_cu, "saxpy.cu", 90, true, NULL, 0, &out, &n, log, sizeof log);
	ASSERT_EQ_INT(rc, KGB_BE_OK);
	ASSERT_TRUE(n > 100);
	ASSERT_CONTAINS(out, ".entry saxpy");
	ASSERT_CONTAINS(out, ".target sm_90");
	free(out);
	/* a cubin for the same chip is an ELF image */
	rc = kgb_cuda_nvrtc_compile(saxpy_cu, "saxpy.cu", 90, false, NULL, 0, &out, &n, log, sizeof log);
	ASSERT_EQ_INT(rc, KGB_BE_OK);
	ASSERT_TRUE(n > 4 && memcmp(out, "\177ELF", 4) == 0);
	free(out);
	/* a source error is a compile error with the compiler's message */
	rc = kgb_cuda_nvrtc_compile("extern \"C\" __global__ void k(float *y) { y[0] = undefined_name; }\n",
	                            "bad.cu", 90, true, NULL, 0, &out, &n, log, sizeof log);
	ASSERT_EQ_INT(rc, KGB_BE_COMPILE);
	ASSERT_TRUE(out == NULL);
	ASSERT_CONTAINS(log, "undefined_name");
	ASSERT_CONTAINS(log, "bad.cu");
}
