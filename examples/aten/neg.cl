/* neg: out = -self, any rank and layout. */
#define EPT 8   /* elements per work-item */

#define FN(x) (-(x))


__kernel void neg_k(__global const T_self *self, __global T_out *out, int n,
                    KGB_DIMS(n), KGB_DIMS(a), KGB_DIMS(o))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), sa[KGB_KD] = KGB_ARR(a), so[KGB_KD] = KGB_ARR(o);
	kgb_it_t it;
	kgb_it_init(&it, nn, sa, so, so);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		STORE_out(out, it.off[1], FN(LOAD_self(self, it.off[0])));
		kgb_it_next(&it);
	}
}
