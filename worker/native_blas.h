/* Native cuBLAS candidates (docs/native.md): the routine an operator of the cuBLAS
 * dataset names, called with the case's exact arguments on kgb's own device buffers,
 * through cuBLAS (CUDA backend) or hipBLAS (HIP backend; worker/backends/blas.h).
 *
 * The executor treats such a candidate as a plan of one launch whose launch is the
 * library call (kgb_launch_t.call): staging, poison, guard bands, validation and the
 * timer are the ones every plan gets, and only the call is inside the timed region.
 * Pointer arrays of the batched routines are built on the device from the case's
 * offset tensors before any run.
 *
 * Lifetimes: one kgb_nblas_t per executor job (kgb_nblas_open .. kgb_nblas_close),
 * one kgb_nblas_case_t per case (kgb_nblas_case_new .. kgb_nblas_case_destroy, which
 * frees its device pointer arrays; before the job's kgb_nblas_close). */
#ifndef KGB_NATIVE_BLAS_H
#define KGB_NATIVE_BLAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "catalog.h"

typedef struct kgb_nblas kgb_nblas_t;
typedef struct kgb_nblas_case kgb_nblas_case_t;

/* Whether op is one of the cuBLAS-dataset operators this layer runs natively. */
bool kgb_nblas_has_op(const kgb_op_t *op);

/* The number of operators in the table, and the name of the i-th (tests, docs). */
size_t kgb_nblas_nops(void);
const char *kgb_nblas_op_name(size_t i);

/* Load the `flavor` library ("cublas", "hipblas") without a device and look up the
 * routine of every operator of the table. Returns the number missing (their names,
 * space-separated, in missing), or -1 with why in missing when it does not load. */
int kgb_nblas_missing(const char *flavor, char *missing, size_t len);

/* Load be's BLAS library and bind a handle to the stream of the open device ctx.
 * Returns 0 and *out, or a negative KGB_BE_* code with err: KGB_BE_UNSUPPORTED when
 * the backend has no BLAS library or it is absent (err names what was looked for). */
int kgb_nblas_open(const kgb_backend_t *be, void *ctx, kgb_nblas_t **out, char *err, size_t errlen);

/* Free the handle (skip_device: the context is dead, only host memory is freed). */
void kgb_nblas_close(kgb_nblas_t **nb, bool skip_device);

/* "cublas 13.0.2" / "hipblas (libhipblas.so.2)": the library the results came from. */
const char *kgb_nblas_version(const kgb_nblas_t *nb);

/* Map case c (of an operator kgb_nblas_has_op accepts) to its routine and arguments.
 * Returns 0 and *out, or a KGB_BE_* code with err (KGB_BE_UNSUPPORTED: the library
 * lacks the routine; err names it). c must outlive *out. */
int kgb_nblas_case_new(kgb_nblas_t *nb, const kgb_case_t *c, kgb_nblas_case_t **out, char *err, size_t errlen);

/* Bind the case's device buffers: views[i] holds tensor i, packed[s][i] tensor i of
 * input set s (0 = A, 1 = B) as uploaded (the offset tensors are read from it), and
 * *set, read at every call, says which set is in the buffers. Allocates and fills
 * the device pointer arrays of batched routines and sets the pointer mode. Returns 0
 * or a KGB_BE_* code with err. */
int kgb_nblas_case_bind(kgb_nblas_case_t *nc, kgb_dbuf_t *const *views, uint8_t *const *packed_a,
                        uint8_t *const *packed_b, const int *set, char *err, size_t errlen);

/* kgb_launch_t.call: call the routine once on the backend's stream (arg is the
 * kgb_nblas_case_t). Returns 0 or KGB_BE_ERR with the routine's name and status. */
int kgb_nblas_call(void *arg, char *err, size_t errlen);

/* The vendor's name of the case's routine ("cublasSgemmBatched_64"). */
const char *kgb_nblas_case_routine(const kgb_nblas_case_t *nc);

void kgb_nblas_case_destroy(kgb_nblas_case_t **nc);

#endif
