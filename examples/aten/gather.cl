/* gather: out[i][j][k] = self[index[i][j][k]][j][k] along dim; out has index's shape.
 * The iterator walks out's index space with the strides of index, out and self (self's
 * stride along dim set to 0: that coordinate comes from the index value). */
#define EPT 8   /* elements per work-item */

__kernel void gather_k(__global const T_self *self, __global const T_index *index, __global T_out *out,
                       int n, int dim, KGB_DIMS(n), KGB_DIMS(i), KGB_DIMS(o), KGB_DIMS(s))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), si[KGB_KD] = KGB_ARR(i), so[KGB_KD] = KGB_ARR(o), ss[KGB_KD] = KGB_ARR(s);
	long sdim = ss[dim];
	ss[dim] = 0;
	kgb_it_t it, is;
	kgb_it_init(&it, nn, si, so, so);
	kgb_it_seek(&it, base);
	/* a separate iterator for self: kgb_it_init drops size-1 dims, which is fine for all three */
	kgb_it_init(&is, nn, ss, ss, ss);
	kgb_it_seek(&is, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		long ix = LOAD_index(index, it.off[0]);
		STORE_out(out, it.off[1], LOAD_self(self, is.off[0] + ix * sdim));
		kgb_it_next(&it);
		kgb_it_next(&is);
	}
}
