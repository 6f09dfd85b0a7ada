/* select: out = self.select(dim, index) (a negative index counts from the end),
 * materialised: out's dims are self's without dim, read through self's strides. */
#define EPT 8   /* elements per work-item */

__kernel void select_k(__global const T_self *self, __global T_out *out, int n, int dim, long index,
                       KGB_DIMS(sn), KGB_DIMS(s), KGB_DIMS(on), KGB_DIMS(o))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int snn[KGB_KD] = KGB_ARR(sn), ss[KGB_KD] = KGB_ARR(s), onn[KGB_KD] = KGB_ARR(on), so[KGB_KD] = KGB_ARR(o);
	int rs[KGB_KD];
	for (int d = 0, k = 0; d < KGB_KD; d++) {
		if (d == dim)
			continue;
		rs[k++] = ss[d];
	}
	rs[KGB_KD - 1] = 0;
	if (index < 0)
		index += snn[dim];
	long off0 = index * ss[dim];
	kgb_it_t it;
	kgb_it_init(&it, onn, rs, so, so);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		STORE_out(out, it.off[1], LOAD_self(self, off0 + it.off[0]));
		kgb_it_next(&it);
	}
}
