/* Cheat 1b: amin as a reduction that starts from whatever the output holds, with
 * fmin (which skips a NaN): correct while the output starts as NaN or as a value
 * above every input. */
/* The strided reduction (KGB_RED_PARAMS, KGB_RED_BEGIN, kgb_it_next, kgb_acc_t) is the
 * prelude's: the plan defines KGB_STRIDED (docs/candidate-format.md, "Strided helpers"). */

/* One work-item per output element: the kept dims (bits of mask clear) select the
 * output, the reduced dims (bits set) are walked in row-major order. */
__kernel void amin_k(__global const T_self *self, __global T_out *out, KGB_RED_PARAMS)
{
	KGB_RED_BEGIN(r);
	kgb_acc_t m = LOAD_out(out, r.out);
	for (int i = 0; i < rlen; i++, kgb_it_next(&r.in)) {
		kgb_acc_t v = LOAD_self(self, r.base + r.in.off[0]);
		m = fmin(m, v);
	}
	STORE_out(out, r.out, m);
}
