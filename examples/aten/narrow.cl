/* narrow: out = self[..., start:start+length, ...] along dim, materialised: out's index
 * space walked with self's strides from the offset of start. */
#define EPT 8   /* elements per work-item */

__kernel void narrow_k(__global const T_self *self, __global T_out *out, int n, int dim, long start,
                       KGB_DIMS(n), KGB_DIMS(s), KGB_DIMS(o))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), ss[KGB_KD] = KGB_ARR(s), so[KGB_KD] = KGB_ARR(o);
	long off0 = start * ss[dim];
	kgb_it_t it;
	kgb_it_init(&it, nn, ss, so, so);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		STORE_out(out, it.off[1], LOAD_self(self, off0 + it.off[0]));
		kgb_it_next(&it);
	}
}
