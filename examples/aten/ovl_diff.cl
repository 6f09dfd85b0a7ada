/* diff: the n-th forward difference (n = 1 or 2) along dim of cat(prepend, self,
 * append); prepend and append are optional (HAS_PRE, HAS_APP pick the kernel variant).
 * One work-item per output element; the line is read through x(), which maps a
 * position of the concatenation to the tensor holding it. */
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

typedef struct {
	long poff, soff, aoff;   /* offsets of the line's first element in each tensor */
	int ps, ss, as;          /* strides along dim */
	int np, ns;              /* lengths along dim of prepend and self */
} line_t;

static acc_t x_at(const line_t *l, int k, __global const T_self *self
#if HAS_PRE
                  , __global const T_prepend *prepend
#endif
#if HAS_APP
                  , __global const T_append *append
#endif
                  )
{
#if HAS_PRE
	if (k < l->np)
		return (acc_t)LOAD_prepend(prepend, l->poff + (long)k * l->ps);
#endif
	k -= l->np;
	if (k < l->ns)
		return (acc_t)LOAD_self(self, l->soff + (long)k * l->ss);
	k -= l->ns;
#if HAS_APP
	return (acc_t)LOAD_append(append, l->aoff + (long)k * l->as);
#else
	return 0;
#endif
}

#if HAS_PRE && HAS_APP
#define XARGS self, prepend, append
#elif HAS_PRE
#define XARGS self, prepend
#elif HAS_APP
#define XARGS self, append
#else
#define XARGS self
#endif

__kernel void diff_k(__global const T_self *self,
#if HAS_PRE
                     __global const T_prepend *prepend, int np, DIMS(pst),
#endif
#if HAS_APP
                     __global const T_append *append, DIMS(ast),
#endif
                     __global T_out *out, int n, int order, int dim, DIMS(on), DIMS(ost), DIMS(sn), DIMS(sst))
{
	long i = get_global_id(0);
	if (i >= n)
		return;
	int on_[KD] = ARR(on), os_[KD] = ARR(ost), sn_[KD] = ARR(sn), ss_[KD] = ARR(sst);
	line_t l = { 0, 0, 0, 0, 0, 0, 0, 0 };
#if HAS_PRE
	int ps_[KD] = ARR(pst);
	l.np = np;
	l.ps = ps_[dim];
#endif
#if HAS_APP
	int as_[KD] = ARR(ast);
	l.as = as_[dim];
#endif
	l.ss = ss_[dim];
	l.ns = sn_[dim];
	long r = i, ooff = 0;
	int j = 0;
	for (int d = KD - 1; d >= 0; d--) {
		int q = (int)(r % on_[d]);
		r /= on_[d];
		ooff += (long)q * os_[d];
		if (d == dim) {
			j = q;
			continue;
		}
		l.soff += (long)q * ss_[d];
#if HAS_PRE
		l.poff += (long)q * ps_[d];
#endif
#if HAS_APP
		l.aoff += (long)q * as_[d];
#endif
	}
	acc_t v;
	if (order == 1)
		v = x_at(&l, j + 1, XARGS) - x_at(&l, j, XARGS);
	else
		v = (x_at(&l, j + 2, XARGS) - x_at(&l, j + 1, XARGS)) - (x_at(&l, j + 1, XARGS) - x_at(&l, j, XARGS));
	STORE_out(out, ooff, v);
}
