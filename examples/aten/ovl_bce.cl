/* binary_cross_entropy_with_logits: l = w (pw t softplus(-x) + (1 - t) softplus(x)),
 * weight and pos_weight optional (HAS_W, HAS_PW pick the kernel variant), 1-d along
 * self's last dim (or 0-d). bce_none_k writes l elementwise; bce_reduce_k sums it in one
 * work-group of 256 (per-item partial sums in double, then a tree in local memory) and
 * writes the mean (reduction 1) or the sum (2). */
/* The strided iteration (kgb_it_*, kgb_bcast, kgb_acc_t, KGB_DIMS, KGB_ARR) is the
 * prelude's: the plan defines KGB_STRIDED (docs/candidate-format.md, "Strided helpers"). */
#define EPT 8   /* elements per work-item */

static kgb_acc_t softplus(kgb_acc_t z)
{
	return fmax(z, (kgb_acc_t)0) + log1p(exp(-fabs(z)));
}

#define WARGS_DECL                                                                                  \
	__global const T_self *self, __global const T_target *target WARG_W WARG_PW
#if HAS_W
#define WARG_W , __global const T_weight *weight, int wstr
#define WPASS_W , weight, wstr
#else
#define WARG_W
#define WPASS_W
#endif
#if HAS_PW
#define WARG_PW , __global const T_pos_weight *pos_weight, int pwstr
#define WPASS_PW , pos_weight, pwstr
#else
#define WARG_PW
#define WPASS_PW
#endif

/* the loss at self offset xo, target offset to, last-dim index c */
static kgb_acc_t loss_at(WARGS_DECL, long xo, long to, int c)
{
	kgb_acc_t x = (kgb_acc_t)LOAD_self(self, xo), t = (kgb_acc_t)LOAD_target(target, to), w = 1, pw = 1;
#if HAS_W
	w = (kgb_acc_t)LOAD_weight(weight, (long)c * wstr);
#endif
#if HAS_PW
	pw = (kgb_acc_t)LOAD_pos_weight(pos_weight, (long)c * pwstr);
#endif
	return w * (pw * t * softplus(-x) + (1 - t) * softplus(x));
}

/* Element r (row-major over the sizes nn) at off[0] in self (strides xs), off[1] in target
 * (ts) and off[2] in out (os); returns its index along dim `last`. */
static int locate(long r, int last, const int *nn, const int *xs, const int *ts, const int *os, long *off)
{
	int c = 0;
	off[0] = off[1] = off[2] = 0;
	for (int d = KGB_KD - 1; d >= 0; d--) {
		int q = (int)(r % nn[d]);
		r /= nn[d];
		off[0] += (long)q * xs[d];
		off[1] += (long)q * ts[d];
		off[2] += (long)q * os[d];
		if (d == last)
			c = q;
	}
	return c;
}

/* sizes n (self's), strides of self (xs) and target (ts); last = index of self's last dim */
__kernel void bce_none_k(WARGS_DECL, __global T_out *out, int n, int last, KGB_DIMS(n), KGB_DIMS(xs), KGB_DIMS(ts), KGB_DIMS(os))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), xs_[KGB_KD] = KGB_ARR(xs), ts_[KGB_KD] = KGB_ARR(ts), os_[KGB_KD] = KGB_ARR(os);
	for (int k = 0; k < EPT && base + k < n; k++) {
		long off[3];
		int c = locate(base + k, last, nn, xs_, ts_, os_, off);
		STORE_out(out, off[2], loss_at(self, target WPASS_W WPASS_PW, off[0], off[1], c));
	}
}

__kernel void bce_reduce_k(WARGS_DECL, __global T_out *out, int n, int last, int reduction, KGB_DIMS(n), KGB_DIMS(xs),
                           KGB_DIMS(ts))
{
	__local kgb_acc_t part[256];
	int lid = get_local_id(0);
	int nn[KGB_KD] = KGB_ARR(n), xs_[KGB_KD] = KGB_ARR(xs), ts_[KGB_KD] = KGB_ARR(ts);
	kgb_acc_t s = 0;
	for (long i = lid; i < n; i += 256) {
		long off[3];
		int c = locate(i, last, nn, xs_, ts_, ts_, off);   /* no out offsets: off[2] unused */
		s += loss_at(self, target WPASS_W WPASS_PW, off[0], off[1], c);
	}
	part[lid] = s;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int h = 128; h > 0; h >>= 1) {
		if (lid < h)
			part[lid] += part[lid + h];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0)
		STORE_out(out, 0, reduction == 1 ? part[0] / (kgb_acc_t)n : part[0]);
}
