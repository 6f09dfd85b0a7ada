/* reshape: out = self's elements in row-major order, laid out in out's shape (a
 * materialised reshape of any self layout); also unsqueeze, which keeps the same order. */
#define EPT 8   /* elements per work-item */

/* Two iterators in step: one over self's shape and strides, one over out's. */
__kernel void reshape_k(__global const T_self *self, __global T_out *out, int n, KGB_DIMS(sn), KGB_DIMS(ss), KGB_DIMS(on),
                   KGB_DIMS(os))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int snn[KGB_KD] = KGB_ARR(sn), sss[KGB_KD] = KGB_ARR(ss), onn[KGB_KD] = KGB_ARR(on), oss[KGB_KD] = KGB_ARR(os);
	kgb_it_t is, io;
	kgb_it_init(&is, snn, sss, sss, sss);
	kgb_it_seek(&is, base);
	kgb_it_init(&io, onn, oss, oss, oss);
	kgb_it_seek(&io, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		STORE_out(out, io.off[0], LOAD_self(self, is.off[0]));
		kgb_it_next(&is);
		kgb_it_next(&io);
	}
}
