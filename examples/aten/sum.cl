/* sum: out = the sum of self over the reduced dims (the last one for a 2-d self), in double.
 * One work-item per output element; the prelude's reduction helper (KGB_RED_*) finds the
 * output element and walks the reduced dims of self in row-major order. */
__kernel void sum_k(__global const T_self *self, __global T_out *out, KGB_RED_PARAMS)
{
	KGB_RED_BEGIN(r);
	kgb_acc_t acc = 0;
	for (int i = 0; i < rlen; i++, kgb_it_next(&r.in))
		acc += LOAD_self(self, r.base + r.in.off[0]);
	STORE_out(out, r.out, acc);
}
