/* Loading cuBLAS / hipBLAS with dlopen; see blas.h. The enum values are those of the
 * published headers (cublas_api.h, library_types.h; hipblas-common.h, hipblas.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_common.h"
#include "blas.h"
#include "util.h"

static const kgb_blas_enums_t cublas_enums = {
	.op = { 0, 1, 2 },             /* CUBLAS_OP_N, _T, _C */
	.fill = { 0, 1 },              /* CUBLAS_FILL_MODE_LOWER, _UPPER */
	.diag = { 0, 1 },              /* CUBLAS_DIAG_NON_UNIT, _UNIT */
	.side = { 0, 1 },              /* CUBLAS_SIDE_LEFT, _RIGHT */
	.ptr_host = 0,
	.ptr_device = 1,
	.r32f = 0, .r16f = 2, .r16bf = 14, .r8i = 3, .c32f = 4,
	.compute32f = 68,              /* CUBLAS_COMPUTE_32F (unused: SgemmEx has no compute type) */
	.gemm_default = -1,            /* CUBLAS_GEMM_DEFAULT (unused) */
};

static const kgb_blas_enums_t hipblas_enums = {
	.op = { 111, 112, 113 },       /* HIPBLAS_OP_N, _T, _C */
	.fill = { 122, 121 },          /* HIPBLAS_FILL_MODE_LOWER = 122, _UPPER = 121 */
	.diag = { 131, 132 },          /* HIPBLAS_DIAG_NON_UNIT, _UNIT */
	.side = { 141, 142 },          /* HIPBLAS_SIDE_LEFT, _RIGHT */
	.ptr_host = 0,
	.ptr_device = 1,
	/* hipDataType, as hipblasGemmEx_v2 (hipBLAS 2) and hipblasGemmEx (hipBLAS 3) take it */
	.r32f = 0, .r16f = 2, .r16bf = 14, .r8i = 3, .c32f = 4,
	.compute32f = 2,               /* HIPBLAS_COMPUTE_32F */
	.gemm_default = 160,           /* HIPBLAS_GEMM_DEFAULT */
};

typedef struct flavor {
	const char *name, *env, *prefix;
	const char *libs[8];
	const char *create, *destroy, *set_stream, *set_pointer_mode, *status_string;
	const kgb_blas_enums_t *en;
} flavor_t;

static const flavor_t flavors[] = {
	{ "cublas", "KGB_CUBLAS_LIBRARY", "cublas",
	  /* the toolkit's lib64 last: it is often not on the loader's path */
	  { "libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so",
	    "/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.12",
	    "/usr/local/cuda/lib64/libcublas.so.11", NULL },
	  "cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2", "cublasSetPointerMode_v2",
	  "cublasGetStatusString", &cublas_enums },
	{ "hipblas", "KGB_HIPBLAS_LIBRARY", "hipblas",
	  { "libhipblas.so.3", "libhipblas.so.2", "libhipblas.so", "/opt/rocm/lib/libhipblas.so", NULL },
	  "hipblasCreate", "hipblasDestroy", "hipblasSetStream", "hipblasSetPointerMode",
	  "hipblasStatusToString", &hipblas_enums },
};

static const flavor_t *find_flavor(const char *name)
{
	for (size_t i = 0; i < KGB_ARRAY_LEN(flavors); i++)
		if (name && strcmp(flavors[i].name, name) == 0)
			return &flavors[i];
	return NULL;
}

/* One dlsym into a function pointer of any type (POSIX guarantees the conversion). */
static void *sym(void *lib, const char *name)
{
	return name ? dlsym(lib, name) : NULL;
}

/* The loaded library's handle functions, before any handle exists. */
typedef struct loaded {
	int (*create)(void **);
	int (*set_stream)(void *, void *);
} loaded_t;

static int load(const flavor_t *f, kgb_blas_t **out, loaded_t *ld, bool *unsupported, char *err, size_t errlen)
{
	char tried[512] = "", first[300] = "";
	void *lib = NULL;
	const char *used = NULL;
	*out = NULL;
	*unsupported = true;
	lib = kgb_be_dlopen_first(getenv(f->env), f->libs, KGB_ARRAY_LEN(f->libs), &used, tried, sizeof tried, first,
	                          sizeof first);
	if (!lib)
		return kgb_err(err, errlen, "no %s library: tried %.400s (%.300s)", f->name, tried, first);

	ld->create = (int (*)(void **))sym(lib, f->create);
	ld->set_stream = (int (*)(void *, void *))sym(lib, f->set_stream);
	int (*destroy)(void *) = (int (*)(void *))sym(lib, f->destroy);
	int (*set_pm)(void *, int) = (int (*)(void *, int))sym(lib, f->set_pointer_mode);
	if (!ld->create || !destroy || !ld->set_stream || !set_pm) {
		kgb_err(err, errlen, "%s (%s) lacks %s", f->name, used,
		        !ld->create ? f->create : !destroy ? f->destroy : !ld->set_stream ? f->set_stream
		                                                                 : f->set_pointer_mode);
		/* a vendor library stays mapped (see kgb_blas_close) */
		*unsupported = false;
		return -1;
	}
	kgb_blas_t *b = kgb_xcalloc(1, sizeof *b);
	b->flavor = f->name;
	b->lib = lib;
	b->en = f->en;
	b->destroy = destroy;
	b->set_pointer_mode = set_pm;
	b->status_string = (const char *(*)(int))sym(lib, f->status_string);
	snprintf(b->path, sizeof b->path, "%s", used);
	/* the version the results are recorded with */
	int (*prop)(int, int *) = (int (*)(int, int *))sym(lib, "cublasGetProperty");
	int v[3] = { 0, 0, 0 };
	if (strcmp(f->name, "cublas") == 0 && prop && prop(0, &v[0]) == 0 && prop(1, &v[1]) == 0 &&
	    prop(2, &v[2]) == 0)
		snprintf(b->version, sizeof b->version, "cublas %d.%d.%d", v[0], v[1], v[2]);
	else
		snprintf(b->version, sizeof b->version, "%s (%.100s)", f->name, used);
	*unsupported = false;
	*out = b;
	return 0;
}

int kgb_blas_load(const char *flavor, kgb_blas_t **out, bool *unsupported, char *err, size_t errlen)
{
	const flavor_t *f = find_flavor(flavor);
	loaded_t ld;
	*out = NULL;
	*unsupported = true;
	if (!f)
		return kgb_err(err, errlen, "no BLAS library is known for this backend (flavor '%s')",
		               flavor ? flavor : "none");
	return load(f, out, &ld, unsupported, err, errlen);
}

int kgb_blas_open(const char *flavor, void *stream, kgb_blas_t **out, bool *unsupported, char *err,
                  size_t errlen)
{
	const flavor_t *f = find_flavor(flavor);
	loaded_t ld;
	kgb_blas_t *b = NULL;
	*out = NULL;
	*unsupported = true;
	if (!f)
		return kgb_err(err, errlen, "no BLAS library is known for this backend (flavor '%s')",
		               flavor ? flavor : "none");
	if (load(f, &b, &ld, unsupported, err, errlen) != 0)
		return -1;
	int st = ld.create(&b->handle);
	if (st == 0)
		st = ld.set_stream(b->handle, stream);
	if (st != 0) {
		kgb_err(err, errlen, "%s (%s): %s: %s", f->name, b->path, b->handle ? f->set_stream : f->create,
		        kgb_blas_status(b, st));
		kgb_blas_close(&b, false);
		return -1;
	}
	*out = b;
	return 0;
}

void kgb_blas_close(kgb_blas_t **pb, bool skip_handle)
{
	kgb_blas_t *b = pb ? *pb : NULL;
	if (!b)
		return;
	if (b->handle && !skip_handle)
		b->destroy(b->handle);
	/* a vendor library may keep threads or exit handlers: it stays mapped (dlclose
	 * of a GPU runtime library is a known source of crashes at exit) */
	free(b);
	*pb = NULL;
}

void kgb_blas_vendor_name(const kgb_blas_t *b, const char *cublas_name, char *out, size_t outlen)
{
	if (strcmp(b->flavor, "cublas") == 0 || strncmp(cublas_name, "cublas", 6) != 0) {
		snprintf(out, outlen, "%s", cublas_name);
		return;
	}
	/* hipBLAS: the prefix, and no _v2 (hipBLAS's own _v2 names are another variant) */
	const char *rest = cublas_name + 6;
	size_t n = strlen(rest);
	const char *v2 = strstr(rest, "_v2");
	if (v2 && (v2[3] == 0 || v2[3] == '_'))
		snprintf(out, outlen, "hipblas%.*s%s", (int)(v2 - rest), rest, v2 + 3);
	else
		snprintf(out, outlen, "hipblas%.*s", (int)n, rest);
}

void *kgb_blas_sym(const kgb_blas_t *b, const char *vendor_name)
{
	return dlsym(b->lib, vendor_name);
}

const char *kgb_blas_status(const kgb_blas_t *b, int status)
{
	static __thread char buf[160];
	const char *s = b && b->status_string ? b->status_string(status) : NULL;
	snprintf(buf, sizeof buf, "%s (status %d)", s ? s : "BLAS error", status);
	return buf;
}
