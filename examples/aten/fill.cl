/* fill: out = value (passed in double, converted by the store of out's dtype) on every
 * element of out's (size, stride) view; the gaps of a strided view stay untouched. The
 * kernel of the creation operators (full, zeros, zeros_like, ones_like, new_ones,
 * empty_strided, new_empty_strided, scalar_tensor); each plan gives the value. */
#define EPT 8   /* elements per work-item */

/* Writes value to every element of the view of out (its own sizes and strides), so
 * the gaps of a strided view stay untouched. */
__kernel void fill_k(__global T_out *out, int n, double value, KGB_DIMS(n), KGB_DIMS(s))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), ss[KGB_KD] = KGB_ARR(s);
	kgb_it_t it;
	kgb_it_init(&it, nn, ss, ss, ss);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		STORE_out(out, it.off[0], value);
		kgb_it_next(&it);
	}
}
