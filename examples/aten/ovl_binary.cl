/* The elementwise binary operators with ATen overloads: sub, rsub, add_, mul, div, div_,
 * eq, le, fmax, floor_divide, heaviside, logaddexp2, pow. One kernel, specialised by
 * defines: OP (the operation), A_T / B_T (self / other is a tensor, else a Python
 * scalar passed by value), INPLACE (self is the output: add_, div_) and RM (div's
 * rounding mode). The plans pick the kernel variant of each case's overload with "when".
 * Arithmetic is in double (fp64 on the device, else float); the store rounds once. */
/* The strided iteration (kgb_it_*, kgb_bcast, kgb_acc_t, KGB_DIMS, KGB_ARR) is the
 * prelude's: the plan defines KGB_STRIDED (docs/candidate-format.md, "Strided helpers"). */
#define EPT 8   /* elements per work-item */

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

static kgb_acc_t fn(kgb_acc_t a, kgb_acc_t b, kgb_acc_t alpha)
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
	kgb_acc_t q = a / b;
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
	kgb_acc_t m = fmax(a, b);
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
                    float alpha, KGB_BIN_PARAMS)
{
	KGB_BIN_BEGIN(it, base, EPT);
	for (int k = 0; k < EPT && base + k < n; k++) {
#if A_T
		kgb_acc_t a = (kgb_acc_t)LOAD_self(self, it.off[0]);
#else
		kgb_acc_t a = (kgb_acc_t)self_s;
#endif
#if B_T
		kgb_acc_t b = (kgb_acc_t)LOAD_other(other, it.off[1]);
#else
		kgb_acc_t b = (kgb_acc_t)other_s;
#endif
		STORE_R(it.off[2], fn(a, b, (kgb_acc_t)alpha));
		kgb_it_next(&it);
	}
}
