/* amin: out = the minimum of self over the dims in mask (exact); any rank, layout,
 * keepdim. The reduced dims are walked by the prelude's reduction helper (KGB_RED_*). */
__kernel void amin_k(__global const T_self *self, __global T_out *out, KGB_RED_PARAMS)
{
	KGB_RED_BEGIN(r);
	kgb_acc_t m = INFINITY;
	for (int i = 0; i < rlen; i++, kgb_it_next(&r.in)) {
		kgb_acc_t v = LOAD_self(self, r.base + r.in.off[0]);
		m = v < m ? v : m;
	}
	STORE_out(out, r.out, m);
}
