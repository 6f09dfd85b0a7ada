/* prelu: out = self where self >= 0, else weight[c] * self, c the index along dim 1 (or
 * one shared weight). The weight is read through a stride that is non-zero only along
 * dim 1, so any rank and layout of self works. */
#define EPT 8   /* elements per work-item */

__kernel void prelu_k(__global const T_self *self, __global const T_weight *weight, __global T_out *out,
                      int n, int wstride1, KGB_DIMS(n), KGB_DIMS(a), KGB_DIMS(o))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), sa[KGB_KD] = KGB_ARR(a), so[KGB_KD] = KGB_ARR(o);
	int sw[KGB_KD] = { 0, wstride1, 0, 0, 0, 0 };
	kgb_it_t it;
	kgb_it_init(&it, nn, sa, sw, so);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		kgb_acc_t x = LOAD_self(self, it.off[0]);
		kgb_acc_t w = LOAD_weight(weight, it.off[1]);
		STORE_out(out, it.off[2], x >= 0 ? x : w * x);
		kgb_it_next(&it);
	}
}
