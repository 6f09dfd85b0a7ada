/* The vendor BLAS libraries behind native cuBLAS candidates (docs/native.md): cuBLAS
 * for the CUDA backend, hipBLAS for the HIP backend, both loaded with dlopen (never
 * linked), one handle per executor bound to the backend's stream.
 *
 * hipBLAS mirrors cuBLAS's entry points with a "hipblas" prefix and its own enum
 * values; this module knows both spellings, so the operator mapping above it
 * (worker/native_blas.c) is written once, against cuBLAS's names and kgb's mode
 * values, and translated here.
 *
 * Ownership: kgb_blas_open returns a heap kgb_blas_t that owns the library handle and
 * the dlopen handle; kgb_blas_close(&b) frees both and sets b to NULL. */
#ifndef KGB_BLAS_H
#define KGB_BLAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The vendor's values of the BLAS modes, indexed by kgb's (cuBLAS's) mode values:
 * op[N=0, T=1, C=2], fill[lower=0, upper=1], diag[non-unit=0, unit=1],
 * side[left=0, right=1]; data types of the Ex routines. */
typedef struct kgb_blas_enums {
	int op[3];
	int fill[2];
	int diag[2];
	int side[2];
	int ptr_host, ptr_device;
	int r32f, r16f, r16bf, r8i, c32f;   /* cudaDataType / hipDataType */
	int compute32f;                     /* hipblasComputeType_t (hipblasGemmEx only) */
	int gemm_default;                   /* hipblasGemmAlgo_t (hipblasGemmEx only) */
} kgb_blas_enums_t;

typedef struct kgb_blas {
	const char *flavor;          /* "cublas" or "hipblas" */
	void *lib;                   /* dlopen handle */
	void *handle;                /* cublasHandle_t / hipblasHandle_t */
	char path[256];              /* the library name that loaded */
	char version[128];           /* "cublas 13.0.2" or "hipblas (libhipblas.so.2)" */
	const kgb_blas_enums_t *en;
	int (*destroy)(void *h);
	int (*set_pointer_mode)(void *h, int mode);
	const char *(*status_string)(int status);   /* may be NULL */
} kgb_blas_t;

/* Load the BLAS library of `flavor` ("cublas": KGB_CUBLAS_LIBRARY, then
 * libcublas.so.13, .12, .11, libcublas.so, then the same versions in
 * /usr/local/cuda/lib64; "hipblas": KGB_HIPBLAS_LIBRARY, then libhipblas.so.3, .2,
 * libhipblas.so, /opt/rocm/lib/libhipblas.so), create a handle and bind it to `stream` (the
 * backend's stream; its device context must be current). Returns 0 and *out, or
 * -1 with err naming what was tried and why it failed; *unsupported is set when the
 * library is absent (as opposed to present but failing). */
int kgb_blas_open(const char *flavor, void *stream, kgb_blas_t **out, bool *unsupported, char *err,
                  size_t errlen);

/* Load the library only (no handle: no device needed), as kgb_blas_open does. Returns
 * 0 and *out (close with kgb_blas_close), or -1 as kgb_blas_open. */
int kgb_blas_load(const char *flavor, kgb_blas_t **out, bool *unsupported, char *err, size_t errlen);

/* Destroy the handle (unless skip_handle: a dead context may hang on it) and unload.
 * Sets *b to NULL. */
void kgb_blas_close(kgb_blas_t **b, bool skip_handle);

/* The vendor's name of cuBLAS routine `cublas_name` ("cublasSgemmBatched_64" ->
 * "hipblasSgemmBatched_64", "cublasCcopy_v2" -> "hipblasCcopy"), written to out. */
void kgb_blas_vendor_name(const kgb_blas_t *b, const char *cublas_name, char *out, size_t outlen);

/* The routine's entry point, or NULL when the library lacks it (out gets the name
 * looked for). */
void *kgb_blas_sym(const kgb_blas_t *b, const char *vendor_name);

/* "CUBLAS_STATUS_INVALID_VALUE (7)"-like text of a status (static or thread-local). */
const char *kgb_blas_status(const kgb_blas_t *b, int status);

#endif
