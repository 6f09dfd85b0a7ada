/* ATen elementwise binary operators: tensor-tensor (same shape and broadcast),
 * tensor-scalar and 0-d tensor overloads, in-place forms, over every dtype the
 * operator takes. add and gt are defined with the demo operators. */
#include <math.h>
#include <string.h>
#include "aten_common.h"

typedef double (*binary_fn)(double a, double b, const kgb_case_t *c);

enum {
	BF_BOOL_OUT = 1u << 0,   /* out is bool (comparisons) */
	BF_INPLACE = 1u << 1,    /* self is INOUT, no out tensor */
	BF_ALPHA = 1u << 2,      /* grid has an alpha parameter */
	BF_ROUND = 1u << 3,      /* grid has a rounding_mode parameter (div) */
	BF_SIGNFLIP = 1u << 4,   /* other is drawn positive, then half of it negated */
	BF_TIES = 1u << 5,       /* copy some of self into other (ties) */
	BF_NANS = 1u << 6,       /* put NaN into a few inputs (fmax) */
	BF_TRUEDIV_INT = 1u << 7,/* integer inputs give an fp32 output */
	BF_INT_SELF = 1u << 8,   /* float self drawn from the integers -2..2 (zeros) */
	BF_INTVAL = 1u << 9,     /* float inputs integer-valued (floor division) */
};

typedef struct binary_def {
	kgb_op_t op;
	binary_fn f;
	unsigned flags;
	double alo, ahi, blo, bhi;     /* float domains (UNIFORM); lo == hi: the default */
	double ialo, iahi, iblo, ibhi; /* integer domains */
	double sval;                   /* the scalar operand of mode=scalar (trunc for ints) */
} binary_def_t;

_Static_assert(offsetof(binary_def_t, op) == 0, "op must be the first member");

/* iparam slots: tensor indices of self, other, out (-1 where a scalar) and the
 * rounding mode; fparam: alpha, and the scalar values standing for self / other. */
#define I_SELF 0
#define I_OTHER 1
#define I_OUT 2
#define I_ROUND 3
#define F_ALPHA 0
#define F_SELF 1
#define F_OTHER 2

enum { R_TRUE = 0, R_TRUNC, R_FLOOR };

#define B_SHAPES "[] [1] [7] [1000] [33,65] [3,1,17] [2,3,4,5,6] [256,1024] [1024,1024]"
#define B_SHAPES_ND "[33,65] [3,1,17] [2,3,4,5,6] [256,1024] [1024,1024]"
#define B_SHAPES_LAY "[33,65] [2,3,4,5,6] [1024,1024]"

/* Grids by ATen overload (the "overload" parameter, see catalog.h). The tensor
 * overloads take other as a tensor of self's shape (same), broadcast along rows (row)
 * or columns (col), as a 0-d tensor (t0d), and self in non-contiguous layouts; the
 * scalar overloads take other as a Python scalar. EXTRA: more parameters, each
 * written `, { name, values }`. */
#define B_TGRIDS(OVL, DT, ...)                                                                    \
	{ { { "overload", OVL }, { "shape", B_SHAPES }, { "dtype", DT }, { "mode", "same t0d" } __VA_ARGS__ } }, \
	{ { { "overload", OVL }, { "shape", B_SHAPES_ND }, { "dtype", DT }, { "mode", "row col" } __VA_ARGS__ } }, \
	{ { { "overload", OVL }, { "shape", B_SHAPES_LAY }, { "dtype", DT }, { "mode", "same" },              \
	    { "layout", "transposed strided" } __VA_ARGS__ } }
#define B_SGRID(OVL, DT, ...)                                                                     \
	{ { { "overload", OVL }, { "shape", B_SHAPES }, { "dtype", DT }, { "mode", "scalar" } __VA_ARGS__ } }
#define B_GRIDS(DT) { B_TGRIDS("Tensor", DT), B_SGRID("Scalar", DT) }
#define B_GRIDS_T(DT) { B_TGRIDS("default", DT) }
#define ALPHA_F , { "alpha", "1 -2.5 3.5" }
#define ALPHA_I , { "alpha", "1 -2 3" }
#define ROUND_T , { "rounding_mode", "true" }
#define ROUND_M , { "rounding_mode", "trunc floor" }
#define EXPONENTS , { "exponent", "2 3 -1 0.5 1.7" }

/* Builds self / other / out for modes same, row, col, scalar, t0d (scalar other) and
 * rscalar (scalar self, tensor other). */
static int setup_binary(kgb_case_t *c, char *err, size_t errlen)
{
	const binary_def_t *d = KGB_ATEN_DEF(binary_def_t, c);
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32), odt = dt;
	const char *mode = kgb_case_pstr(c, "mode", "same");
	const char *layout = kgb_case_pstr(c, "layout", NULL);
	const char *rm = kgb_case_pstr(c, "rounding_mode", "true");
	int64_t dims[KGB_MAX_DIMS], odims[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims), ond = nd;
	bool isf = kgb_dtype_is_float(dt), rscalar = strcmp(mode, "rscalar") == 0;
	kgb_tensor_t *a = NULL, *b = NULL;
	double alo = d->alo, ahi = d->ahi, blo = d->blo, bhi = d->bhi;
	bool intval = false, promote = false;

	c->iparam[I_SELF] = c->iparam[I_OTHER] = c->iparam[I_OUT] = -1;
	c->iparam[I_ROUND] = strcmp(rm, "trunc") == 0 ? R_TRUNC : strcmp(rm, "floor") == 0 ? R_FLOOR : R_TRUE;
	if (!isf) {
		alo = d->ialo, ahi = d->iahi, blo = d->iblo, bhi = d->ibhi;
	} else if (c->iparam[I_ROUND] != R_TRUE) {
		/* integer-valued floats: a / b is never within rounding error of an integer */
		alo = -100, ahi = 100, blo = 1, bhi = 12;
		intval = true;
	} else if (d->flags & BF_INTVAL) {
		intval = true;
	}
	/* pow with a non-integer scalar exponent needs a positive base; integer exponents
	 * take the default (signed) base */
	if (strcmp(c->op->name, "pow") == 0 && strcmp(mode, "scalar") == 0) {
		double e = kgb_case_pfloat(c, "exponent", 2);
		if (e == floor(e) && e > 0)
			alo = ahi = 0;
	}

	if (!rscalar) {
		a = kgb_aten_tensor(c, "self", d->flags & BF_INPLACE ? KGB_ROLE_INOUT : KGB_ROLE_IN, dt, nd,
		                    dims, layout, err, errlen);
		if (!a)
			return -1;
		c->iparam[I_SELF] = kgb_case_tensor_index(c, "self");
		if (isf && (d->flags & BF_INT_SELF))
			kgb_aten_gen(a, KGB_GEN_INT, -2, 2);
		else if (isf && alo != ahi)
			kgb_aten_gen(a, intval ? KGB_GEN_INT : KGB_GEN_UNIFORM, alo, ahi);
		else if (!isf && dt != KGB_DT_BOOL)
			kgb_aten_gen(a, KGB_GEN_INT, alo, ahi);
	} else {
		c->fparam[F_SELF] = d->sval;
		kgb_case_add_scalar(c, "self", KGB_DT_F32, d->sval);
		c->fparam[F_SELF] = c->s[c->nscalars - 1].value;
	}

	if (strcmp(mode, "scalar") == 0) {
		double v = kgb_case_param(c, "exponent") ? kgb_case_pfloat(c, "exponent", 2) : d->sval;
		kgb_scalar_t *s;
		/* PyTorch's promotion: an integer tensor with a non-integral Python scalar
		 * computes and returns the default float dtype (fp32), the scalar unchanged */
		promote = !isf && dt != KGB_DT_BOOL && v != trunc(v);
		s = kgb_case_add_scalar(c, "other", isf || promote ? KGB_DT_F32 : KGB_DT_I64, v);
		c->fparam[F_OTHER] = s->value;
	} else {
		int bnd = nd;
		int64_t bd[KGB_MAX_DIMS];
		const char *blay = NULL;
		memcpy(bd, dims, sizeof bd);
		if (strcmp(mode, "row") == 0) {
			bnd = 1;
			bd[0] = dims[nd - 1];
		} else if (strcmp(mode, "col") == 0) {
			bd[nd - 1] = 1;
		} else if (strcmp(mode, "t0d") == 0) {
			bnd = 0;
		} else if (strcmp(mode, "same") == 0 || rscalar) {
			blay = layout;
		} else {
			return kgb_err(err, errlen, "op %s: parameter mode: unknown value '%s'", c->op->name, mode);
		}
		b = kgb_aten_tensor(c, "other", KGB_ROLE_IN, dt, bnd, bd, blay, err, errlen);
		if (!b)
			return -1;
		c->iparam[I_OTHER] = kgb_case_tensor_index(c, "other");
		if (isf && blo != bhi)
			kgb_aten_gen(b, intval ? KGB_GEN_INT : KGB_GEN_UNIFORM, blo, bhi);
		else if (!isf && dt != KGB_DT_BOOL)
			kgb_aten_gen(b, KGB_GEN_INT, blo, bhi);
	}
	if (d->flags & BF_ALPHA) {
		double al = kgb_case_pfloat(c, "alpha", 1);
		kgb_scalar_t *s;
		if (!isf && al != trunc(al))  /* PyTorch rejects a float alpha for integer tensors */
			return kgb_err(err, errlen, "op %s case %u: alpha %g with integer dtype %s", c->op->name, c->index,
			               al, kgb_dtype_name(dt));
		s = kgb_case_add_scalar(c, "alpha", isf ? KGB_DT_F32 : KGB_DT_I64, al);
		c->fparam[F_ALPHA] = s->value;
	}
	if (d->flags & BF_BOOL_OUT)
		odt = KGB_DT_BOOL;
	else if (promote || (!isf && (d->flags & BF_TRUEDIV_INT) && c->iparam[I_ROUND] == R_TRUE))
		odt = KGB_DT_F32;
	if (!(d->flags & BF_INPLACE)) {
		memcpy(odims, dims, sizeof odims);
		kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, odt, ond, odims);
		c->iparam[I_OUT] = c->ntensors - 1;
	} else {
		c->iparam[I_OUT] = c->iparam[I_SELF];
	}
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int ref_binary(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const binary_def_t *d = KGB_ATEN_DEF(binary_def_t, c);
	int ia = (int)c->iparam[I_SELF], ib = (int)c->iparam[I_OTHER], io = (int)c->iparam[I_OUT];
	const kgb_tensor_t *o = &c->t[io];
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	do {
		double x = ia >= 0 ? b->v[ia][kgb_tensor_offset(&c->t[ia], idx)] : c->fparam[F_SELF];
		double y = ib >= 0 ? b->v[ib][kgb_aten_bcast_off(&c->t[ib], o->ndim, idx)] : c->fparam[F_OTHER];
		b->v[io][kgb_tensor_offset(o, idx)] = d->f(x, y, c);
	} while (kgb_index_next(o, idx));
	return 0;
}

/* Input rules: sign flips of divisors, ties between self and other, NaNs. */
static void gen_binary(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const binary_def_t *d = KGB_ATEN_DEF(binary_def_t, c);
	int ia = (int)c->iparam[I_SELF], ib = (int)c->iparam[I_OTHER];
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	if (ib >= 0 && (d->flags & BF_SIGNFLIP)) {
		const kgb_tensor_t *t = &c->t[ib];
		do {
			size_t off = kgb_tensor_offset(t, idx);
			if (kgb_rng_uniform(rng) < 0.5)
				b->v[ib][off] = -b->v[ib][off];
		} while (kgb_index_next(t, idx));
	}
	if (ia >= 0 && ib >= 0 && (d->flags & BF_TIES)) {
		const kgb_tensor_t *t = &c->t[ia];
		memset(idx, 0, sizeof idx);
		do {
			if (kgb_rng_uniform(rng) < 0.3)
				b->v[ib][kgb_aten_bcast_off(&c->t[ib], t->ndim, idx)] =
					b->v[ia][kgb_tensor_offset(t, idx)];
		} while (kgb_index_next(t, idx));
		/* same shapes: element 0 a tie, element 1 strictly below self (both outcomes) */
		if (c->t[ib].numel == t->numel && t->numel >= 2) {
			b->v[ib][kgb_tensor_flat_offset(&c->t[ib], 0)] = b->v[ia][kgb_tensor_flat_offset(t, 0)];
			b->v[ib][kgb_tensor_flat_offset(&c->t[ib], 1)] = b->v[ia][kgb_tensor_flat_offset(t, 1)] - 1;
		}
	}
	if (d->flags & BF_NANS) {
		for (int k = 0; k < 2; k++) {
			int ti = k == 0 ? ia : ib;
			const kgb_tensor_t *t;
			if (ti < 0 || c->t[ti].numel < 8)
				continue;      /* keep small tensors NaN-free: the output must vary */
			t = &c->t[ti];
			memset(idx, 0, sizeof idx);
			do {
				if (kgb_rng_uniform(rng) < 0.03)
					b->v[ti][kgb_tensor_offset(t, idx)] = NAN;
			} while (kgb_index_next(t, idx));
		}
	}
}

/* ---- the scalar functions ---- */

static double f_sub(double a, double b, const kgb_case_t *c) { return a - c->fparam[F_ALPHA] * b; }
static double f_rsub(double a, double b, const kgb_case_t *c) { return b - c->fparam[F_ALPHA] * a; }
static double f_add(double a, double b, const kgb_case_t *c) { return a + c->fparam[F_ALPHA] * b; }
static double f_mul(double a, double b, const kgb_case_t *c) { (void)c; return a * b; }
static double f_eq(double a, double b, const kgb_case_t *c) { (void)c; return a == b; }
static double f_le(double a, double b, const kgb_case_t *c) { (void)c; return a <= b; }
static double f_fmax(double a, double b, const kgb_case_t *c) { (void)c; return fmax(a, b); }
static double f_pow(double a, double b, const kgb_case_t *c) { (void)c; return pow(a, b); }

static double f_div(double a, double b, const kgb_case_t *c)
{
	double q = a / b;
	if (c->iparam[I_ROUND] == R_TRUNC)
		return trunc(q);
	if (c->iparam[I_ROUND] == R_FLOOR)
		return floor(q);
	return q;
}

static double f_floor_divide(double a, double b, const kgb_case_t *c)
{
	(void)c;
	return kgb_aten_floordiv(a, b);
}

static double f_heaviside(double a, double b, const kgb_case_t *c)
{
	(void)c;
	return a == 0 ? b : a < 0 ? 0 : 1;
}

static double f_logaddexp2(double a, double b, const kgb_case_t *c)
{
	double m = fmax(a, b);
	(void)c;
	return m + log2(1 + exp2(-fabs(a - b)));
}

/* ---- the operators ---- */

#define AS_GRIDS(...) __VA_ARGS__
#define BINARY(NAME, DT, SIG, GRIDS, FNC, FLAGS, ALO, AHI, BLO, BHI, IALO, IAHI, IBLO, IBHI, SV,                         \
               DECL, SUMMARY, DEV)                                                                                       \
	static const binary_def_t def_##NAME = {                                                                         \
		.op = {                                                                                                  \
			KGB_ATEN_OP(#NAME, "elementwise-binary", DT, SIG, setup_binary, ref_binary, DECL, SUMMARY, DEV), \
			.grids = GRIDS,                                                                                  \
			.inplace = ((FLAGS) & BF_INPLACE) != 0,                                                          \
			.gen_inputs = gen_binary,                                                                        \
		},                                                                                                       \
		.f = FNC, .flags = FLAGS,                                                                                \
		.alo = ALO, .ahi = AHI, .blo = BLO, .bhi = BHI,                                                          \
		.ialo = IALO, .iahi = IAHI, .iblo = IBLO, .ibhi = IBHI, .sval = SV,                                      \
	}

#define MODES_TEXT "overloads: .Tensor (other a tensor of self's shape, broadcast along rows (row: [last " \
	"dim]) or columns (col: last dim 1), a 0-d tensor (t0d), self also transposed or strided) and .Scalar " \
	"(other a Python scalar)"
#define MODES_TEXT_T "one overload (.default): other a tensor of self's shape, broadcast along rows (row) or " \
	"columns (col), or a 0-d tensor (t0d); self also transposed or strided"
#define PROMO_TEXT "; int64: exact, except that a non-integral Python scalar promotes the result to fp32 " \
	"(PyTorch's type promotion: the scalar is not truncated)"
#define DEV_GRID "kgb's grid: 0-d to 5-d shapes x every dtype x same/row/col/0-d tensor and Python scalar " \
	"operands x layouts"
#define DEV_GRID_T "kgb's grid: 0-d to 5-d shapes x every dtype x same/row/col/0-d operands x layouts (ATen " \
	"has no Scalar overload: a scalar is passed as a 0-d tensor)"

BINARY(sub, KGB_ATEN_FLOAT_DTYPES " i64", "self:in other:in(.Tensor)|scalar(.Scalar) alpha:scalar out:out",
       AS_GRIDS({ B_TGRIDS("Tensor", KGB_ATEN_FLOAT_DTYPES, ALPHA_F), B_TGRIDS("Tensor", "i64", ALPHA_I),
                  B_SGRID("Scalar", KGB_ATEN_FLOAT_DTYPES, ALPHA_F), B_SGRID("Scalar", "i64", ALPHA_I) }),
       f_sub, BF_ALPHA,
       0, 0, 0, 0, -1000000, 1000000, -1000000, 1000000, 1.75, 650,
       "out = self - alpha * other; " MODES_TEXT PROMO_TEXT "; int64 cases take integer alphas (PyTorch "
       "rejects a float alpha with integer tensors)",
       DEV_GRID " x alpha {1, -2.5, 3.5} (int64: {1, -2, 3}); fewer cases than the public 650, which repeat "
       "shapes");
BINARY(rsub, KGB_ATEN_FLOAT_DTYPES, "self:in other:in(.Tensor)|scalar(.Scalar) alpha:scalar out:out",
       AS_GRIDS({ B_TGRIDS("Tensor", KGB_ATEN_FLOAT_DTYPES, ALPHA_F), B_SGRID("Scalar", KGB_ATEN_FLOAT_DTYPES, ALPHA_F) }),
       f_rsub, BF_ALPHA,
       0, 0, 0, 0, 0, 0, 0, 0, 1.75, 144,
       "out = other - alpha * self (reversed subtraction); " MODES_TEXT,
       DEV_GRID " x alpha {1, -2.5, 3.5}");
BINARY(add_, KGB_ATEN_FLOAT_DTYPES, "self:inout other:in(.Tensor)|scalar(.Scalar) alpha:scalar",
       AS_GRIDS({ B_TGRIDS("Tensor", KGB_ATEN_FLOAT_DTYPES, ALPHA_F), B_SGRID("Scalar", KGB_ATEN_FLOAT_DTYPES, ALPHA_F) }),
       f_add, BF_ALPHA | BF_INPLACE,
       0, 0, 0, 0, 0, 0, 0, 0, 1.75, 360,
       "in place: self += alpha * other, written into self's own (possibly strided) storage; " MODES_TEXT,
       DEV_GRID " x alpha {1, -2.5, 3.5}; transposed and strided destinations are written in place");
BINARY(mul, KGB_ATEN_FLOAT_DTYPES " i64", "self:in other:in(.Tensor)|scalar(.Scalar) out:out",
       B_GRIDS(KGB_ATEN_FLOAT_DTYPES " i64"), f_mul, 0,
       0, 0, 0, 0, -30000, 30000, -30000, 30000, -1.75, 164,
       "out = self * other; " MODES_TEXT PROMO_TEXT, DEV_GRID);
BINARY(div, KGB_ATEN_FLOAT_DTYPES " i64",
       "self:in other:in(.Tensor, .Tensor_mode)|scalar(.Scalar, .Scalar_mode) rounding_mode:param(_mode) out:out",
       AS_GRIDS({ B_TGRIDS("Tensor", KGB_ATEN_FLOAT_DTYPES " i64", ROUND_T),
                  B_TGRIDS("Tensor_mode", KGB_ATEN_FLOAT_DTYPES " i64", ROUND_M),
                  B_SGRID("Scalar", KGB_ATEN_FLOAT_DTYPES " i64", ROUND_T),
                  B_SGRID("Scalar_mode", KGB_ATEN_FLOAT_DTYPES " i64", ROUND_M) }),
       f_div, BF_ROUND | BF_SIGNFLIP | BF_TRUEDIV_INT,
       0, 0, 0.5, 2.0, -1000, 1000, 1, 50, -1.5, 170,
       "out = self / other: .Tensor / .Scalar true division (int64 inputs give fp32), .Tensor_mode / "
       ".Scalar_mode with rounding_mode 'trunc' or 'floor'; divisors are bounded away from 0 (|other| in "
       "[0.5, 2), integers in [1, 50], random sign); for trunc/floor the float inputs are integer-valued so "
       "that no quotient sits within rounding error of an integer; " MODES_TEXT PROMO_TEXT,
       DEV_GRID " x the three rounding modes");
BINARY(div_, KGB_ATEN_FLOAT_DTYPES,
       "self:inout other:in(.Tensor, .Tensor_mode)|scalar(.Scalar, .Scalar_mode) rounding_mode:param(_mode)",
       AS_GRIDS({ B_TGRIDS("Tensor", KGB_ATEN_FLOAT_DTYPES, ROUND_T),
                  B_TGRIDS("Tensor_mode", KGB_ATEN_FLOAT_DTYPES, ROUND_M),
                  B_SGRID("Scalar", KGB_ATEN_FLOAT_DTYPES, ROUND_T),
                  B_SGRID("Scalar_mode", KGB_ATEN_FLOAT_DTYPES, ROUND_M) }),
       f_div, BF_ROUND | BF_SIGNFLIP | BF_INPLACE,
       0, 0, 0.5, 2.0, 0, 0, 0, 0, -1.5, 96,
       "in place: self = self / other (.Tensor / .Scalar true division, .Tensor_mode / .Scalar_mode with "
       "rounding_mode 'trunc' or 'floor'), divisors bounded away from 0 with random sign; " MODES_TEXT,
       "the public truncation test is broken (NameError); kgb tests all four overloads on its grid");
BINARY(eq, "bool " KGB_ATEN_FLOAT_DTYPES " i64", "self:in other:in(.Tensor)|scalar(.Scalar) out:out(bool)",
       B_GRIDS("bool " KGB_ATEN_FLOAT_DTYPES " i64"), f_eq, BF_BOOL_OUT | BF_TIES | BF_INTVAL,
       -3, 3, -3, 3, -3, 3, -3, 3, 1, 0,
       "out = (self == other) as bool; inputs are integer-valued in [-3, 3] and 30% of other's elements "
       "are copies of self's, so both outcomes occur; " MODES_TEXT,
       "the public benchmark has no test; kgb uses the standard binary grid with forced ties");
BINARY(le, KGB_ATEN_FLOAT_DTYPES, "self:in other:in(.Tensor)|scalar(.Scalar) out:out(bool)",
       B_GRIDS(KGB_ATEN_FLOAT_DTYPES), f_le, BF_BOOL_OUT | BF_TIES,
       -2, 2, -2, 2, 0, 0, 0, 0, 0.25, 36,
       "out = (self <= other) as bool; 30% of other's elements equal self's (ties); " MODES_TEXT,
       DEV_GRID "; ties are forced so that <= and < differ");
BINARY(fmax, KGB_ATEN_FLOAT_DTYPES, "self:in other:in out:out",
       B_GRIDS_T(KGB_ATEN_FLOAT_DTYPES), f_fmax, BF_NANS,
       -2, 2, -2, 2, 0, 0, 0, 0, 0.25, 18,
       "out = fmax(self, other): the larger value, ignoring NaN (NaN only where both are NaN); 3% of "
       "the elements of each tensor input are NaN; " MODES_TEXT_T,
       DEV_GRID_T "; NaN inputs are injected since NaN handling is what distinguishes fmax from maximum");
BINARY(floor_divide, "f32 i16 i32 i64", "self:in other:in(.default)|scalar(.Scalar) out:out",
       AS_GRIDS({ B_TGRIDS("default", "f32 i16 i32 i64"), B_SGRID("Scalar", "f32 i16 i32 i64") }),
       f_floor_divide, BF_SIGNFLIP | BF_INTVAL,
       -100, 100, 1, 30, -1000, 1000, 1, 30, -7, 20,
       "out = floor(self / other) (Python //, rounding toward minus infinity, also for negative "
       "operands); divisors are non-zero integers of random sign; float inputs are integer-valued; exact "
       "for integers; overloads .default (other a tensor: same, row, col, 0-d; self also transposed or "
       "strided) and .Scalar (other a Python scalar, -7)",
       DEV_GRID);
BINARY(heaviside, KGB_ATEN_FLOAT_DTYPES, "self:in values(other):in out:out",
       B_GRIDS_T(KGB_ATEN_FLOAT_DTYPES), f_heaviside, BF_INT_SELF,
       0, 0, 0, 0, 0, 0, 0, 0, 0.5, 18,
       "out = 0 where self < 0, other (the 'values' argument) where self == 0, 1 where self > 0; self "
       "is drawn from the integers -2..2 so that zeros are frequent; " MODES_TEXT_T,
       DEV_GRID_T);
BINARY(logaddexp2, KGB_ATEN_FLOAT_DTYPES, "self:in other:in out:out",
       B_GRIDS_T(KGB_ATEN_FLOAT_DTYPES), f_logaddexp2, 0,
       -10, 10, -10, 10, 0, 0, 0, 0, 0.5, 18,
       "out = log2(2^self + 2^other), computed without overflow; inputs from [-10, 10); " MODES_TEXT_T,
       DEV_GRID_T);

/* pow: tensor-tensor, tensor-scalar (several exponents) and scalar-tensor. */
static const binary_def_t def_pow = {
	.op = {
		.name = "pow",
		.source = "aten",
		.category = "elementwise-binary",
		.dtypes = KGB_ATEN_FLOAT_DTYPES,
		.datasets = KGB_DS_ATEN,
		.summary = "out = self ^ exponent: .Tensor_Tensor (base in [0.5, 3), exponent in [-2, 2.5), same, "
		           "row, col or 0-d exponent, self also transposed or strided), .Tensor_Scalar (exponents 2 "
		           "and 3 on signed bases; -1, 0.5 and 1.7 on bases in [0.5, 3)) and .Scalar (base 1.75, "
		           "the tensor is the exponent, named other)",
		.signature = "self:in(.Tensor_Tensor, .Tensor_Scalar)|scalar(.Scalar) "
		             "exponent(other):in(.Tensor_Tensor, .Scalar)|scalar(.Tensor_Scalar) out:out",
		.grids = {
			B_TGRIDS("Tensor_Tensor", KGB_ATEN_FLOAT_DTYPES),
			B_SGRID("Tensor_Scalar", KGB_ATEN_FLOAT_DTYPES, EXPONENTS),
			{ { { "overload", "Scalar" }, { "shape", B_SHAPES }, { "dtype", KGB_ATEN_FLOAT_DTYPES },
			    { "mode", "rscalar" } } },
		},
		.setup = setup_binary,
		.ref = ref_binary,
		.declared_cases = 162,
		.deviation = "the public tensor-scalar test is broken (calls .imag on a real tensor); kgb tests all "
		             "three overloads with exponents chosen so that the result is real and finite",
		.gen_inputs = gen_binary,
	},
	.f = f_pow, .flags = 0,
	.alo = 0.5, .ahi = 3.0, .blo = -2.0, .bhi = 2.5, .sval = 1.75,
};

/* ---- masked_fill_ ---- */

/* self (INOUT), mask (bool, same shape or broadcast), value (scalar or 0-d tensor). */
static int setup_masked_fill(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const char *mode = kgb_case_pstr(c, "mask", "same");
	const char *vmode = kgb_case_pstr(c, KGB_OVERLOAD_PARAM, "Scalar");
	const char *layout = kgb_case_pstr(c, "layout", NULL);
	int64_t dims[KGB_MAX_DIMS], md[KGB_MAX_DIMS];
	int nd = kgb_aten_shape(c, "shape", dims), mnd = nd;
	kgb_tensor_t *m;

	if (!kgb_aten_tensor(c, "self", KGB_ROLE_INOUT, dt, nd, dims, layout, err, errlen))
		return -1;
	memcpy(md, dims, sizeof md);
	if (strcmp(mode, "row") == 0) {
		mnd = 1;
		md[0] = dims[nd - 1];
	} else if (strcmp(mode, "col") == 0) {
		md[nd - 1] = 1;
	}
	m = kgb_aten_tensor(c, "mask", KGB_ROLE_IN, KGB_DT_BOOL, mnd, md,
	                    strcmp(mode, "same") == 0 ? layout : NULL, err, errlen);
	if (!m)
		return -1;
	kgb_aten_gen(m, KGB_GEN_BOOL, 0.4, 0);
	if (strcmp(vmode, "Tensor") == 0) {
		kgb_case_add_tensor(c, "value", KGB_ROLE_IN, dt, 0, dims);
		c->iparam[0] = 2;
	} else {
		kgb_scalar_t *s = kgb_case_add_scalar(c, "value", KGB_DT_F32, -3.375);
		c->iparam[0] = -1;
		c->fparam[0] = kgb_dtype_round(dt, s->value);
	}
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int ref_masked_fill(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *s = &c->t[0], *m = &c->t[1];
	int64_t idx[KGB_MAX_DIMS] = { 0 };
	double v = c->iparam[0] >= 0 ? b->v[2][0] : c->fparam[0];

	do {
		if (b->v[1][kgb_aten_bcast_off(m, s->ndim, idx)] != 0)
			b->v[0][kgb_tensor_offset(s, idx)] = v;
	} while (kgb_index_next(s, idx));
	return 0;
}

/* At least one masked and one unmasked element, so the output is never constant. */
static void gen_masked_fill(const kgb_case_t *c, kgb_rng_t *rng, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *m = &c->t[1];

	(void)rng;
	if (m->numel >= 2) {
		b->v[1][0] = 1;
		b->v[1][kgb_tensor_flat_offset(m, m->numel - 1)] = 0;
	}
}

static const kgb_op_t op_masked_fill_ = {
	.name = "masked_fill_",
	.source = "aten",
	.category = "elementwise-binary",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "in place: self[i] = value where mask[i] (bool, 40% true) else unchanged; mask of self's "
	           "shape or broadcast (row / col); overloads .Scalar (value a Python scalar, -3.375, rounded to "
	           "self's dtype) and .Tensor (value a 0-d tensor of self's dtype)",
	.signature = "self:inout mask:in(bool) value:scalar(.Scalar)|in(0-d, .Tensor)",
	.grids = {
		{ { { "overload", "Scalar Tensor" }, { "shape", B_SHAPES }, { "dtype", KGB_ATEN_FLOAT_DTYPES },
		    { "mask", "same" } } },
		{ { { "overload", "Scalar Tensor" }, { "shape", B_SHAPES_ND }, { "dtype", KGB_ATEN_FLOAT_DTYPES },
		    { "mask", "row col" } } },
		{ { { "overload", "Scalar Tensor" }, { "shape", B_SHAPES_LAY }, { "dtype", KGB_ATEN_FLOAT_DTYPES },
		    { "mask", "same" }, { "layout", "transposed strided" } } },
	},
	.setup = setup_masked_fill,
	.ref = ref_masked_fill,
	.gen_inputs = gen_masked_fill,
	.inplace = true,
	.declared_cases = 162,
	.deviation = "kgb's shape list x broadcast masks x scalar/0-d values x layouts; fewer cases than the "
	             "public 162, which repeat shapes",
};

/* ---- prelu ---- */

static int setup_prelu(kgb_case_t *c, char *err, size_t errlen)
{
	kgb_dtype_t dt = kgb_aten_dtype(c, "dtype", KGB_DT_F32);
	const char *wm = kgb_case_pstr(c, "weight", "channel");
	int64_t dims[KGB_MAX_DIMS], wd[1];
	int nd = kgb_aten_shape(c, "shape", dims);

	if (!kgb_aten_tensor(c, "self", KGB_ROLE_IN, dt, nd, dims, kgb_case_pstr(c, "layout", NULL), err,
	                     errlen))
		return -1;
	wd[0] = strcmp(wm, "channel") == 0 && nd >= 2 ? dims[1] : 1;
	kgb_aten_gen(kgb_case_add_tensor(c, "weight", KGB_ROLE_IN, dt, 1, wd), KGB_GEN_UNIFORM, 0.05, 0.6);
	kgb_case_add_tensor(c, "out", KGB_ROLE_OUT, dt, nd, dims);
	kgb_case_set_sym(c, "C", wd[0]);
	kgb_aten_finish(c, 1, KGB_ATEN_TIMED_NUMEL);
	return 0;
}

static int ref_prelu(const kgb_case_t *c, kgb_hostbufs_t *b)
{
	const kgb_tensor_t *x = &c->t[0], *w = &c->t[1], *o = &c->t[2];
	int64_t idx[KGB_MAX_DIMS] = { 0 };

	do {
		double v = b->v[0][kgb_tensor_offset(x, idx)];
		int64_t ch = w->shape[0] > 1 ? idx[1] : 0;
		double a = b->v[1][(size_t)(ch * w->stride[0])];
		b->v[2][kgb_tensor_offset(o, idx)] = v >= 0 ? v : a * v;
	} while (kgb_index_next(o, idx));
	return 0;
}

static const kgb_op_t op_prelu = {
	.name = "prelu",
	.source = "aten",
	.category = "elementwise-binary",
	.dtypes = KGB_ATEN_FLOAT_DTYPES,
	.datasets = KGB_DS_ATEN,
	.summary = "out = self where self >= 0, weight[c] * self elsewhere, c the index along dim 1 (the "
	           "channel dim) when weight has C = self.size(1) entries, or one shared weight (numel 1)",
	.signature = "self:in weight:in out:out",
	.grids = {
		{ { { "shape", "[7] [1000] [33,65] [3,1,17] [2,3,4,5,6] [8,64,56,56] [64,1024,16]" },
		    { "dtype", KGB_ATEN_FLOAT_DTYPES }, { "weight", "single channel" } } },
		{ { { "shape", "[33,65] [2,3,4,5,6]" }, { "dtype", KGB_ATEN_FLOAT_DTYPES },
		    { "weight", "channel" }, { "layout", "transposed strided" } } },
	},
	.setup = setup_prelu,
	.ref = ref_prelu,
	.declared_cases = 36,
	.deviation = "adds 1-d, 5-d and non-contiguous inputs, and both weight forms",
};

const kgb_op_t *const kgb_ops_aten_elementwise_binary[] = {
	&def_add_.op, &def_div.op, &def_div_.op, &def_eq.op, &def_floor_divide.op, &def_fmax.op,
	&def_heaviside.op,
	&def_le.op, &def_logaddexp2.op, &op_masked_fill_, &def_mul.op, &def_pow.op, &op_prelu,
	&def_rsub.op, &def_sub.op,
	NULL,
};
