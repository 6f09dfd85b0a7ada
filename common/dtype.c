/* Element types: names, sizes, and exact host conversions.
 *
 * The narrow float formats are converted by one routine parameterised by the
 * mantissa and exponent widths. It works on doubles: scaling by a power of two is
 * exact, and nearbyint() rounds to nearest even in the default rounding mode, so a
 * double is rounded straight to fp16 / bf16 without the double rounding that going
 * through float would introduce. */
#include "dtype.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "util.h"

typedef struct {
	const char *name;
	size_t size;
	const char *cl, *cuda;
	bool is_float;
} dtinfo_t;

static const dtinfo_t dt_info[KGB_DT__COUNT] = {
	[KGB_DT_BOOL] = {"bool", 1, "uchar", "bool", false},
	[KGB_DT_I8] = {"i8", 1, "char", "signed char", false},
	[KGB_DT_U8] = {"u8", 1, "uchar", "unsigned char", false},
	[KGB_DT_I16] = {"i16", 2, "short", "short", false},
	[KGB_DT_I32] = {"i32", 4, "int", "int", false},
	[KGB_DT_I64] = {"i64", 8, "long", "long long", false},
	[KGB_DT_F16] = {"f16", 2, "half", "__half", true},
	[KGB_DT_BF16] = {"bf16", 2, "ushort", "__nv_bfloat16", true},
	[KGB_DT_F32] = {"f32", 4, "float", "float", true},
	[KGB_DT_F64] = {"f64", 8, "double", "double", true},
	/* fp8 travels as raw bytes: kernels see the encoding, not a native type */
	[KGB_DT_F8E4M3] = {"f8e4m3", 1, "uchar", "unsigned char", true},
	[KGB_DT_F8E5M2] = {"f8e5m2", 1, "uchar", "unsigned char", true},
	[KGB_DT_C64] = {"c64", 8, "float2", "float2", false},
	[KGB_DT_C128] = {"c128", 16, "double2", "double2", false},
};

static const struct {
	const char *alias;
	kgb_dtype_t t;
} dt_alias[] = {
	{"float16", KGB_DT_F16},  {"half", KGB_DT_F16},     {"fp16", KGB_DT_F16},
	{"bfloat16", KGB_DT_BF16}, {"float32", KGB_DT_F32}, {"float", KGB_DT_F32},
	{"fp32", KGB_DT_F32},     {"float64", KGB_DT_F64},  {"double", KGB_DT_F64},
	{"fp64", KGB_DT_F64},     {"int8", KGB_DT_I8},      {"uint8", KGB_DT_U8},
	{"int16", KGB_DT_I16},    {"short", KGB_DT_I16},    {"int32", KGB_DT_I32},
	{"int", KGB_DT_I32},      {"int64", KGB_DT_I64},    {"long", KGB_DT_I64},
	{"boolean", KGB_DT_BOOL},
	{"float8_e4m3fn", KGB_DT_F8E4M3}, {"fp8_e4m3", KGB_DT_F8E4M3}, {"f8e4m3fn", KGB_DT_F8E4M3},
	{"float8_e5m2", KGB_DT_F8E5M2},   {"fp8_e5m2", KGB_DT_F8E5M2},
	{"complex64", KGB_DT_C64}, {"cfloat", KGB_DT_C64}, {"complex128", KGB_DT_C128},
	{"cdouble", KGB_DT_C128},
};

static bool valid(kgb_dtype_t t)
{
	return (unsigned)t < KGB_DT__COUNT;
}

/* Bytes per element. */
size_t kgb_dtype_size(kgb_dtype_t t)
{
	KGB_ASSERT_MSG(valid(t), "dtype %d", (int)t);
	return dt_info[t].size;
}

/* See dtype.h. */
const char *kgb_dtype_triton(kgb_dtype_t t)
{
	switch (t) {
	case KGB_DT_BOOL: return "i1";
	case KGB_DT_I8: return "i8";
	case KGB_DT_U8: return "u8";
	case KGB_DT_I16: return "i16";
	case KGB_DT_I32: return "i32";
	case KGB_DT_I64: return "i64";
	case KGB_DT_F16: return "fp16";
	case KGB_DT_BF16: return "bf16";
	case KGB_DT_F32: return "fp32";
	case KGB_DT_F64: return "fp64";
	default: return NULL;
	}
}

/* Short name ("f16"); "?" for an out-of-range value. */
const char *kgb_dtype_name(kgb_dtype_t t)
{
	return valid(t) ? dt_info[t].name : "?";
}

/* Parse a short name or a torch name (with or without "torch."). */
int kgb_dtype_parse(const char *s, kgb_dtype_t *out)
{
	if (!s)
		return -1;
	if (strncmp(s, "torch.", 6) == 0)
		s += 6;
	for (int i = 0; i < KGB_DT__COUNT; i++)
		if (strcmp(s, dt_info[i].name) == 0) {
			*out = (kgb_dtype_t)i;
			return 0;
		}
	for (size_t i = 0; i < KGB_ARRAY_LEN(dt_alias); i++)
		if (strcmp(s, dt_alias[i].alias) == 0) {
			*out = dt_alias[i].t;
			return 0;
		}
	return -1;
}

/* True for f16, bf16, f32, f64 and the fp8 formats. */
bool kgb_dtype_is_float(kgb_dtype_t t)
{
	return valid(t) && dt_info[t].is_float;
}

/* True for c64 and c128. */
bool kgb_dtype_is_complex(kgb_dtype_t t)
{
	return t == KGB_DT_C64 || t == KGB_DT_C128;
}

/* 2 for complex dtypes (real, imaginary), else 1. */
int kgb_dtype_lanes(kgb_dtype_t t)
{
	return kgb_dtype_is_complex(t) ? 2 : 1;
}

/* f32 for c64, f64 for c128, else t. */
kgb_dtype_t kgb_dtype_component(kgb_dtype_t t)
{
	if (t == KGB_DT_C64)
		return KGB_DT_F32;
	if (t == KGB_DT_C128)
		return KGB_DT_F64;
	return t;
}

/* OpenCL C storage type. */
const char *kgb_dtype_cl_type(kgb_dtype_t t)
{
	return valid(t) ? dt_info[t].cl : "?";
}

/* CUDA C storage type. */
const char *kgb_dtype_cuda_type(kgb_dtype_t t)
{
	return valid(t) ? dt_info[t].cuda : "?";
}

/* The encoding of v in binary16 (mbits 10) or bfloat16 (mbits 7) when v is exactly
 * representable there and not a NaN (what generated inputs and read-backs are): its
 * float's bits rearranged, much faster than rounding. Returns false otherwise. */
static bool narrow_exact(double v, int mbits, uint16_t *out)
{
	float f = (float)v;
	if ((double)f != v)
		return false;   /* not a float (NaN included) */
	uint32_t b;
	memcpy(&b, &f, 4);
	uint16_t sign = (uint16_t)((b >> 16) & 0x8000u);
	int e = (int)((b >> 23) & 0xffu);
	uint32_t m = b & 0x7fffffu;
	if (mbits == 7) {   /* bfloat16: the float's top half, when the rest is zero */
		if (b & 0xffffu)
			return false;
		*out = (uint16_t)(b >> 16);
		return true;
	}
	if (e == 0xff) {    /* infinity */
		*out = sign | 0x7c00u;
		return true;
	}
	if (e == 0) {       /* zero (a float subnormal is below every binary16) */
		if (m)
			return false;
		*out = sign;
		return true;
	}
	int ue = e - 127;
	if (ue > 15 || ue < -24)
		return false;
	if (ue >= -14) {    /* normal */
		if (m & 0x1fffu)
			return false;
		*out = (uint16_t)(sign | (uint32_t)(ue + 15) << 10 | m >> 13);
		return true;
	}
	uint32_t full = m | 0x800000u, sh = (uint32_t)(-(ue + 1));   /* subnormal: full * 2^(ue+1) quanta */
	if (full & ((1u << sh) - 1))
		return false;
	*out = (uint16_t)(sign | full >> sh);
	return true;
}

/* Round v to a binary format with mbits stored mantissa bits and ebits exponent bits
 * (IEEE layout, sign in bit mbits+ebits) and return its bit pattern. */
static uint16_t narrow_encode(double v, int mbits, int ebits)
{
	uint16_t fast;
	if ((mbits == 10 && ebits == 5) || (mbits == 7 && ebits == 8)) {
		if (narrow_exact(v, mbits, &fast))
			return fast;
	}
	return kgb__narrow_encode_rounding(v, mbits, ebits);
}

/* See dtype.h. */
uint16_t kgb__narrow_encode_rounding(double v, int mbits, int ebits)
{
	uint16_t sign = signbit(v) ? (uint16_t)(1u << (mbits + ebits)) : 0;
	uint16_t expmask = (uint16_t)(((1u << ebits) - 1) << mbits);
	int bias = (1 << (ebits - 1)) - 1;
	int emin = 1 - bias;
	double a = fabs(v);
	if (isnan(v))
		return (uint16_t)(sign | expmask | (1u << (mbits - 1)));
	if (isinf(v))
		return sign | expmask;
	if (a == 0.0)
		return sign;
	int e;
	frexp(a, &e);
	int E = e - 1; /* a = 1.f * 2^E */
	if (E < emin) {
		/* subnormal range: count quanta of 2^(emin - mbits); rounding up to
		 * 2^mbits quanta lands exactly on the smallest normal's encoding */
		double m = nearbyint(ldexp(a, mbits - emin));
		return (uint16_t)(sign | (uint16_t)m);
	}
	double m = nearbyint(ldexp(a, mbits - E)); /* in [2^mbits, 2^(mbits+1)] */
	if (m >= ldexp(1.0, mbits + 1)) {
		m = ldexp(1.0, mbits);
		E++;
	}
	if (E > bias)
		return sign | expmask;
	uint32_t frac = (uint32_t)m - (1u << mbits);
	return (uint16_t)(sign | (uint32_t)(E + bias) << mbits | frac);
}

static double narrow_decode(uint16_t h, int mbits, int ebits)
{
	if (mbits == 7 && ebits == 8 && (h & 0x7f80u) != 0x7f80u) {   /* bfloat16, not inf or NaN */
		uint32_t b = (uint32_t)h << 16;
		float f;
		memcpy(&f, &b, 4);
		return f;
	}
	int bias = (1 << (ebits - 1)) - 1;
	unsigned efield = (h >> mbits) & ((1u << ebits) - 1);
	unsigned frac = h & ((1u << mbits) - 1);
	double sign = (h >> (mbits + ebits)) & 1 ? -1.0 : 1.0;
	if (efield == (1u << ebits) - 1)
		return frac ? (double)NAN * sign : sign * (double)INFINITY;
	if (efield == 0)
		return sign * ldexp((double)frac, 1 - bias - mbits);
	return sign * ldexp((double)(frac | (1u << mbits)), (int)efield - bias - mbits);
}

/* float -> IEEE binary16, round to nearest even. */
uint16_t kgb_f32_to_f16(float f)
{
	return narrow_encode((double)f, 10, 5);
}

/* IEEE binary16 -> float (exact). */
float kgb_f16_to_f32(uint16_t h)
{
	return (float)narrow_decode(h, 10, 5);
}

/* float -> bfloat16, round to nearest even (NaN stays a quiet NaN). */
uint16_t kgb_f32_to_bf16(float f)
{
	return narrow_encode((double)f, 7, 8);
}

/* bfloat16 -> float (exact). */
float kgb_bf16_to_f32(uint16_t h)
{
	return (float)narrow_decode(h, 7, 8);
}

/* ---- fp8 ----
 * Both formats are encoded by counting quanta: in the binade of a (or the subnormal
 * range) the spacing is a power of two, so scaling by it is exact and nearbyint()
 * rounds to nearest even. Overflow saturates (see dtype.h). */

/* Magnitude bits (sign excluded) of |v| rounded to a format with mbits mantissa bits,
 * exponent bias `bias`, and largest finite magnitude `maxv` whose bits are maxbits. */
static unsigned f8_mag(double a, int mbits, int bias, double maxv, unsigned maxbits)
{
	int e, E, emin = 1 - bias;
	double m;
	if (a == 0.0)
		return 0;
	if (a >= maxv)
		return maxbits;
	frexp(a, &e);
	E = e - 1;
	if (E < emin)
		return (unsigned)nearbyint(ldexp(a, mbits - emin)); /* may reach the smallest normal */
	m = nearbyint(ldexp(a, mbits - E));
	if (m >= ldexp(1.0, mbits + 1)) {
		m = ldexp(1.0, mbits);
		E++;
	}
	if (ldexp(m, E - mbits) > maxv)
		return maxbits; /* rounded past the largest finite value: saturate */
	return (unsigned)(E + bias) << mbits | ((unsigned)m - (1u << mbits));
}

/* v's bits in an fp8 format (f8_mag's parameters; NaN as nanbits, infinities saturated
 * to maxbits), with the sign. */
static uint8_t f8_encode(double v, unsigned nanbits, int mbits, int bias, double maxv, unsigned maxbits)
{
	unsigned s = signbit(v) ? 0x80u : 0u;
	if (isnan(v))
		return (uint8_t)(s | nanbits);
	if (isinf(v))
		return (uint8_t)(s | maxbits);
	return (uint8_t)(s | f8_mag(fabs(v), mbits, bias, maxv, maxbits));
}

/* double -> float8_e4m3fn bits (RNE, satfinite). */
uint8_t kgb_f64_to_f8e4m3(double v)
{
	return f8_encode(v, 0x7f, 3, 7, KGB_F8E4M3_MAX, 0x7e);
}

/* float8_e4m3fn bits -> double (exact; 0x7f and 0xff are NaN). */
double kgb_f8e4m3_to_f64(uint8_t b)
{
	unsigned e = (b >> 3) & 0xf, f = b & 7;
	double sign = b & 0x80 ? -1.0 : 1.0;
	if (e == 0xf && f == 7)
		return sign * (double)NAN;
	if (e == 0)
		return sign * ldexp((double)f, -9);
	return sign * ldexp((double)(f | 8), (int)e - 10);
}

/* double -> float8_e5m2 bits (RNE, satfinite: infinities become +-57344). */
uint8_t kgb_f64_to_f8e5m2(double v)
{
	return f8_encode(v, 0x7e, 2, 15, KGB_F8E5M2_MAX, 0x7b);
}

/* float8_e5m2 bits -> double (exact). */
double kgb_f8e5m2_to_f64(uint8_t b)
{
	return narrow_decode(b, 2, 5);
}

/* Truncate toward zero and saturate to [lo, hi]; NaN becomes 0. */
static double sat(double v, double lo, double hi)
{
	if (isnan(v))
		return 0.0;
	v = trunc(v);
	if (v < lo)
		return lo;
	if (v > hi)
		return hi;
	return v;
}

/* Element i of a buffer of type t as a double. */
/* Element i of type T at base, read and written through memcpy: buffers need not be
 * aligned to T (the reference cache packs tensors of different dtypes back to back). */
#define LD(T) (__extension__({ T x_; memcpy(&x_, (const uint8_t *)base + (size_t)(i) * sizeof(T), sizeof x_); x_; }))
#define ST(T, val) do { T x_ = (val); memcpy((uint8_t *)base + (size_t)(i) * sizeof(T), &x_, sizeof x_); } while (0)

double kgb_dtype_load(kgb_dtype_t t, const void *base, size_t i)
{
	switch (t) {
	case KGB_DT_BOOL: return ((const uint8_t *)base)[i] ? 1.0 : 0.0;
	case KGB_DT_I8: return ((const int8_t *)base)[i];
	case KGB_DT_U8: return ((const uint8_t *)base)[i];
	case KGB_DT_I16: return ((const int16_t *)base)[i];
	case KGB_DT_I32: return LD(int32_t);
	case KGB_DT_I64: return (double)LD(int64_t);
	case KGB_DT_F16: return narrow_decode(((const uint16_t *)base)[i], 10, 5);
	case KGB_DT_BF16: return narrow_decode(((const uint16_t *)base)[i], 7, 8);
	case KGB_DT_F32: return LD(float);
	case KGB_DT_F64: return LD(double);
	case KGB_DT_F8E4M3: return kgb_f8e4m3_to_f64(((const uint8_t *)base)[i]);
	case KGB_DT_F8E5M2: return kgb_f8e5m2_to_f64(((const uint8_t *)base)[i]);
	case KGB_DT_C64: return LD(float);     /* component i */
	case KGB_DT_C128: return LD(double);
	default: break;
	}
	KGB_ASSERT_MSG(0, "dtype %d", (int)t);
}

/* Store v as element i of a buffer of type t (see dtype.h for rounding). */
void kgb_dtype_store(kgb_dtype_t t, void *base, size_t i, double v)
{
	switch (t) {
	case KGB_DT_BOOL: ((uint8_t *)base)[i] = v != 0.0; return;
	case KGB_DT_I8: ((int8_t *)base)[i] = (int8_t)sat(v, INT8_MIN, INT8_MAX); return;
	case KGB_DT_U8: ((uint8_t *)base)[i] = (uint8_t)sat(v, 0, UINT8_MAX); return;
	case KGB_DT_I16: ((int16_t *)base)[i] = (int16_t)sat(v, INT16_MIN, INT16_MAX); return;
	case KGB_DT_I32: ST(int32_t, (int32_t)sat(v, INT32_MIN, INT32_MAX)); return;
	case KGB_DT_I64: {
		int64_t r;
		if (isnan(v))
			r = 0;
		else if (v >= 0x1p63)
			r = INT64_MAX;
		else if (v < -0x1p63)
			r = INT64_MIN;
		else
			r = (int64_t)trunc(v);
		ST(int64_t, r);
		return;
	}
	case KGB_DT_F16: ((uint16_t *)base)[i] = narrow_encode(v, 10, 5); return;
	case KGB_DT_BF16: ((uint16_t *)base)[i] = narrow_encode(v, 7, 8); return;
	case KGB_DT_F32: ST(float, (float)v); return;
	case KGB_DT_F64: ST(double, v); return;
	case KGB_DT_F8E4M3: ((uint8_t *)base)[i] = kgb_f64_to_f8e4m3(v); return;
	case KGB_DT_F8E5M2: ((uint8_t *)base)[i] = kgb_f64_to_f8e5m2(v); return;
	case KGB_DT_C64: ST(float, (float)v); return;   /* component i */
	case KGB_DT_C128: ST(double, v); return;
	default: break;
	}
	KGB_ASSERT_MSG(0, "dtype %d", (int)t);
}

/* What storing v as t then loading it gives. */
double kgb_dtype_round(kgb_dtype_t t, double v)
{
	uint8_t tmp[16];
	kgb_dtype_store(t, tmp, 0, v);
	return kgb_dtype_load(t, tmp, 0);
}
