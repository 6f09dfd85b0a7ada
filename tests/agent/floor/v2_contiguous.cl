/* attempt 2 of the agent loop test: every tensor taken as contiguous */
/* floor: out = floor(self) for float dtypes, the identity for int64; any rank and layout. */
#define EPT 8   /* elements per work-item */

#ifdef KGB_DTYPE_self_i64
#define FN(x) (x)
#else
#define FN(x) ((kgb_acc_t)floor((kgb_acc_t)(x)))
#endif


__kernel void floor_k(__global const T_self *self, __global T_out *out, int n,
                    KGB_DIMS(n), KGB_DIMS(a), KGB_DIMS(o))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), sa[KGB_KD] = KGB_ARR(a), so[KGB_KD] = KGB_ARR(o);
	kgb_it_t it;
	kgb_it_init(&it, nn, sa, so, so);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++)
		STORE_out(out, base + k, FN(LOAD_self(self, base + k)));
}
