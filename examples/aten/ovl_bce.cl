/* binary_cross_entropy_with_logits: l = w (pw t softplus(-x) + (1 - t) softplus(x)),
 * weight and pos_weight optional (HAS_W, HAS_PW pick the kernel variant), 1-d along
 * self's last dim (or 0-d). bce_none_k writes l elementwise; bce_reduce_k sums it in one
 * work-group of 256 (per-item partial sums in double, then a tree in local memory) and
 * writes the mean (reduction 1) or the sum (2). */
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

static acc_t softplus(acc_t z)
{
	return fmax(z, (acc_t)0) + log1p(exp(-fabs(z)));
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
static acc_t loss_at(WARGS_DECL, long xo, long to, int c)
{
	acc_t x = (acc_t)LOAD_self(self, xo), t = (acc_t)LOAD_target(target, to), w = 1, pw = 1;
#if HAS_W
	w = (acc_t)LOAD_weight(weight, (long)c * wstr);
#endif
#if HAS_PW
	pw = (acc_t)LOAD_pos_weight(pos_weight, (long)c * pwstr);
#endif
	return w * (pw * t * softplus(-x) + (1 - t) * softplus(x));
}

/* sizes n (self's), strides of self (xs) and target (ts); last = index of self's last dim */
__kernel void bce_none_k(WARGS_DECL, __global T_out *out, int n, int last, DIMS(n), DIMS(xs), DIMS(ts), DIMS(os))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KD] = ARR(n), xs_[KD] = ARR(xs), ts_[KD] = ARR(ts), os_[KD] = ARR(os);
	for (int k = 0; k < EPT && base + k < n; k++) {
		long r = base + k, xo = 0, to = 0, oo = 0;
		int c = 0;
		for (int d = KD - 1; d >= 0; d--) {
			int q = (int)(r % nn[d]);
			r /= nn[d];
			xo += (long)q * xs_[d];
			to += (long)q * ts_[d];
			oo += (long)q * os_[d];
			if (d == last)
				c = q;
		}
		STORE_out(out, oo, loss_at(self, target WPASS_W WPASS_PW, xo, to, c));
	}
}

__kernel void bce_reduce_k(WARGS_DECL, __global T_out *out, int n, int last, int reduction, DIMS(n), DIMS(xs),
                           DIMS(ts))
{
	__local acc_t part[256];
	int lid = get_local_id(0);
	int nn[KD] = ARR(n), xs_[KD] = ARR(xs), ts_[KD] = ARR(ts);
	acc_t s = 0;
	for (long i = lid; i < n; i += 256) {
		long r = i, xo = 0, to = 0;
		int c = 0;
		for (int d = KD - 1; d >= 0; d--) {
			int q = (int)(r % nn[d]);
			r /= nn[d];
			xo += (long)q * xs_[d];
			to += (long)q * ts_[d];
			if (d == last)
				c = q;
		}
		s += loss_at(self, target WPASS_W WPASS_PW, xo, to, c);
	}
	part[lid] = s;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int h = 128; h > 0; h >>= 1) {
		if (lid < h)
			part[lid] += part[lid + h];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0)
		STORE_out(out, 0, reduction == 1 ? part[0] / (acc_t)n : part[0]);
}
