/* zero_: in place: every element of self's view = 0; gaps untouched. */
#define EPT 8   /* elements per work-item */

/* Writes value to every element of the view of self (its own sizes and strides), so
 * the gaps of a strided view stay untouched. */
__kernel void zero__k(__global T_self *self, int n, double value, KGB_DIMS(n), KGB_DIMS(s))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), ss[KGB_KD] = KGB_ARR(s);
	kgb_it_t it;
	kgb_it_init(&it, nn, ss, ss, ss);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		STORE_self(self, it.off[0], value);
		kgb_it_next(&it);
	}
}
