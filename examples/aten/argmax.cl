/* argmax: out (int64) = the first index of the maximum along the reduced dim (flat index
 * for all dims). The prelude's reduction helper (KGB_RED_*) walks the reduced dims in
 * row-major order, so the counter i is the index along one dim or the flat index. */
__kernel void argmax_k(__global const T_self *self, __global T_out *out, KGB_RED_PARAMS)
{
	KGB_RED_BEGIN(r);
	kgb_acc_t m = -INFINITY;
	long best = 0;
	for (int i = 0; i < rlen; i++, kgb_it_next(&r.in)) {
		kgb_acc_t v = LOAD_self(self, r.base + r.in.off[0]);
		if (v > m) {
			m = v;
			best = i;
		}
	}
	STORE_out(out, r.out, best);
}
