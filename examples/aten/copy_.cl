/* copy_: in place, self[...] = src converted to self's dtype by its store; src of self's
 * shape or broadcast (right-aligned); self may be strided, its gaps are not written. */
#define EPT 8   /* elements per work-item */

__kernel void copy__k(__global T_self *self, __global const T_src *src, int n, int snd, KGB_DIMS(n),
                      KGB_DIMS(o), int bnd, KGB_DIMS(bn), KGB_DIMS(bs))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), so[KGB_KD] = KGB_ARR(o), bn_[KGB_KD] = KGB_ARR(bn), bs_[KGB_KD] = KGB_ARR(bs);
	int eb[KGB_KD];
	kgb_bcast(snd, bnd, bn_, bs_, eb);
	kgb_it_t it;
	kgb_it_init(&it, nn, so, eb, so);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		STORE_self(self, it.off[0], LOAD_src(src, it.off[1]));
		kgb_it_next(&it);
	}
}
