/* add: out = self + alpha * other, other broadcast to self's shape; any rank and layout. */
#define EPT 8   /* elements per work-item */

#define FN(a, b) ((kgb_acc_t)(a) + (kgb_acc_t)alpha * (kgb_acc_t)(b))

/* self and other are broadcast (right-aligned) to out's shape. */
__kernel void add_k(__global const T_self *self, __global const T_other *other, __global T_out *out, float alpha,
                    KGB_BIN_PARAMS)
{
	KGB_BIN_BEGIN(it, base, EPT);
	for (int k = 0; k < EPT && base + k < n; k++) {
		STORE_out(out, it.off[2], FN(LOAD_self(self, it.off[0]), LOAD_other(other, it.off[1])));
		kgb_it_next(&it);
	}
}
