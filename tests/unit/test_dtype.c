/* Tests for common/dtype.c: narrow float rounding, integer saturation, names. */
#include <math.h>
#include <string.h>

#include "dtype.h"
#include "test.h"

TEST(dtype_f16_exact_values)
{
	ASSERT_EQ_U64(kgb_f32_to_f16(1.0f), 0x3c00);
	ASSERT_EQ_U64(kgb_f32_to_f16(-2.0f), 0xc000);
	ASSERT_EQ_U64(kgb_f32_to_f16(65504.0f), 0x7bff);
	ASSERT_EQ_U64(kgb_f32_to_f16(0.0f), 0x0000);
	ASSERT_EQ_U64(kgb_f32_to_f16(-0.0f), 0x8000);
	ASSERT_EQ_U64(kgb_f32_to_f16(0x1p-14f), 0x0400);   /* smallest normal */
	ASSERT_EQ_U64(kgb_f32_to_f16(0x1p-24f), 0x0001);   /* smallest subnormal */
	ASSERT_EQ_U64(kgb_f32_to_f16(0x3ffp-24f), 0x03ff); /* largest subnormal */
	ASSERT_NEAR(kgb_f16_to_f32(0x3555), 0.333251953125, 0);
	ASSERT_NEAR(kgb_f16_to_f32(0x0001), 0x1p-24, 0);
	ASSERT_NEAR(kgb_f16_to_f32(0x7bff), 65504.0, 0);
}

TEST(dtype_f16_round_trip_all)
{
	/* every finite half survives half -> float -> half */
	for (uint32_t h = 0; h < 0x10000; h++) {
		uint16_t x = (uint16_t)h;
		float f = kgb_f16_to_f32(x);
		if ((x & 0x7c00) == 0x7c00 && (x & 0x3ff)) {
			ASSERT_TRUE(isnan(f));
			ASSERT_TRUE(isnan(kgb_f16_to_f32(kgb_f32_to_f16(f))));
			continue;
		}
		ASSERT_EQ_U64(kgb_f32_to_f16(f), x);
	}
}

TEST(dtype_f16_ties_to_even)
{
	/* 1 + 2^-11 is half-way between 1 and 1 + 2^-10: goes to the even one (1) */
	ASSERT_EQ_U64(kgb_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
	/* 1 + 3*2^-11 is half-way between 1+2^-10 (odd) and 1+2^-9 (even) */
	ASSERT_EQ_U64(kgb_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
	/* just above the tie rounds up */
	ASSERT_EQ_U64(kgb_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
	/* subnormal tie: 0.5 * 2^-24 goes to 0, 1.5 * 2^-24 goes to 2 * 2^-24 */
	ASSERT_EQ_U64(kgb_f32_to_f16(0x1p-25f), 0x0000);
	ASSERT_EQ_U64(kgb_f32_to_f16(3 * 0x1p-25f), 0x0002);
	/* rounding carries into the exponent: largest subnormal + half quantum -> smallest normal */
	ASSERT_EQ_U64(kgb_f32_to_f16(0x3ffp-24f + 0x1p-25f), 0x0400);
	/* overflow: 65520 is the tie between 65504 and 65536 (= inf) -> inf */
	ASSERT_EQ_U64(kgb_f32_to_f16(65519.0f), 0x7bff);
	ASSERT_EQ_U64(kgb_f32_to_f16(65520.0f), 0x7c00);
	ASSERT_EQ_U64(kgb_f32_to_f16(-1e6f), 0xfc00);
}

TEST(dtype_f16_inf_nan)
{
	ASSERT_EQ_U64(kgb_f32_to_f16(INFINITY), 0x7c00);
	ASSERT_EQ_U64(kgb_f32_to_f16(-INFINITY), 0xfc00);
	uint16_t n = kgb_f32_to_f16(NAN);
	ASSERT_EQ_U64(n & 0x7c00, 0x7c00);
	ASSERT_TRUE(n & 0x3ff);
	ASSERT_TRUE(isinf(kgb_f16_to_f32(0x7c00)) && kgb_f16_to_f32(0x7c00) > 0);
	ASSERT_TRUE(isnan(kgb_f16_to_f32(0x7e00)));
	ASSERT_TRUE(isnan(kgb_f16_to_f32(0xffff)));
}

TEST(dtype_bf16)
{
	ASSERT_EQ_U64(kgb_f32_to_bf16(1.0f), 0x3f80);
	ASSERT_EQ_U64(kgb_f32_to_bf16(-1.0f), 0xbf80);
	/* ties: 1 + 2^-8 is half-way between 1 and 1 + 2^-7 -> 1 (even) */
	ASSERT_EQ_U64(kgb_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
	ASSERT_EQ_U64(kgb_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
	ASSERT_EQ_U64(kgb_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
	/* bf16 subnormal (float subnormal too) */
	ASSERT_EQ_U64(kgb_f32_to_bf16(0x1p-133f), 0x0001);
	ASSERT_NEAR(kgb_bf16_to_f32(0x0001), 0x1p-133, 0);
	ASSERT_EQ_U64(kgb_f32_to_bf16(INFINITY), 0x7f80);
	ASSERT_EQ_U64(kgb_f32_to_bf16(3.4e38f), 0x7f80); /* rounds past the largest bf16 */
	ASSERT_EQ_U64(kgb_f32_to_bf16(NAN) & 0x7fc0, 0x7fc0);
	ASSERT_TRUE(isnan(kgb_bf16_to_f32(0x7fc1)));
	/* round trip every finite bf16 */
	for (uint32_t h = 0; h < 0x10000; h++) {
		if ((h & 0x7f80) == 0x7f80)
			continue;
		ASSERT_EQ_U64(kgb_f32_to_bf16(kgb_bf16_to_f32((uint16_t)h)), h);
	}
	/* agrees with the bit trick for normal values */
	float vals[] = {3.14159f, -2.71828f, 1e-3f, 12345.678f};
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		uint32_t u;
		memcpy(&u, &vals[i], 4);
		uint32_t r = (u + 0x7fff + ((u >> 16) & 1)) >> 16;
		ASSERT_EQ_U64(kgb_f32_to_bf16(vals[i]), r);
	}
}

TEST(dtype_store_integers_saturate)
{
	int8_t i8[1];
	kgb_dtype_store(KGB_DT_I8, i8, 0, 300.7);
	ASSERT_EQ_INT(i8[0], 127);
	kgb_dtype_store(KGB_DT_I8, i8, 0, -300.7);
	ASSERT_EQ_INT(i8[0], -128);
	kgb_dtype_store(KGB_DT_I8, i8, 0, -3.9);
	ASSERT_EQ_INT(i8[0], -3);
	uint8_t u8[1];
	kgb_dtype_store(KGB_DT_U8, u8, 0, -5);
	ASSERT_EQ_INT(u8[0], 0);
	kgb_dtype_store(KGB_DT_U8, u8, 0, 255.9);
	ASSERT_EQ_INT(u8[0], 255);
	int32_t i32[2];
	kgb_dtype_store(KGB_DT_I32, i32, 1, 3e10);
	ASSERT_EQ_INT(i32[1], 2147483647);
	kgb_dtype_store(KGB_DT_I32, i32, 0, NAN);
	ASSERT_EQ_INT(i32[0], 0);
	int64_t i64[1];
	kgb_dtype_store(KGB_DT_I64, i64, 0, 1e30);
	ASSERT_TRUE(i64[0] == INT64_MAX);
	kgb_dtype_store(KGB_DT_I64, i64, 0, -1e30);
	ASSERT_TRUE(i64[0] == INT64_MIN);
	kgb_dtype_store(KGB_DT_I64, i64, 0, -7.5);
	ASSERT_EQ_INT(i64[0], -7);
	uint8_t b[1];
	kgb_dtype_store(KGB_DT_BOOL, b, 0, 0.25);
	ASSERT_EQ_INT(b[0], 1);
	kgb_dtype_store(KGB_DT_BOOL, b, 0, 0.0);
	ASSERT_EQ_INT(b[0], 0);
	ASSERT_NEAR(kgb_dtype_round(KGB_DT_I16, 40000.0), 32767.0, 0);
}

TEST(dtype_round_and_load)
{
	/* rounding a double straight to f16 avoids double rounding through float:
	 * 1 + 2^-11 + 2^-30 is above the tie, but (float) of it is exactly the tie */
	double v = 1.0 + 0x1p-11 + 0x1p-30;
	ASSERT_NEAR(kgb_dtype_round(KGB_DT_F16, v), 1.0 + 0x1p-10, 0);
	ASSERT_NEAR(kgb_dtype_round(KGB_DT_F32, 0.1), (double)0.1f, 0);
	ASSERT_NEAR(kgb_dtype_round(KGB_DT_F64, 0.1), 0.1, 0);
	ASSERT_NEAR(kgb_dtype_round(KGB_DT_BF16, 1.0 + 0x1p-8 + 0x1p-40), 1.0 + 0x1p-7, 0);
	uint16_t h[3] = {0x3c00, 0xc000, 0x0001};
	ASSERT_NEAR(kgb_dtype_load(KGB_DT_F16, h, 1), -2.0, 0);
	ASSERT_NEAR(kgb_dtype_load(KGB_DT_F16, h, 2), 0x1p-24, 0);
	for (int t = 0; t < KGB_DT__COUNT; t++) {
		uint8_t buf[16];
		kgb_dtype_store((kgb_dtype_t)t, buf, 1, 1.0);
		ASSERT_NEAR(kgb_dtype_load((kgb_dtype_t)t, buf, 1), 1.0, 0);
	}
}

TEST(dtype_names)
{
	kgb_dtype_t t;
	for (int i = 0; i < KGB_DT__COUNT; i++) {
		ASSERT_EQ_INT(kgb_dtype_parse(kgb_dtype_name((kgb_dtype_t)i), &t), 0);
		ASSERT_EQ_INT(t, i);
	}
	ASSERT_EQ_INT(kgb_dtype_parse("float16", &t), 0);
	ASSERT_EQ_INT(t, KGB_DT_F16);
	ASSERT_EQ_INT(kgb_dtype_parse("torch.bfloat16", &t), 0);
	ASSERT_EQ_INT(t, KGB_DT_BF16);
	ASSERT_EQ_INT(kgb_dtype_parse("int64", &t), 0);
	ASSERT_EQ_INT(t, KGB_DT_I64);
	ASSERT_EQ_INT(kgb_dtype_parse("float", &t), 0);
	ASSERT_EQ_INT(t, KGB_DT_F32);
	ASSERT_EQ_INT(kgb_dtype_parse("f33", &t), -1);
	ASSERT_EQ_INT(kgb_dtype_parse(NULL, &t), -1);
	ASSERT_EQ_INT(kgb_dtype_size(KGB_DT_BF16), 2);
	ASSERT_EQ_INT(kgb_dtype_size(KGB_DT_I64), 8);
	ASSERT_EQ_STR(kgb_dtype_cl_type(KGB_DT_BF16), "ushort");
	ASSERT_EQ_STR(kgb_dtype_cl_type(KGB_DT_F16), "half");
	ASSERT_EQ_STR(kgb_dtype_cl_type(KGB_DT_BOOL), "uchar");
	ASSERT_EQ_STR(kgb_dtype_cuda_type(KGB_DT_BF16), "__nv_bfloat16");
	ASSERT_EQ_STR(kgb_dtype_cuda_type(KGB_DT_I64), "long long");
	ASSERT_TRUE(kgb_dtype_is_float(KGB_DT_BF16));
	ASSERT_FALSE(kgb_dtype_is_float(KGB_DT_I32));
}

TEST(dtype_f8_round_trip_all)
{
	/* every fp8 code decodes and encodes back to itself; NaNs stay NaN */
	for (unsigned b = 0; b < 256; b++) {
		double e4 = kgb_f8e4m3_to_f64((uint8_t)b), e5 = kgb_f8e5m2_to_f64((uint8_t)b);
		if ((b & 0x7f) == 0x7f)
			ASSERT_TRUE(isnan(e4));
		else
			ASSERT_EQ_U64(kgb_f64_to_f8e4m3(e4), b);
		if ((b & 0x7c) == 0x7c && (b & 3)) {
			ASSERT_TRUE(isnan(e5));
			ASSERT_TRUE(isnan(kgb_f8e5m2_to_f64(kgb_f64_to_f8e5m2(e5))));
		} else if ((b & 0x7f) != 0x7c) { /* +-inf saturate, tested below */
			ASSERT_EQ_U64(kgb_f64_to_f8e5m2(e5), b);
		}
	}
}

TEST(dtype_f8_values_ties_saturation)
{
	kgb_dtype_t t;
	ASSERT_NEAR(kgb_f8e4m3_to_f64(0x7e), 448.0, 0);
	ASSERT_NEAR(kgb_f8e4m3_to_f64(0x01), 0x1p-9, 0);      /* smallest subnormal */
	ASSERT_NEAR(kgb_f8e4m3_to_f64(0x38), 1.0, 0);
	ASSERT_NEAR(kgb_f8e5m2_to_f64(0x7b), 57344.0, 0);
	ASSERT_NEAR(kgb_f8e5m2_to_f64(0x3c), 1.0, 0);
	/* ties to even: 1 + 2^-4 lies between 1 (0x38) and 1.125 (0x39): even is 0x38 */
	ASSERT_EQ_U64(kgb_f64_to_f8e4m3(1.0 + 0x1p-4), 0x38);
	ASSERT_EQ_U64(kgb_f64_to_f8e4m3(1.0 + 3 * 0x1p-4), 0x3a);
	ASSERT_EQ_U64(kgb_f64_to_f8e4m3(1.0 + 0x1p-4 + 0x1p-30), 0x39);
	ASSERT_EQ_U64(kgb_f64_to_f8e4m3(0x1p-10), 0x00);      /* subnormal tie -> 0 */
	ASSERT_EQ_U64(kgb_f64_to_f8e4m3(3 * 0x1p-10), 0x02);
	ASSERT_EQ_U64(kgb_f64_to_f8e4m3(-0.0), 0x80);
	/* satfinite: past the largest finite value, and infinities, give +-max */
	ASSERT_EQ_U64(kgb_f64_to_f8e4m3(470.0), 0x7e);
	ASSERT_EQ_U64(kgb_f64_to_f8e4m3(-1e9), 0xfe);
	ASSERT_EQ_U64(kgb_f64_to_f8e4m3(INFINITY), 0x7e);
	ASSERT_EQ_U64(kgb_f64_to_f8e5m2(61440.0), 0x7b);
	ASSERT_EQ_U64(kgb_f64_to_f8e5m2(-INFINITY), 0xfb);
	ASSERT_EQ_U64(kgb_f64_to_f8e4m3(NAN) & 0x7f, 0x7f);
	/* through the generic store/round and the names */
	ASSERT_NEAR(kgb_dtype_round(KGB_DT_F8E4M3, 0.3), 0.3125, 0);
	ASSERT_NEAR(kgb_dtype_round(KGB_DT_F8E5M2, 0.3), 0.3125, 0);
	ASSERT_NEAR(kgb_dtype_round(KGB_DT_F8E5M2, 0.33), 0.3125, 0);
	ASSERT_EQ_INT(kgb_dtype_parse("float8_e4m3fn", &t), 0);
	ASSERT_EQ_INT(t, KGB_DT_F8E4M3);
	ASSERT_EQ_INT(kgb_dtype_parse("f8e5m2", &t), 0);
	ASSERT_EQ_INT(t, KGB_DT_F8E5M2);
	ASSERT_EQ_U64(kgb_dtype_size(KGB_DT_F8E4M3), 1);
}
