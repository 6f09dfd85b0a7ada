/* scatter with its four overloads: .src and .reduce take a src tensor, .value and
 * .value_reduce a Python scalar (V_T 0); reduce is 0 (none), 1 (add) or 2 (multiply).
 * scatter_copy_k copies self (any layout) into out; scatter_k then walks index line by
 * line along dim: every write of a line lands in the same line of out, so one
 * work-item per line keeps repeated indices (the reduce overloads) free of races. */
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

__kernel void scatter_copy_k(__global const T_self *self, __global T_out *out, int n, DIMS(n), DIMS(s), DIMS(o))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KD] = ARR(n), ss[KD] = ARR(s), so[KD] = ARR(o);
	kit_t it;
	kit_init(&it, nn, ss, so, so);
	kit_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		STORE_out(out, it.off[1], LOAD_self(self, it.off[0]));
		kit_next(&it);
	}
}

/* Compiled only with V_T defined (the scatter_k entries of the plan): the copy kernel's
 * program must not name src, which the .value overloads do not have. */
#ifdef V_T
/* lines: the number of index lines (index.numel / index.size(dim)); in / ix: index's
 * sizes and strides; rs: src's strides; os: out's strides. */
__kernel void scatter_k(__global const T_index *index,
#if V_T
                        float value,
#else
                        __global const T_src *src,
#endif
                        __global T_out *out, int lines, int dim, int reduce, DIMS(in), DIMS(ix), DIMS(rs),
                        DIMS(os))
{
	long line = get_global_id(0);
	if (line >= lines)
		return;
	int n_[KD] = ARR(in), xs[KD] = ARR(ix), ss[KD] = ARR(rs), o_[KD] = ARR(os);
	long xoff = 0, soff = 0, ooff = 0, r = line;
	for (int d = KD - 1; d >= 0; d--) {
		if (d == dim)
			continue;
		int q = (int)(r % n_[d]);
		r /= n_[d];
		xoff += (long)q * xs[d];
		soff += (long)q * ss[d];
		ooff += (long)q * o_[d];
	}
	for (int j = 0; j < n_[dim]; j++) {
		long t = (long)LOAD_index(index, xoff + (long)j * xs[dim]);
		long dst = ooff + t * o_[dim];
#if V_T
		acc_t v = (acc_t)value;
#else
		acc_t v = (acc_t)LOAD_src(src, soff + (long)j * ss[dim]);
#endif
		if (reduce == 1)
			v = (acc_t)LOAD_out(out, dst) + v;
		else if (reduce == 2)
			v = (acc_t)LOAD_out(out, dst) * v;
		STORE_out(out, dst, v);
	}
}
#endif
