/* embedding: out[..., j] = weight[indices[...], j]; indices of any rank (up to 5), out of
 * rank indices.ndim + 1. One work-item per EPT output elements. */
#define EPT 8   /* elements per work-item */

__kernel void embedding_k(__global const T_weight *weight, __global const T_indices *indices,
                          __global T_out *out, int n, int D, int ws0, int ws1, KGB_DIMS(in), KGB_DIMS(is),
                          KGB_DIMS(on), KGB_DIMS(os))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int inn[KGB_KD] = KGB_ARR(in), iss[KGB_KD] = KGB_ARR(is), onn[KGB_KD] = KGB_ARR(on), oss[KGB_KD] = KGB_ARR(os);
	kgb_it_t ii, oi;
	kgb_it_init(&oi, onn, oss, oss, oss);
	kgb_it_seek(&oi, base);
	kgb_it_init(&ii, inn, iss, iss, iss);
	for (int k = 0; k < EPT && base + k < n; k++) {
		long o = base + k;
		int j = (int)(o % D);
		kgb_it_seek(&ii, o / D);
		long row = LOAD_indices(indices, ii.off[0]);
		STORE_out(out, oi.off[0], LOAD_weight(weight, row * ws0 + (long)j * ws1));
		kgb_it_next(&oi);
	}
}
