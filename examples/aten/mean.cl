/* mean: out = the mean of self over the dims in mask, accumulated in double; any rank and
 * layout. The reduced dims are walked by the prelude's reduction helper (KGB_RED_*). */
__kernel void mean_k(__global const T_self *self, __global T_out *out, KGB_RED_PARAMS)
{
	KGB_RED_BEGIN(r);
	kgb_acc_t total = 0;
	for (int i = 0; i < rlen; i++, kgb_it_next(&r.in))
		total += LOAD_self(self, r.base + r.in.off[0]);
	STORE_out(out, r.out, total / (kgb_acc_t)rlen);
}
