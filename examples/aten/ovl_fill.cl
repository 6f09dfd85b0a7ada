/* fill_ and masked_fill_ with their .Scalar and .Tensor overloads: the value comes by
 * value (V_T 0) or from a 0-d tensor named value (V_T 1). masked_fill_ (MASKED 1) writes
 * only where mask (bool, broadcast to self) is set. self is written in place, in its
 * own layout; gaps of a strided self are left alone. */
/* The strided iteration (kgb_it_*, kgb_bcast, kgb_acc_t, KGB_DIMS, KGB_ARR) is the
 * prelude's: the plan defines KGB_STRIDED (docs/candidate-format.md, "Strided helpers"). */
#define EPT 8   /* elements per work-item */

__kernel void fill_k(__global T_self *self,
#if MASKED
                     __global const T_mask *mask,
#endif
#if V_T
                     __global const T_value *value,
#else
                     float value_s,
#endif
                     int n, int ond, KGB_DIMS(n), KGB_DIMS(o)
#if MASKED
                     , int mnd, KGB_DIMS(mn), KGB_DIMS(ms)
#endif
                     )
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), so[KGB_KD] = KGB_ARR(o), em[KGB_KD] = { 0, 0, 0, 0, 0, 0 };
#if MASKED
	int mn_[KGB_KD] = KGB_ARR(mn), ms_[KGB_KD] = KGB_ARR(ms);
	kgb_bcast(ond, mnd, mn_, ms_, em);
#endif
#if V_T
	kgb_acc_t v = (kgb_acc_t)LOAD_value(value, 0);
#else
	kgb_acc_t v = (kgb_acc_t)value_s;
#endif
	kgb_it_t it;
	kgb_it_init(&it, nn, so, em, so);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
#if MASKED
		if (LOAD_mask(mask, it.off[1]))
			STORE_self(self, it.off[0], v);
#else
		STORE_self(self, it.off[0], v);
#endif
		kgb_it_next(&it);
	}
}
