/* The elementwise binary operators with ATen overloads: sub, rsub, add_, mul, div, div_,
 * eq, le, fmax, floor_divide, heaviside, logaddexp2, pow. One kernel, specialised by
 * defines: OP (the operation), A_T / B_T (self / other is a tensor, else a Python
 * scalar passed by value), INPLACE (self is the output: add_, div_) and RM (div's
 * rounding mode). The plans pick the kernel variant of each case's overload with "when".
 * Arithmetic is in double (fp64 on the device, else float); the store rounds once. */
/* ---- rank-generic strided iteration ----
 * Shapes arrive as six sizes (dims past a tensor's rank have size 1 and stride 0),
 * strides in elements. An iterator walks a row-major index space over up to three
 * tensors at once, keeping only the dims of size > 1. */
#ifdef cl_khr_fp64
typedef double acc_t;
#else
typedef float acc_t;
#endif

#define KD 6
#define DIMS(p) int p##0, int p##1, int p##2, int p##3, int p##4, int p##5
#define ARR(p) { p##0, p##1, p##2, p##3, p##4, p##5 }

typedef struct {
	int nd;
	int n[KD];
	int s[3][KD];
	int id[KD];
	long off[3];
} kit_t;

static void kit_init(kit_t *it, const int *n, const int *s0, const int *s1, const int *s2)
{
	it->nd = 0;
	for (int d = 0; d < KD; d++) {
		if (n[d] == 1)
			continue;
		int k = it->nd++;
		it->n[k] = n[d];
		it->s[0][k] = s0[d];
		it->s[1][k] = s1[d];
		it->s[2][k] = s2[d];
	}
}

/* Position at row-major flat index i. */
static void kit_seek(kit_t *it, long i)
{
	it->off[0] = it->off[1] = it->off[2] = 0;
	for (int k = it->nd - 1; k >= 0; k--) {
		int q = (int)(i % it->n[k]);
		i /= it->n[k];
		it->id[k] = q;
		for (int t = 0; t < 3; t++)
			it->off[t] += (long)q * it->s[t][k];
	}
}

/* Advance to the next flat index. */
static void kit_next(kit_t *it)
{
	for (int k = it->nd - 1; k >= 0; k--) {
		for (int t = 0; t < 3; t++)
			it->off[t] += it->s[t][k];
		if (++it->id[k] < it->n[k])
			return;
		it->id[k] = 0;
		for (int t = 0; t < 3; t++)
			it->off[t] -= (long)it->n[k] * it->s[t][k];
	}
}

/* Strides of a tensor of rank bnd (sizes bn, strides bs) broadcast to an index space of
 * rank ond (dims aligned on the right; size-1 dims repeat). */
static void kbcast(int ond, int bnd, const int *bn, const int *bs, int *eff)
{
	int lead = ond - bnd;
	for (int d = 0; d < KD; d++) {
		int j = d - lead;
		eff[d] = (d < ond && j >= 0 && bn[j] != 1) ? bs[j] : 0;
	}
}

#define EPT 8   /* elements per work-item */
/* ---- end of the iteration helpers ---- */

#define OP_SUB 1
#define OP_RSUB 2
#define OP_ADD 3
#define OP_MUL 4
#define OP_DIV 5
#define OP_EQ 6
#define OP_LE 7
#define OP_FMAX 8
#define OP_FLOORDIV 9
#define OP_HEAVISIDE 10
#define OP_LOGADDEXP2 11
#define OP_POW 12

#define RM_true 0
#define RM_trunc 1
#define RM_floor 2
#ifndef RM
#define RM RM_true
#endif

static acc_t fn(acc_t a, acc_t b, acc_t alpha)
{
#if OP == OP_SUB
	return a - alpha * b;
#elif OP == OP_RSUB
	return b - alpha * a;
#elif OP == OP_ADD
	return a + alpha * b;
#elif OP == OP_MUL
	return a * b;
#elif OP == OP_DIV
	acc_t q = a / b;
#if RM == RM_trunc
	q = trunc(q);
#elif RM == RM_floor
	q = floor(q);
#endif
	return q;
#elif OP == OP_EQ
	return a == b ? 1 : 0;
#elif OP == OP_LE
	return a <= b ? 1 : 0;
#elif OP == OP_FMAX
	return fmax(a, b);
#elif OP == OP_FLOORDIV
	return floor(a / b);
#elif OP == OP_HEAVISIDE
	return a == 0 ? b : (a < 0 ? 0 : 1);
#elif OP == OP_LOGADDEXP2
	acc_t m = fmax(a, b);
	return m + log2(1 + exp2(-fabs(a - b)));
#elif OP == OP_POW
	return pow(a, b);
#else
#error "unknown OP"
#endif
}

#if INPLACE
#define SELF_QUAL
#define STORE_R(i, v) STORE_self(self, i, v)
#else
#define SELF_QUAL const
#define STORE_R(i, v) STORE_out(out, i, v)
#endif

/* The index space is the result's shape (out, or self when INPLACE; sizes n, strides
 * o); self (rank snd) and other (rank bnd) are broadcast to it. A scalar operand has
 * rank 0 and is passed by value. */
__kernel void bin_k(
#if A_T
                    __global SELF_QUAL T_self *self,
#else
                    float self_s,
#endif
#if B_T
                    __global const T_other *other,
#else
                    float other_s,
#endif
#if !INPLACE
                    __global T_out *out,
#endif
                    float alpha, int n, int ond, DIMS(n), DIMS(o),
                    int snd, DIMS(an), DIMS(as), int bnd, DIMS(bn), DIMS(bs))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KD] = ARR(n), so[KD] = ARR(o);
	int an_[KD] = ARR(an), as_[KD] = ARR(as), bn_[KD] = ARR(bn), bs_[KD] = ARR(bs);
	int ea[KD], eb[KD];
	kbcast(ond, snd, an_, as_, ea);
	kbcast(ond, bnd, bn_, bs_, eb);
	kit_t it;
	kit_init(&it, nn, ea, eb, so);
	kit_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
#if A_T
		acc_t a = (acc_t)LOAD_self(self, it.off[0]);
#else
		acc_t a = (acc_t)self_s;
#endif
#if B_T
		acc_t b = (acc_t)LOAD_other(other, it.off[1]);
#else
		acc_t b = (acc_t)other_s;
#endif
		STORE_R(it.off[2], fn(a, b, (acc_t)alpha));
		kit_next(&it);
	}
}
