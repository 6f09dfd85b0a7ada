/* add: out = self + alpha * other, other broadcast to self's shape; any rank and layout. */
#define EPT 8   /* elements per work-item */

#define FN(a, b) ((kgb_acc_t)(a) + (kgb_acc_t)alpha * (kgb_acc_t)(b))

/* self and other are broadcast (right-aligned) to out's shape. */
__kernel void add_k(__global const T_self *self, __global const T_other *other, __global T_out *out, float alpha,
                    int n, int ond, KGB_DIMS(n), KGB_DIMS(o),
                    int snd, KGB_DIMS(an), KGB_DIMS(as), int bnd, KGB_DIMS(bn), KGB_DIMS(bs))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), so[KGB_KD] = KGB_ARR(o);
	int an_[KGB_KD] = KGB_ARR(an), as_[KGB_KD] = KGB_ARR(as), bn_[KGB_KD] = KGB_ARR(bn), bs_[KGB_KD] = KGB_ARR(bs);
	int ea[KGB_KD], eb[KGB_KD];
	kgb_bcast(ond, snd, an_, as_, ea);
	kgb_bcast(ond, bnd, bn_, bs_, eb);
	kgb_it_t it;
	kgb_it_init(&it, nn, ea, eb, so);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		STORE_out(out, it.off[2], FN(LOAD_self(self, it.off[0]), LOAD_other(other, it.off[1])));
		kgb_it_next(&it);
	}
}
