/* fill_ and masked_fill_ with their .Scalar and .Tensor overloads: the value comes by
 * value (V_T 0) or from a 0-d tensor named value (V_T 1). masked_fill_ (MASKED 1) writes
 * only where mask (bool, broadcast to self) is set. self is written in place, in its
 * own layout; gaps of a strided self are left alone. */
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

__kernel void fill_k(__global T_self *self,
#if MASKED
                     __global const T_mask *mask,
#endif
#if V_T
                     __global const T_value *value,
#else
                     float value_s,
#endif
                     int n, int ond, DIMS(n), DIMS(o)
#if MASKED
                     , int mnd, DIMS(mn), DIMS(ms)
#endif
                     )
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KD] = ARR(n), so[KD] = ARR(o), em[KD] = { 0, 0, 0, 0, 0, 0 };
#if MASKED
	int mn_[KD] = ARR(mn), ms_[KD] = ARR(ms);
	kbcast(ond, mnd, mn_, ms_, em);
#endif
#if V_T
	acc_t v = (acc_t)LOAD_value(value, 0);
#else
	acc_t v = (acc_t)value_s;
#endif
	kit_t it;
	kit_init(&it, nn, so, em, so);
	kit_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
#if MASKED
		if (LOAD_mask(mask, it.off[1]))
			STORE_self(self, it.off[0], v);
#else
		STORE_self(self, it.off[0], v);
#endif
		kit_next(&it);
	}
}
