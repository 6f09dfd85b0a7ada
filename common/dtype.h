/* Element types and their host conversions. fp16 and bf16 conversions round to
 * nearest even, handle subnormals, infinities and NaN. */
#ifndef KGB_DTYPE_H
#define KGB_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

typedef enum {
	KGB_DT_BOOL = 0,
	KGB_DT_I8,
	KGB_DT_U8,
	KGB_DT_I16,
	KGB_DT_I32,
	KGB_DT_I64,
	KGB_DT_F16,
	KGB_DT_BF16,
	KGB_DT_F32,
	KGB_DT_F64,
	KGB_DT_F8E4M3,    /* float8_e4m3fn: 1-4-3, bias 7, no infinities, NaN = all ones */
	KGB_DT_F8E5M2,    /* float8_e5m2: 1-5-2, bias 15, IEEE-style infinities and NaN */
	KGB_DT_C64,    /* complex: two f32, real part first (cuComplex, std::complex<float>) */
	KGB_DT_C128,   /* complex: two f64, real part first (cuDoubleComplex) */
	KGB_DT__COUNT
} kgb_dtype_t;

size_t kgb_dtype_size(kgb_dtype_t t);
/* Short names used everywhere (manifests, params, reports): bool i8 u8 i16 i32 i64
 * f16 bf16 f32 f64 f8e4m3 f8e5m2 c64 c128. kgb_dtype_parse also accepts torch names
 * (float16, bfloat16, float32, int64, float8_e4m3fn, float8_e5m2, complex64, ...).
 * Returns 0 or -1. */
const char *kgb_dtype_name(kgb_dtype_t t);
int kgb_dtype_parse(const char *s, kgb_dtype_t *out);
/* Triton's name for a dtype ("fp32" for f32, "i1" for bool), or NULL where Triton has
 * none. */
const char *kgb_dtype_triton(kgb_dtype_t t);
bool kgb_dtype_is_float(kgb_dtype_t t);
/* Complex dtypes (c64, c128). They are not "float" in the sense above (as in torch,
 * is_floating_point is false for them). */
bool kgb_dtype_is_complex(kgb_dtype_t t);
/* Scalar components per element: 2 for complex dtypes, 1 for every other. Host value
 * buffers (kgb_hostbufs_t) hold lanes * storage doubles, the components of an element
 * next to each other (real, imaginary). */
int kgb_dtype_lanes(kgb_dtype_t t);
/* The dtype of one component: f32 for c64, f64 for c128, t itself otherwise. */
kgb_dtype_t kgb_dtype_component(kgb_dtype_t t);
/* OpenCL C storage type name: "float", "half" (storage only), "ushort" (bf16), ... */
const char *kgb_dtype_cl_type(kgb_dtype_t t);
/* CUDA C storage type name: "float", "__half", "__nv_bfloat16", "long long", ... */
const char *kgb_dtype_cuda_type(kgb_dtype_t t);

uint16_t kgb_f32_to_f16(float f);
float kgb_f16_to_f32(uint16_t h);
uint16_t kgb_f32_to_bf16(float f);
float kgb_bf16_to_f32(uint16_t h);

/* fp8 (OCP formats as vLLM uses them on NVIDIA). Encoding rounds to nearest even and
 * saturates like the hardware's satfinite conversion: a finite value beyond the largest
 * finite one (448 for e4m3fn, 57344 for e5m2), and an infinity, becomes that largest
 * value with its sign; NaN stays NaN (0x7f / 0x7e, sign kept). Decoding is exact. */
uint8_t kgb_f64_to_f8e4m3(double v);
double kgb_f8e4m3_to_f64(uint8_t b);
uint8_t kgb_f64_to_f8e5m2(double v);
double kgb_f8e5m2_to_f64(uint8_t b);
#define KGB_F8E4M3_MAX 448.0
#define KGB_F8E5M2_MAX 57344.0

/* Load element i of a buffer of type t as a double. For complex t, i counts
 * components, not elements: component i of the buffer seen as an array of f32 (c64)
 * or f64 (c128), so element e is components 2e (real) and 2e + 1 (imaginary). The
 * same holds for kgb_dtype_store. */
double kgb_dtype_load(kgb_dtype_t t, const void *base, size_t i);
/* Store v (rounded to nearest even; integers truncate toward zero and saturate;
 * bool is v != 0) as element i of a buffer of type t. */
void kgb_dtype_store(kgb_dtype_t t, void *base, size_t i, double v);
/* Round v to the precision of t and back (what storing then loading gives; for
 * complex t, the precision of one component). */
double kgb_dtype_round(kgb_dtype_t t, double v);

/* The rounding encoder behind kgb_f32_to_f16 and kgb_f32_to_bf16 without their fast
 * path for exactly representable values (for the tests that compare the two). */
uint16_t kgb__narrow_encode_rounding(double v, int mbits, int ebits);

#endif
