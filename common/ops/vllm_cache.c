/* vLLM KV-cache operators: writing new tokens into paged caches (reshape_and_cache,
 * reshape_and_cache_flash, concat_and_cache_mla), copying and swapping whole blocks
 * (copy_blocks, copy_blocks_mla, swap_blocks) and gathering sequences back out of a
 * paged cache (cp_gather_cache, gather_and_maybe_dequant_cache,
 * cp_gather_indexer_k_quant_cache). Semantics of vLLM 0.13's csrc/cache_kernels.cu.
 *
 * Caches are INOUT: the kernel writes only the slots or blocks it is told to, and every
 * other element must keep its contents (the validator compares the whole cache). fp8
 * caches ("kv_cache_dtype": "fp8", e4m3fn) are uint8 tensors holding the fp8 bytes;
 * writing stores fp8(x / scale) with scale a one-element f32 tensor, reading returns
 * fp8_value * scale (vllm_common.h). Copies compare exactly.
 *
 * Index inputs (slot mappings, block tables, block mappings) are drawn per seed from
 * permutations, so no two tokens share a slot and no block is both read and written;
 * sequence lengths are fixed per case (they decide the output shapes). */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "aten_common.h"
#include "ops.h"
#include "vllm_common.h"

#define B kgb_vllm_buf
#define TT kgb_vllm_t

static int kv_is_fp8(const kgb_case_t *c)
{
	const char *k = kgb_case_pstr(c, "kv_cache_dtype", "auto");
	return strncmp(k, "fp8", 3) == 0;
}

static int kv_is_e5m2(const kgb_case_t *c)
{
	return strcmp(kgb_case_pstr(c, "kv_cache_dtype", "auto"), "fp8_e5m2") == 0;
}

/* The value a cache of this case stores for x: x itself (auto) or fp8(x / scale). */
static double cache_store(const kgb_case_t *c, double x, double scale)
{
	if (!kv_is_fp8(c))
		return x;
	return (double)kgb_vllm_fp8_encode(kv_is_e5m2(c), (float)x / (float)scale);
}

static kgb_tensor_t *add_scale(kgb_case_t *c, const char *name)
{
	int64_t one = 1;
	kgb_tensor_t *t = kgb_case_add_tensor(c, name, KGB_ROLE_IN, KGB_DT_F32, 1, &one);
	kgb_aten_gen(t, KGB_GEN_UNIFORM, 0.25, 1.0);
	return t;
}

/* The end of every setup here: copies compare exactly; the last grid is the timed case. */
static void cache_case_finish(kgb_case_t *c)
{
	kgb_case_default_tol(c);
	c->rtol = 0;
	c->atol_rel = 0;
	c->timed = c->grid == 2;
}

/* slot_mapping: distinct slots of num_slots; the last token (of several) is padding,
 * slot -1, which the kernels skip. */
static void fill_slots(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b, int64_t num_slots)
{
	const kgb_tensor_t *t = TT(c, "slot_mapping");
	double *v = B(c, b, "slot_mapping");
	int64_t n = t->shape[0], *p = kgb_xmalloc((size_t)num_slots * sizeof *p);
	kgb_vllm_perm(rng, p, num_slots);
	for (int64_t i = 0; i < n; i++)
		v[i] = (double)p[i];
	if (n > 1)
		v[n - 1] = -1;
	free(p);
}

/* ---- reshape_and_cache and reshape_and_cache_flash: key and value [T, H, D] written
 * into two paged caches; the two operators differ only in the caches' layout ---- */

typedef struct kv_dims {
	int64_t T, H, D, BS, NB; /* tokens, heads, head size, block size, blocks */
} kv_dims_t;

static kv_dims_t kv_dims(const kgb_case_t *c)
{
	kv_dims_t d;
	d.T = kgb_case_pint(c, "num_tokens", 42);
	d.H = kgb_case_pint(c, "num_heads", 8);
	d.D = kgb_case_pint(c, "head_size", 64);
	d.BS = kgb_case_pint(c, "block_size", 16);
	d.NB = kgb_case_pint(c, "num_blocks", 64);
	return d;
}

/* key and value, the tensors before the caches */
static void kv_add_inputs(kgb_case_t *c, kgb_dtype_t dt, const kv_dims_t *d)
{
	int64_t sh[3] = { d->T, d->H, d->D };
	kgb_case_add_tensor(c, "key", KGB_ROLE_IN, dt, 3, sh);
	kgb_case_add_tensor(c, "value", KGB_ROLE_IN, dt, 3, sh);
}

/* slot_mapping, the scales and the symbols, after the caches */
static void kv_add_rest(kgb_case_t *c, const kv_dims_t *d)
{
	kgb_tensor_t *sm = kgb_case_add_tensor(c, "slot_mapping", KGB_ROLE_IN, KGB_DT_I64, 1, &d->T);
	kgb_aten_gen(sm, KGB_GEN_INT, 0, 0);
	add_scale(c, "k_scale");
	add_scale(c, "v_scale");
	KGB_SYMS(c, "num_tokens num_heads head_size block_size", d->T, d->H, d->D, d->BS);
}

/* Where element (h, d) of a token stored in slot (blk, off) goes: its offsets in the
 * key cache and in the value cache. */
typedef void (*kv_at_fn)(const kgb_tensor_t *kc, const kgb_tensor_t *vc, int64_t blk, int64_t off, int64_t h,
                         int64_t d, size_t *ko, size_t *vo);

/* The reference of both: every token with a slot written into the caches (at says
 * where), slot -1 skipped, a slot past the caches an error. */
static int kv_write_ref(const kgb_case_t *c, kgb_hostbufs_t *b, int64_t BS, kv_at_fn at)
{
	const kgb_tensor_t *k = TT(c, "key"), *kc = TT(c, "key_cache"), *vc = TT(c, "value_cache");
	int64_t T = k->shape[0], H = k->shape[1], D = k->shape[2];
	double *kv = B(c, b, "key"), *vv = B(c, b, "value"), *kcv = B(c, b, "key_cache");
	double *vcv = B(c, b, "value_cache"), *sm = B(c, b, "slot_mapping");
	double ks = B(c, b, "k_scale")[0], vs = B(c, b, "v_scale")[0];
	for (int64_t t = 0; t < T; t++) {
		int64_t slot = (int64_t)sm[t];
		if (slot < 0)
			continue;
		if (slot >= kc->shape[0] * BS)
			return -1;
		for (int64_t h = 0; h < H; h++) {
			for (int64_t d = 0; d < D; d++) {
				size_t src = (size_t)((t * H + h) * D + d), ko, vo;
				at(kc, vc, slot / BS, slot % BS, h, d, &ko, &vo);
				kcv[ko] = cache_store(c, kv[src], ks);
				vcv[vo] = cache_store(c, vv[src], vs);
			}
		}
	}
	return 0;
}

/* ---- reshape_and_cache ---- */

static int rac_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16), cdt = kv_is_fp8(c) ? KGB_DT_U8 : dt;
	kv_dims_t d = kv_dims(c);
	int64_t x = kgb_vllm_key_x(cdt), sh[5];
	if (d.D % x || d.T > d.NB * d.BS)
		return kgb_err(err, errlen, "op %s case %u: head_size %lld must be a multiple of %lld and "
		               "num_tokens %lld at most num_blocks*block_size", c->op->name, c->index,
		               (long long)d.D, (long long)x, (long long)d.T);
	kv_add_inputs(c, dt, &d);
	sh[0] = d.NB; sh[1] = d.H; sh[2] = d.D / x; sh[3] = d.BS; sh[4] = x;
	kgb_case_add_tensor(c, "key_cache", KGB_ROLE_INOUT, cdt, 5, sh);
	sh[2] = d.D; sh[3] = d.BS;
	kgb_case_add_tensor(c, "value_cache", KGB_ROLE_INOUT, cdt, 4, sh);
	kv_add_rest(c, &d);
	kgb_case_set_sym(c, "x", x);
	cache_case_finish(c);
	return 0;
}

static void rac_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *kc = TT(c, "key_cache");
	fill_slots(c, rng, b, kc->shape[0] * kc->shape[3]);
}

/* key_cache [blocks, heads, head_size / x, block_size, x], value_cache [blocks, heads,
 * head_size, block_size] */
static void rac_at(const kgb_tensor_t *kc, const kgb_tensor_t *vc, int64_t blk, int64_t off, int64_t h, int64_t d,
                   size_t *ko, size_t *vo)
{
	int64_t H = kc->shape[1], BS = kc->shape[3], x = kc->shape[4], D = vc->shape[2];
	*ko = (size_t)((((blk * H + h) * (D / x) + d / x) * BS + off) * x + d % x);
	*vo = (size_t)(((blk * H + h) * D + d) * BS + off);
}

static int rac_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	return kv_write_ref(c, b, TT(c, "key_cache")->shape[3], rac_at);
}

static const kgb_op_t op_reshape_and_cache = {
	.name = "reshape_and_cache",
	.source = "vllm",
	.category = "kv-cache",
	.dtypes = "bf16 f16 f32 u8(fp8)",
	.datasets = KGB_DS_VLLM,
	.summary = "in place: for token t with slot = slot_mapping[t] >= 0 (blk = slot / block_size, "
	           "off = slot % block_size): key_cache[blk, h, d / x, off, d % x] = key[t, h, d] and "
	           "value_cache[blk, h, d, off] = value[t, h, d], x = 16 / cache element size; slot -1 "
	           "is skipped; kv_cache_dtype fp8: the caches are u8 holding fp8 e4m3 of "
	           "x / k_scale (x / v_scale), rounded to nearest even, saturated",
	.signature = "key:in value:in key_cache:inout value_cache:inout slot_mapping:in(i64) "
	             "kv_cache_dtype:str k_scale:in(f32[1]) v_scale:in(f32[1])",
	.grids = {
		{ { { "dtype", "f16 f32" }, { "kv_cache_dtype", "auto" }, { "head_size", "64" },
		    { "num_tokens", "7" }, { "num_blocks", "8" } } },
		{ { { "dtype", "f16 bf16 f32" }, { "kv_cache_dtype", "auto fp8" }, { "head_size", "64 128 256" },
		    { "num_tokens", "42" }, { "num_heads", "2" }, { "num_blocks", "3" } } },
		{ { { "dtype", "bf16" }, { "kv_cache_dtype", "auto" }, { "head_size", "128" },
		    { "num_tokens", "128" }, { "num_heads", "8" }, { "num_blocks", "9" } } },
	},
	.setup = rac_setup,
	.ref = rac_ref,
	.inplace = true,
	.gen_inputs = rac_gen,
	.declared_cases = 18,
	.deviation = "2 smoke cases, then the 18 of dtype x kv_cache_dtype (auto, fp8) x head_size "
	             "(64, 128, 256: head sizes must divide by x = 16 for fp8 caches) with 42 tokens, "
	             "2 heads, block 16, 3 blocks (the public 8 heads and 1024 blocks only make the untouched "
	             "part of the cache larger), and one timed case of 128 tokens x 8 heads",
	.smoke_grids = 1,
};

/* ---- reshape_and_cache_flash ---- */

/* The flash cache [num_blocks, block_size, num_heads, head_size] as NHD (contiguous) or
 * HND (memory order [num_blocks, num_heads, block_size, head_size], same logical view). */
static kgb_tensor_t *flash_cache(kgb_case_t *c, const char *name, kgb_dtype_t dt, int64_t NB, int64_t BS,
                                 int64_t H, int64_t D, int hnd)
{
	int64_t sh[4] = { NB, BS, H, D };
	kgb_tensor_t *t = kgb_case_add_tensor(c, name, KGB_ROLE_INOUT, dt, 4, sh);
	if (hnd) {
		t->stride[0] = H * BS * D;
		t->stride[1] = D;
		t->stride[2] = BS * D;
		t->stride[3] = 1;
		kgb_tensor_finish(t);
	}
	return t;
}

static int racf_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16), cdt = kv_is_fp8(c) ? KGB_DT_U8 : dt;
	kv_dims_t d = kv_dims(c);
	const char *lay = kgb_case_pstr(c, "layout", "NHD");
	int hnd = strcmp(lay, "HND") == 0;
	if ((!hnd && strcmp(lay, "NHD")) || d.T > d.NB * d.BS)
		return kgb_err(err, errlen, "op %s case %u: layout '%s' (NHD or HND) or num_tokens %lld too large",
		               c->op->name, c->index, lay, (long long)d.T);
	kv_add_inputs(c, dt, &d);
	flash_cache(c, "key_cache", cdt, d.NB, d.BS, d.H, d.D, hnd);
	flash_cache(c, "value_cache", cdt, d.NB, d.BS, d.H, d.D, hnd);
	kv_add_rest(c, &d);
	cache_case_finish(c);
	return 0;
}

static void racf_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *kc = TT(c, "key_cache");
	fill_slots(c, rng, b, kc->shape[0] * kc->shape[1]);
}

/* both caches [blocks, block_size, heads, head_size] in one layout (NHD or HND) */
static void racf_at(const kgb_tensor_t *kc, const kgb_tensor_t *vc, int64_t blk, int64_t off, int64_t h,
                    int64_t d, size_t *ko, size_t *vo)
{
	int64_t idx[4] = { blk, off, h, d };
	(void)vc;
	*ko = *vo = kgb_tensor_offset(kc, idx);
}

static int racf_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	return kv_write_ref(c, b, TT(c, "key_cache")->shape[1], racf_at);
}

static const kgb_op_t op_reshape_and_cache_flash = {
	.name = "reshape_and_cache_flash",
	.source = "vllm",
	.category = "kv-cache",
	.dtypes = "bf16 f16 f32 u8(fp8)",
	.datasets = KGB_DS_VLLM,
	.summary = "in place: for token t with slot = slot_mapping[t] >= 0: key_cache[slot / block_size, "
	           "slot % block_size, h, d] = key[t, h, d], same for value; caches are "
	           "[num_blocks, block_size, num_heads, head_size] views, laid out NHD (contiguous) or HND "
	           "(memory [num_blocks, num_heads, block_size, head_size]; use the strides); slot -1 "
	           "skipped; fp8: u8 holding fp8 e4m3 of x / k_scale (x / v_scale)",
	.signature = "key:in value:in key_cache:inout value_cache:inout slot_mapping:in(i64) "
	             "kv_cache_dtype:str k_scale:in(f32[1]) v_scale:in(f32[1])",
	.grids = {
		{ { { "dtype", "f16" }, { "kv_cache_dtype", "auto" }, { "layout", "NHD HND" },
		    { "num_tokens", "7" }, { "num_blocks", "8" } } },
		{ { { "dtype", "f16 bf16 f32" }, { "kv_cache_dtype", "auto fp8" }, { "layout", "NHD HND" },
		    { "head_size", "64 256" }, { "num_tokens", "42" }, { "num_heads", "2" },
		    { "num_blocks", "3" } } },
		{ { { "dtype", "bf16" }, { "kv_cache_dtype", "auto" }, { "layout", "NHD HND" },
		    { "head_size", "128" }, { "num_tokens", "128" }, { "num_heads", "8" },
		    { "num_blocks", "9" } } },
	},
	.setup = racf_setup,
	.ref = racf_ref,
	.inplace = true,
	.gen_inputs = racf_gen,
	.declared_cases = 18,
	.deviation = "2 smoke cases, then dtype x kv_cache_dtype (auto, fp8) x layout (NHD, HND) x "
	             "head_size (64, 256) = 24 (layout crossed with the cache dtype), 2 timed cases",
	.smoke_grids = 1,
};

/* ---- concat_and_cache_mla ---- */

static int mla_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16), cdt = kv_is_fp8(c) ? KGB_DT_U8 : dt;
	const kgb_pval_t *cfg = kgb_case_param(c, "cfg");
	int64_t T, R, P, BS, NB, sh[3];
	kgb_tensor_t *sm;
	if (!cfg || cfg->kind != KGB_PV_SHAPE || cfg->ndim != 5)
		return kgb_err(err, errlen, "op %s case %u: cfg must be [tokens,kv_lora_rank,pe_dim,block_size,"
		               "num_blocks]", c->op->name, c->index);
	T = cfg->dims[0]; R = cfg->dims[1]; P = cfg->dims[2]; BS = cfg->dims[3]; NB = cfg->dims[4];
	if (T > NB * BS)
		return kgb_err(err, errlen, "op %s case %u: cfg %s: more tokens than slots", c->op->name, c->index,
		               cfg->s);
	sh[0] = T; sh[1] = R;
	kgb_case_add_tensor(c, "kv_c", KGB_ROLE_IN, dt, 2, sh);
	sh[1] = P;
	kgb_case_add_tensor(c, "k_pe", KGB_ROLE_IN, dt, 2, sh);
	sh[0] = NB; sh[1] = BS; sh[2] = R + P;
	kgb_case_add_tensor(c, "kv_cache", KGB_ROLE_INOUT, cdt, 3, sh);
	sm = kgb_case_add_tensor(c, "slot_mapping", KGB_ROLE_IN, KGB_DT_I64, 1, &T);
	kgb_aten_gen(sm, KGB_GEN_INT, 0, 0);
	add_scale(c, "scale");
	KGB_SYMS(c, "num_tokens kv_lora_rank pe_dim block_size", T, R, P, BS);
	cache_case_finish(c);
	return 0;
}

static void mla_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *kc = TT(c, "kv_cache");
	fill_slots(c, rng, b, kc->shape[0] * kc->shape[1]);
}

static int mla_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *kc = TT(c, "kv_cache");
	int64_t T = TT(c, "kv_c")->shape[0], R = TT(c, "kv_c")->shape[1], P = TT(c, "k_pe")->shape[1];
	int64_t BS = kc->shape[1], E = kc->shape[2];
	double *kcv = B(c, b, "kv_cache"), *a = B(c, b, "kv_c"), *pe = B(c, b, "k_pe");
	double *sm = B(c, b, "slot_mapping"), sc = B(c, b, "scale")[0];
	for (int64_t t = 0; t < T; t++) {
		int64_t slot = (int64_t)sm[t];
		double *dst;
		if (slot < 0)
			continue;
		if (slot >= kc->shape[0] * BS)
			return -1;
		dst = kcv + slot * E;          /* [blk, off] rows are consecutive: blk * BS + off = slot */
		for (int64_t i = 0; i < R; i++)
			dst[i] = cache_store(c, a[t * R + i], sc);
		for (int64_t i = 0; i < P; i++)
			dst[R + i] = cache_store(c, pe[t * P + i], sc);
	}
	return 0;
}

static const kgb_op_t op_concat_and_cache_mla = {
	.name = "concat_and_cache_mla",
	.source = "vllm",
	.category = "kv-cache",
	.dtypes = "bf16 f16 f32 u8(fp8)",
	.datasets = KGB_DS_VLLM,
	.summary = "in place: for token t with slot = slot_mapping[t] >= 0: kv_cache[slot / block_size, "
	           "slot % block_size, :] = concat(kv_c[t, :kv_lora_rank], k_pe[t, :pe_dim]); slot -1 "
	           "skipped; fp8: u8 holding fp8 e4m3 of x / scale",
	.signature = "kv_c:in k_pe:in kv_cache:inout slot_mapping:in(i64) kv_cache_dtype:str scale:in(f32[1])",
	.grids = {
		{ { { "dtype", "f16" }, { "kv_cache_dtype", "auto" }, { "cfg", "[5,64,16,8,2]" } } },
		{ { { "dtype", "f16 bf16 f32" }, { "kv_cache_dtype", "auto fp8" },
		    { "cfg", "[42,512,64,16,3] [7,128,32,16,4] [64,512,64,32,2]" } } },
		{ { { "dtype", "bf16" }, { "kv_cache_dtype", "auto" }, { "cfg", "[256,512,64,64,5]" } } },
	},
	.setup = mla_setup,
	.ref = mla_ref,
	.inplace = true,
	.gen_inputs = mla_gen,
	.declared_cases = 18,
	.deviation = "1 smoke case, the 18 of dtype x kv_cache_dtype x (tokens, kv_lora_rank, pe_dim, "
	             "block_size, num_blocks), one timed case",
	.smoke_grids = 1,
};

/* ---- copy_blocks, copy_blocks_mla, swap_blocks ---- */

static const char *const key_names[] = { "key_cache0", "key_cache1", "key_cache2" };
static const char *const value_names[] = { "value_cache0", "value_cache1", "value_cache2" };
static const char *const kv_names[] = { "kv_cache0", "kv_cache1", "kv_cache2" };

/* block_mapping [n, 2] int64: (src, dst) pairs, sources and destinations all distinct
 * (as vLLM's tests draw them), so the result does not depend on the copy order. */
static kgb_tensor_t *add_mapping(kgb_case_t *c, int64_t n)
{
	int64_t sh[2] = { n, 2 };
	kgb_tensor_t *m = kgb_case_add_tensor(c, "block_mapping", KGB_ROLE_IN, KGB_DT_I64, 2, sh);
	kgb_aten_gen(m, KGB_GEN_INT, 0, 0);
	return m;
}

static void fill_mapping(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b, int64_t num_blocks)
{
	int64_t n = TT(c, "block_mapping")->shape[0], *p = kgb_xmalloc((size_t)num_blocks * sizeof *p);
	double *m = B(c, b, "block_mapping");
	kgb_vllm_perm(rng, p, num_blocks);
	for (int64_t i = 0; i < n; i++) {
		m[2 * i] = (double)p[i];
		m[2 * i + 1] = (double)p[n + i];
	}
	free(p);
}

static void copy_block(double *dst, const double *src, int64_t per, int64_t from, int64_t to)
{
	memcpy(dst + to * per, src + from * per, (size_t)per * sizeof *dst);
}

static int cb_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16);
	int64_t L = kgb_case_pint(c, "num_layers", 1), n = kgb_case_pint(c, "num_mappings", 2);
	int64_t H = kgb_case_pint(c, "num_heads", 2), D = kgb_case_pint(c, "head_size", 64);
	int64_t BS = kgb_case_pint(c, "block_size", 8), NB = kgb_case_pint(c, "num_blocks", 8);
	int64_t x = kgb_vllm_key_x(dt), ks[5] = { NB, H, D / x, BS, x }, vs[4] = { NB, H, D, BS };
	if (L < 1 || L > 3 || 2 * n > NB || D % x)
		return kgb_err(err, errlen, "op %s case %u: num_layers 1..3, 2*num_mappings <= num_blocks, "
		               "head_size %% %lld == 0", c->op->name, c->index, (long long)x);
	for (int64_t l = 0; l < L; l++)
		kgb_case_add_tensor(c, key_names[l], KGB_ROLE_INOUT, dt, 5, ks);
	for (int64_t l = 0; l < L; l++)
		kgb_case_add_tensor(c, value_names[l], KGB_ROLE_INOUT, dt, 4, vs);
	add_mapping(c, n);
	KGB_SYMS(c, "num_layers num_pairs numel_per_block", L, n, H * D * BS);
	cache_case_finish(c);
	return 0;
}

static void cb_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	fill_mapping(c, rng, b, TT(c, "key_cache0")->shape[0]);
}

static int cb_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	int64_t n = TT(c, "block_mapping")->shape[0];
	double *m = B(c, b, "block_mapping");
	for (int ti = 0; ti < c->ntensors; ti++) {
		int64_t per = c->t[ti].shape[0] ? (int64_t)c->t[ti].numel / c->t[ti].shape[0] : 0;
		if (c->t[ti].role != KGB_ROLE_INOUT)
			continue;
		for (int64_t i = 0; i < n; i++)
			copy_block(b->v[ti], b->v[ti], per, (int64_t)m[2 * i], (int64_t)m[2 * i + 1]);
	}
	return 0;
}

static const kgb_op_t op_copy_blocks = {
	.name = "copy_blocks",
	.source = "vllm",
	.category = "kv-cache",
	.dtypes = "bf16 f16 f32",
	.datasets = KGB_DS_VLLM,
	.summary = "in place, for every layer l and pair i: key_cache<l>[block_mapping[i, 1]] = "
	           "key_cache<l>[block_mapping[i, 0]] and the same for value_cache<l> (whole blocks); the "
	           "lists key_caches / value_caches are passed as key_cache0.., value_cache0.. "
	           "(num_layers of each); key caches [num_blocks, heads, head_size/x, block_size, x], "
	           "value caches [num_blocks, heads, head_size, block_size]; sources and destinations are "
	           "distinct",
	.signature = "key_cache0..:inout value_cache0..:inout block_mapping:in(i64[n,2])",
	.grids = {
		{ { { "dtype", "f16" }, { "num_layers", "1" }, { "num_mappings", "4" }, { "num_blocks", "16" } } },
		{ { { "num_layers", "1 2" }, { "dtype", "f16 bf16 f32" }, { "head_size", "64 128" } } },
		{ { { "num_layers", "1" }, { "dtype", "bf16" }, { "head_size", "128" }, { "num_heads", "8" },
		    { "block_size", "8" }, { "num_mappings", "8" }, { "num_blocks", "16" } } },
	},
	.setup = cb_setup,
	.ref = cb_ref,
	.inplace = true,
	.gen_inputs = cb_gen,
	.declared_cases = 12,
	.deviation = "1 smoke case, the 12 of num_layers (1, 2) x dtype x head_size (64, 128), 2 "
	             "pairs in 8 blocks, one timed case; fp8 caches copy bytes exactly like any "
	             "one-byte dtype and are left out",
	.smoke_grids = 1,
};

static int cbm_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16);
	int64_t L = kgb_case_pint(c, "num_layers", 1), n = kgb_case_pint(c, "num_mappings", 2);
	int64_t E = kgb_case_pint(c, "entry_size", 576), BS = kgb_case_pint(c, "block_size", 8);
	int64_t NB = kgb_case_pint(c, "num_blocks", 4), sh[3] = { NB, BS, E };
	if (L < 1 || L > 3 || 2 * n > NB)
		return kgb_err(err, errlen, "op %s case %u: num_layers 1..3 and 2*num_mappings <= num_blocks",
		               c->op->name, c->index);
	for (int64_t l = 0; l < L; l++)
		kgb_case_add_tensor(c, kv_names[l], KGB_ROLE_INOUT, dt, 3, sh);
	add_mapping(c, n);
	KGB_SYMS(c, "num_layers num_pairs numel_per_block", L, n, BS * E);
	cache_case_finish(c);
	return 0;
}

static void cbm_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	fill_mapping(c, rng, b, TT(c, "kv_cache0")->shape[0]);
}

static const kgb_op_t op_copy_blocks_mla = {
	.name = "copy_blocks_mla",
	.source = "vllm",
	.category = "kv-cache",
	.dtypes = "bf16 f16 f32",
	.datasets = KGB_DS_VLLM,
	.summary = "in place, for every layer l and pair i: kv_cache<l>[block_mapping[i, 1]] = "
	           "kv_cache<l>[block_mapping[i, 0]] (whole [block_size, entry_size] blocks); the list "
	           "kv_caches is passed as kv_cache0.. (num_layers)",
	.signature = "kv_cache0..:inout block_mapping:in(i64[n,2])",
	.grids = {
		{ { { "dtype", "f16" }, { "num_layers", "1" }, { "num_mappings", "4" }, { "num_blocks", "16" } } },
		{ { { "num_layers", "1 2" }, { "dtype", "f16 bf16 f32" }, { "entry_size", "576 320" } } },
		{ { { "num_layers", "1" }, { "dtype", "bf16" }, { "entry_size", "576" }, { "block_size", "64" },
		    { "num_mappings", "2" }, { "num_blocks", "4" } } },
	},
	.setup = cbm_setup,
	.ref = cb_ref,
	.inplace = true,
	.gen_inputs = cbm_gen,
	.declared_cases = 12,
	.deviation = "1 smoke case, the 12 of num_layers (1, 2) x dtype x entry_size (576 = 512 + 64, "
	             "320), one timed case",
	.smoke_grids = 1,
};

static int sb_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16);
	int64_t n = kgb_case_pint(c, "num_mappings", 2), H = kgb_case_pint(c, "num_heads", 2);
	int64_t D = kgb_case_pint(c, "head_size", 64), BS = kgb_case_pint(c, "block_size", 16);
	int64_t NB = kgb_case_pint(c, "num_blocks", 4), sh[4] = { NB, BS, H, D };
	if (2 * n > NB)
		return kgb_err(err, errlen, "op %s case %u: 2*num_mappings > num_blocks", c->op->name, c->index);
	kgb_case_add_tensor(c, "src", KGB_ROLE_IN, dt, 4, sh);
	kgb_case_add_tensor(c, "dst", KGB_ROLE_INOUT, dt, 4, sh);
	add_mapping(c, n);
	KGB_SYMS(c, "num_pairs numel_per_block block_size_in_bytes", n, BS * H * D,
	         BS * H * D * (int64_t)kgb_dtype_size(dt));
	cache_case_finish(c);
	return 0;
}

static void sb_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	fill_mapping(c, rng, b, TT(c, "src")->shape[0]);
}

static int sb_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *s = TT(c, "src");
	int64_t n = TT(c, "block_mapping")->shape[0], per = (int64_t)s->numel / s->shape[0];
	double *m = B(c, b, "block_mapping");
	for (int64_t i = 0; i < n; i++)
		copy_block(B(c, b, "dst"), B(c, b, "src"), per, (int64_t)m[2 * i], (int64_t)m[2 * i + 1]);
	return 0;
}

static const kgb_op_t op_swap_blocks = {
	.name = "swap_blocks",
	.source = "vllm",
	.category = "kv-cache",
	.dtypes = "bf16 f16 f32",
	.datasets = KGB_DS_VLLM,
	.summary = "dst[block_mapping[i, 1]] = src[block_mapping[i, 0]] for every pair i (whole blocks "
	           "of block_size_in_bytes); other blocks of dst unchanged; both on the device",
	.signature = "src:in dst:inout block_mapping:in(i64[n,2])",
	.grids = {
		{ { { "dtype", "f16" }, { "num_mappings", "4" }, { "num_blocks", "16" } } },
		{ { { "dtype", "f16 bf16 f32" }, { "head_size", "64 128" }, { "block_size", "16 32" } } },
		{ { { "dtype", "bf16" }, { "head_size", "128" }, { "num_heads", "8" }, { "num_mappings", "4" },
		    { "num_blocks", "8" } } },
	},
	.setup = sb_setup,
	.ref = sb_ref,
	.inplace = true,
	.gen_inputs = sb_gen,
	.declared_cases = 54,
	.deviation = "1 smoke case, 12 of dtype x head_size x block_size and one timed case; the "
	             "public cases triple these with the copy direction (GPU to CPU, CPU to GPU, GPU to "
	             "GPU): kgb allocates every buffer on the device, so only device-to-device applies",
	.smoke_grids = 1,
};

/* ---- gathers: cp_gather_cache, gather_and_maybe_dequant_cache,
 * cp_gather_indexer_k_quant_cache ---- */

/* Sequence b's length and start (fixed per case: they decide the shapes). */
static int64_t seq_len_of(int64_t b, int64_t max_seq)
{
	return max_seq - (b * 37) % (max_seq / 2 + 1);
}

static int64_t seq_start_of(const kgb_case_t *c, int64_t b, int64_t bs)
{
	if (strcmp(kgb_case_pstr(c, "seq_starts", "zero"), "zero") == 0)
		return 0;
	return (b * 13 + 5) % (3 * bs);
}

/* Adds block_table [batch, max_blocks] and cu_seq_lens [batch + 1] (and seq_starts when
 * with_starts); returns the total number of tokens. */
static int64_t add_seq_tensors(kgb_case_t *c, int64_t batch, int64_t max_seq, int64_t bs, int with_starts)
{
	int64_t tot = 0, maxb = 1, sh[2], one = batch + 1;
	kgb_tensor_t *t;
	for (int64_t b = 0; b < batch; b++) {
		int64_t end = seq_len_of(b, max_seq) + (with_starts ? seq_start_of(c, b, bs) : 0);
		tot += seq_len_of(b, max_seq);
		if ((end + bs - 1) / bs > maxb)
			maxb = (end + bs - 1) / bs;
	}
	sh[0] = batch;
	sh[1] = maxb;
	t = kgb_case_add_tensor(c, "block_table", KGB_ROLE_IN, KGB_DT_I32, 2, sh);
	kgb_aten_gen(t, KGB_GEN_INT, 0, 0);
	t = kgb_case_add_tensor(c, "cu_seq_lens", KGB_ROLE_IN, KGB_DT_I32, 1, &one);
	kgb_aten_gen(t, KGB_GEN_INT, 0, 0);
	if (with_starts) {
		t = kgb_case_add_tensor(c, "seq_starts", KGB_ROLE_IN, KGB_DT_I32, 1, &batch);
		kgb_aten_gen(t, KGB_GEN_INT, 0, 0);
	}
	KGB_SYMS(c, "batch_size num_tokens max_blocks", batch, tot, maxb);
	return tot;
}

/* block_table rows: distinct blocks of num_blocks (drawn per seed); cu_seq_lens and
 * seq_starts from the case's fixed rule. */
static void fill_seq_tensors(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b, int64_t num_blocks,
                             int64_t bs)
{
	const kgb_tensor_t *bt = TT(c, "block_table");
	int64_t batch = bt->shape[0], maxb = bt->shape[1], max_seq = c->iparam[0];
	int64_t *p = kgb_xmalloc((size_t)num_blocks * sizeof *p);
	double *btv = B(c, b, "block_table"), *cu = B(c, b, "cu_seq_lens");
	kgb_vllm_perm(rng, p, num_blocks);
	for (int64_t i = 0; i < batch * maxb; i++)
		btv[i] = (double)p[i % num_blocks];
	cu[0] = 0;
	for (int64_t i = 0; i < batch; i++)
		cu[i + 1] = cu[i] + (double)seq_len_of(i, max_seq);
	if (kgb_case_tensor_index(c, "seq_starts") >= 0) {
		double *ss = B(c, b, "seq_starts");
		for (int64_t i = 0; i < batch; i++)
			ss[i] = (double)seq_start_of(c, i, bs);
	}
	free(p);
}

static int gather_setup_common(kgb_case_t *c, kgb_dtype_t src_dt, kgb_dtype_t dst_dt, char *err, size_t errlen)
{
	const kgb_pval_t *cfg = kgb_case_param(c, "cfg");
	int64_t batch, max_seq, bs, entry, nb, tot, sh[3];
	if (!cfg || cfg->kind != KGB_PV_SHAPE || cfg->ndim != 4)
		return kgb_err(err, errlen, "op %s case %u: cfg must be [batch,max_seq,block_size,entry_size]",
		               c->op->name, c->index);
	batch = cfg->dims[0]; max_seq = cfg->dims[1]; bs = cfg->dims[2]; entry = cfg->dims[3];
	c->iparam[0] = max_seq;
	/* enough blocks for every row of the block table to be distinct */
	nb = batch * ((max_seq + 3 * bs) / bs + 1);
	sh[0] = nb; sh[1] = bs; sh[2] = entry;
	kgb_case_add_tensor(c, "src_cache", KGB_ROLE_IN, src_dt, 3, sh);
	tot = add_seq_tensors(c, batch, max_seq, bs, 1);
	sh[0] = tot; sh[1] = entry;
	kgb_case_add_tensor(c, "dst", KGB_ROLE_OUT, dst_dt, 2, sh);
	kgb_case_set_sym(c, "block_size", bs);
	kgb_case_set_sym(c, "entry_size", entry);
	cache_case_finish(c);
	return 0;
}

static void gather_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *s = TT(c, "src_cache");
	fill_seq_tensors(c, rng, b, s->shape[0], s->shape[1]);
	if (s->dtype == KGB_DT_U8) {
		/* fp8 bytes: any value but the two NaN codes */
		double *v = B(c, b, "src_cache");
		for (size_t i = 0; i < s->numel; i++) {
			unsigned u = (unsigned)kgb_vllm_randint(rng, 0, 253);
			v[i] = (double)(u >= 0x7f ? u + 1 : u);
		}
	}
}

static int cpg_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16);
	return gather_setup_common(c, dt, dt, err, errlen);
}

/* Both gathers: token i of sequence b comes from logical position p of the sequence's
 * blocks; cp_gather_cache starts at p = seq_starts[b] + i, the dequantising gather at
 * p = (seq_starts[b] / block_size) * block_size + i (whole blocks skipped). */
static int gather_ref(const kgb_case_t *c, kgb_hostbufs_t *b, int block_granular)
{
	const kgb_tensor_t *s = TT(c, "src_cache"), *bt = TT(c, "block_table");
	int64_t batch = bt->shape[0], maxb = bt->shape[1], bs = s->shape[1], E = s->shape[2];
	double *src = B(c, b, "src_cache"), *dst = B(c, b, "dst"), *btv = B(c, b, "block_table");
	double *cu = B(c, b, "cu_seq_lens"), *ss = B(c, b, "seq_starts");
	int fp8 = kv_is_fp8(c), e5 = kv_is_e5m2(c);
	double scale = kgb_case_tensor_index(c, "scale") >= 0 ? B(c, b, "scale")[0] : 1.0;
	for (int64_t q = 0; q < batch; q++) {
		int64_t start = (int64_t)ss[q], len = (int64_t)(cu[q + 1] - cu[q]);
		if (block_granular)
			start = start / bs * bs;
		for (int64_t i = 0; i < len; i++) {
			int64_t p = start + i, blk;
			if (p / bs >= maxb)
				return -1;
			blk = (int64_t)btv[q * maxb + p / bs];
			for (int64_t e = 0; e < E; e++) {
				double v = src[(blk * bs + p % bs) * E + e];
				if (fp8)
					v = (double)((float)kgb_vllm_fp8_decode(e5, (unsigned)v) * (float)scale);
				dst[((int64_t)cu[q] + i) * E + e] = v;
			}
		}
	}
	return 0;
}

static int cpg_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	return gather_ref(c, b, 0);
}

static const kgb_op_t op_cp_gather_cache = {
	.name = "cp_gather_cache",
	.source = "vllm",
	.category = "kv-cache",
	.dtypes = "bf16 f16 f32 u8",
	.datasets = KGB_DS_VLLM,
	.summary = "dst[cu_seq_lens[b] + i, :] = src_cache[block_table[b, p / block_size], p % block_size, :] "
	           "with p = seq_starts[b] + i, for every sequence b < batch_size and i < cu_seq_lens[b+1] "
	           "- cu_seq_lens[b] (a bit copy of the entry); seq_starts need not be block-aligned; "
	           "seq_starts = zero is vLLM's None",
	.signature = "src_cache:in dst:out block_table:in(i32) cu_seq_lens:in(i32) batch_size:sym "
	             "seq_starts:in(i32)",
	.grids = {
		{ { { "dtype", "f16" }, { "seq_starts", "zero" }, { "cfg", "[2,20,16,64]" } } },
		{ { { "dtype", "f32 f16 bf16 u8" }, { "seq_starts", "zero given" }, { "cfg", "[3,24,16,576]" } } },
		{ { { "dtype", "bf16" }, { "seq_starts", "given" }, { "cfg", "[4,128,64,576]" } } },
	},
	.setup = cpg_setup,
	.ref = cpg_ref,
	.gen_inputs = gather_gen,
	.declared_cases = 8,
	.deviation = "1 smoke case, the 8 of dtype (f32, f16, bf16, u8 for fp8 caches) x seq_starts "
	             "(none, given), one timed case",
	.smoke_grids = 1,
};

static int gmd_setup(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F16);
	if (gather_setup_common(c, kv_is_fp8(c) ? KGB_DT_U8 : dt, dt, err, errlen))
		return -1;
	add_scale(c, "scale");
	return 0;
}

static int gmd_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	return gather_ref(c, b, 1);
}

static const kgb_op_t op_gather_and_maybe_dequant_cache = {
	.name = "gather_and_maybe_dequant_cache",
	.source = "vllm",
	.category = "kv-cache",
	.dtypes = "bf16 f16 f32 u8(fp8)",
	.datasets = KGB_DS_VLLM,
	.summary = "dst[cu_seq_lens[b] + i, :] = src_cache[block_table[b, s + p / block_size], "
	           "p % block_size, :] for i < seq_len(b), with s = seq_starts[b] / block_size (whole "
	           "blocks skipped; zero = None) and p = i; kv_cache_dtype auto copies, fp8 decodes the "
	           "e4m3 byte and multiplies by scale[0] in f32",
	.signature = "src_cache:in dst:out block_table:in(i32) cu_seq_lens:in(i32) batch_size:sym "
	             "kv_cache_dtype:str scale:in(f32[1]) seq_starts:in(i32)",
	.grids = {
		{ { { "dtype", "f16" }, { "kv_cache_dtype", "auto" }, { "seq_starts", "zero" },
		    { "cfg", "[2,20,16,64]" } } },
		{ { { "dtype", "f16 bf16 f32" }, { "kv_cache_dtype", "auto fp8" }, { "seq_starts", "zero given" },
		    { "cfg", "[3,24,16,576]" } } },
		{ { { "dtype", "bf16" }, { "kv_cache_dtype", "fp8" }, { "seq_starts", "given" },
		    { "cfg", "[4,128,64,576]" } } },
	},
	.setup = gmd_setup,
	.ref = gmd_ref,
	.gen_inputs = gather_gen,
	.declared_cases = 13,
	.deviation = "1 smoke case, 12 of dtype x kv_cache_dtype (auto, fp8) x seq_starts (none, "
	             "given) and one timed case: 13 as public",
	.smoke_grids = 1,
};

static int ikq_setup(kgb_case_t *c, char *err, size_t errlen)
{
	const kgb_pval_t *cfg = kgb_case_param(c, "cfg");
	int64_t batch, max_seq, bs, hd, qb, nb, tot, sh[3];
	if (!cfg || cfg->kind != KGB_PV_SHAPE || cfg->ndim != 5 || cfg->dims[3] % cfg->dims[4])
		return kgb_err(err, errlen, "op %s case %u: cfg must be [batch,max_seq,block_size,head_dim,"
		               "quant_block] with head_dim a multiple of quant_block", c->op->name, c->index);
	batch = cfg->dims[0]; max_seq = cfg->dims[1]; bs = cfg->dims[2]; hd = cfg->dims[3]; qb = cfg->dims[4];
	c->iparam[0] = max_seq;
	nb = batch * (max_seq / bs + 2);
	sh[0] = nb; sh[1] = bs; sh[2] = hd + hd / qb * 4;
	kgb_case_add_tensor(c, "kv_cache", KGB_ROLE_IN, KGB_DT_U8, 3, sh);
	tot = add_seq_tensors(c, batch, max_seq, bs, 0);
	sh[0] = tot; sh[1] = hd;
	kgb_case_add_tensor(c, "dst_k", KGB_ROLE_OUT, KGB_DT_U8, 2, sh);
	sh[1] = hd / qb * 4;
	kgb_case_add_tensor(c, "dst_scale", KGB_ROLE_OUT, KGB_DT_U8, 2, sh);
	KGB_SYMS(c, "block_size head_dim quant_block_size", bs, hd, qb);
	cache_case_finish(c);
	return 0;
}

static void ikq_gen(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *s = TT(c, "kv_cache");
	double *v = B(c, b, "kv_cache");
	fill_seq_tensors(c, rng, b, s->shape[0], s->shape[1]);
	for (size_t i = 0; i < s->numel; i++)
		v[i] = (double)kgb_vllm_randint(rng, 0, 255);
}

/* Each block of the indexer cache holds block_size * head_dim fp8 bytes (token-major),
 * then block_size * head_dim / quant_block f32 scales (token-major), as raw bytes. */
static int ikq_ref(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *kc = TT(c, "kv_cache"), *bt = TT(c, "block_table");
	int64_t batch = bt->shape[0], maxb = bt->shape[1], bs = kc->shape[1], stride = kc->shape[2];
	int64_t hd = TT(c, "dst_k")->shape[1], sb = TT(c, "dst_scale")->shape[1];
	double *src = B(c, b, "kv_cache"), *dk = B(c, b, "dst_k"), *ds = B(c, b, "dst_scale");
	double *btv = B(c, b, "block_table"), *cu = B(c, b, "cu_seq_lens");
	for (int64_t q = 0; q < batch; q++) {
		for (int64_t t = (int64_t)cu[q]; t < (int64_t)cu[q + 1]; t++) {
			int64_t p = t - (int64_t)cu[q], blk, base;
			if (p / bs >= maxb)
				return -1;
			blk = (int64_t)btv[q * maxb + p / bs];
			base = blk * bs * stride;
			for (int64_t i = 0; i < hd; i++)
				dk[t * hd + i] = src[base + (p % bs) * hd + i];
			for (int64_t i = 0; i < sb; i++)
				ds[t * sb + i] = src[base + bs * hd + (p % bs) * sb + i];
		}
	}
	return 0;
}

static const kgb_op_t op_cp_gather_indexer_k_quant_cache = {
	.name = "cp_gather_indexer_k_quant_cache",
	.source = "vllm",
	.category = "kv-cache",
	.dtypes = "u8(fp8, f32 bytes)",
	.datasets = KGB_DS_VLLM,
	.summary = "for token t of sequence b (cu_seq_lens[b] <= t < cu_seq_lens[b+1], p = t - "
	           "cu_seq_lens[b], blk = block_table[b, p / block_size], o = p % block_size): "
	           "dst_k[t, :] = the head_dim bytes at kv_cache[blk] + o * head_dim, dst_scale[t, :] = the "
	           "head_dim / quant_block * 4 bytes at kv_cache[blk] + block_size * head_dim + o * "
	           "(head_dim / quant_block * 4) (each cache block: all keys, then all scales)",
	.signature = "kv_cache:in(u8) dst_k:out(u8) dst_scale:out(u8) block_table:in(i32) cu_seq_lens:in(i32)",
	.grids = {
		{ { { "cfg", "[2,20,16,128,128]" } } },
		{ { { "cfg", "[1,1,64,128,128] [1,64,64,128,128] [3,100,64,128,128] [4,300,64,128,128] "
		             "[8,129,64,128,128] [2,70,16,128,64] [5,33,16,128,32] [16,64,64,128,128] "
		             "[2,513,64,128,128] [7,7,1,128,128] [3,200,32,64,64] [1,400,64,128,128]" } } },
		{ { { "cfg", "[8,256,64,128,128]" } } },
	},
	.setup = ikq_setup,
	.ref = ikq_ref,
	.gen_inputs = ikq_gen,
	.declared_cases = 13,
	.deviation = "1 smoke case, 12 shapes (batch, max_seq, block_size, head_dim, quant_block) and "
	             "one timed case: 13 as public",
	.smoke_grids = 1,
};

const kgb_op_t *const kgb_ops_vllm_cache[] = {
	&op_reshape_and_cache, &op_reshape_and_cache_flash, &op_concat_and_cache_mla, &op_copy_blocks,
	&op_copy_blocks_mla, &op_swap_blocks, &op_cp_gather_cache, &op_gather_and_maybe_dequant_cache,
	&op_cp_gather_indexer_k_quant_cache, NULL,
};
