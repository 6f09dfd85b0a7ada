/* diff: the n-th forward difference (n = 1 or 2) along dim of cat(prepend, self,
 * append); prepend and append are optional (HAS_PRE, HAS_APP pick the kernel variant).
 * One work-item per output element; the line is read through x(), which maps a
 * position of the concatenation to the tensor holding it. */
/* The strided iteration (kgb_it_*, kgb_bcast, kgb_acc_t, KGB_DIMS, KGB_ARR) is the
 * prelude's: the plan defines KGB_STRIDED (docs/candidate-format.md, "Strided helpers"). */

typedef struct {
	long poff, soff, aoff;   /* offsets of the line's first element in each tensor */
	int ps, ss, as;          /* strides along dim */
	int np, ns;              /* lengths along dim of prepend and self */
} line_t;

static kgb_acc_t x_at(const line_t *l, int k, __global const T_self *self
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
		return (kgb_acc_t)LOAD_prepend(prepend, l->poff + (long)k * l->ps);
#endif
	k -= l->np;
	if (k < l->ns)
		return (kgb_acc_t)LOAD_self(self, l->soff + (long)k * l->ss);
	k -= l->ns;
#if HAS_APP
	return (kgb_acc_t)LOAD_append(append, l->aoff + (long)k * l->as);
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
                     __global const T_prepend *prepend, int np, KGB_DIMS(pst),
#endif
#if HAS_APP
                     __global const T_append *append, KGB_DIMS(ast),
#endif
                     __global T_out *out, int n, int order, int dim, KGB_DIMS(on), KGB_DIMS(ost), KGB_DIMS(sn), KGB_DIMS(sst))
{
	long i = get_global_id(0);
	if (i >= n)
		return;
	int on_[KGB_KD] = KGB_ARR(on), os_[KGB_KD] = KGB_ARR(ost), sn_[KGB_KD] = KGB_ARR(sn), ss_[KGB_KD] = KGB_ARR(sst);
	line_t l = { 0, 0, 0, 0, 0, 0, 0, 0 };
#if HAS_PRE
	int ps_[KGB_KD] = KGB_ARR(pst);
	l.np = np;
	l.ps = ps_[dim];
#endif
#if HAS_APP
	int as_[KGB_KD] = KGB_ARR(ast);
	l.as = as_[dim];
#endif
	l.ss = ss_[dim];
	l.ns = sn_[dim];
	long r = i, ooff = 0;
	int j = 0;
	for (int d = KGB_KD - 1; d >= 0; d--) {
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
	kgb_acc_t v;
	if (order == 1)
		v = x_at(&l, j + 1, XARGS) - x_at(&l, j, XARGS);
	else
		v = (x_at(&l, j + 2, XARGS) - x_at(&l, j + 1, XARGS)) - (x_at(&l, j + 1, XARGS) - x_at(&l, j, XARGS));
	STORE_out(out, ooff, v);
}
