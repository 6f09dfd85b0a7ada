/* gt: out (bool) = self > other, broadcasting; any rank and layout. other is a tensor
 * (B_T 1, the default) or, for the cases whose other is a Python scalar (has.other is
 * 0), an f32 passed by value (B_T 0), compared in float as ATen does. */
#define EPT 8   /* elements per work-item */
#ifndef B_T
#define B_T 1
#endif

#define FN(a, b) ((a) > (b))

/* self and other are broadcast (right-aligned) to out's shape; a scalar other has rank 0. */
__kernel void gt_k(__global const T_self *self,
#if B_T
                   __global const T_other *other,
#else
                   float other_s,
#endif
                   __global T_out *out, KGB_BIN_PARAMS)
{
	KGB_BIN_BEGIN(it, base, EPT);
	for (int k = 0; k < EPT && base + k < n; k++) {
#if B_T
		STORE_out(out, it.off[2], FN(LOAD_self(self, it.off[0]), LOAD_other(other, it.off[1])));
#else
		STORE_out(out, it.off[2], FN((float)LOAD_self(self, it.off[0]), other_s));
#endif
		kgb_it_next(&it);
	}
}
