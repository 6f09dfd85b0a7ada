/* logit: out = log(z / (1 - z)), z = clamp(self, eps, 1 - eps) (bounds in fp32) when eps >= 0. */
#define EPT 8   /* elements per work-item */

static kgb_acc_t logit1(kgb_acc_t x, float eps)
{
	if (eps >= 0.0f) {
		kgb_acc_t lo = (kgb_acc_t)eps, hi = (kgb_acc_t)(1.0f - eps);
		x = x < lo ? lo : x > hi ? hi : x;
	}
	return log(x / (1 - x));
}
#define FN(x) logit1((kgb_acc_t)(x), eps)


__kernel void logit_k(__global const T_self *self, __global T_out *out, int n, float eps,
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
