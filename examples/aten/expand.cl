/* expand: out = self broadcast to out's shape (dims aligned on the right, size-1 dims
 * repeated), materialised; also expand_as (other = out's shape, not read). */
#define EPT 8   /* elements per work-item */

__kernel void expand_k(__global const T_self *self, __global T_out *out, int n, int ond, KGB_DIMS(n), KGB_DIMS(o),
                   int snd, KGB_DIMS(sn), KGB_DIMS(ss))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), so[KGB_KD] = KGB_ARR(o), sn_[KGB_KD] = KGB_ARR(sn), ss_[KGB_KD] = KGB_ARR(ss);
	int es[KGB_KD];
	kgb_bcast(ond, snd, sn_, ss_, es);
	kgb_it_t it;
	kgb_it_init(&it, nn, es, so, so);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		STORE_out(out, it.off[1], LOAD_self(self, it.off[0]));
		kgb_it_next(&it);
	}
}
