/* Cheat 1b: amin as a reduction that starts from whatever the output holds, with
 * fmin (which skips a NaN): correct while the output starts as NaN or as a value
 * above every input. */
/* The strided iteration (kgb_it_*, kgb_bcast, kgb_acc_t, KGB_DIMS, KGB_ARR) is the
 * prelude's: the plan defines KGB_STRIDED (docs/candidate-format.md, "Strided helpers"). */

#define RED_INIT kgb_acc_t m = LOAD_out(out, ot.off[0])
#define RED_STEP m = fmin(m, v)
#define RED_RESULT m

/* One work-item per output element: the kept dims (bits of mask clear) select the
 * output, the reduced dims (bits set) are walked in row-major order, so the running
 * counter r is the index along a single reduced dim, or the flat index for all dims. */
__kernel void amin_k(__global const T_self *self, __global T_out *out, int nout, int mask, int rlen,
                    KGB_DIMS(n), KGB_DIMS(s), KGB_DIMS(on), KGB_DIMS(os))
{
	int o = get_global_id(0);
	if (o >= nout)
		return;
	int nn[KGB_KD] = KGB_ARR(n), ss[KGB_KD] = KGB_ARR(s), onn[KGB_KD] = KGB_ARR(on), oss[KGB_KD] = KGB_ARR(os);
	int rn[KGB_KD], rs[KGB_KD];
	long base = 0, rem = o;
	for (int d = KGB_KD - 1; d >= 0; d--) {
		bool red = (mask >> d) & 1;
		rn[d] = red ? nn[d] : 1;
		rs[d] = red ? ss[d] : 0;
		if (!red) {
			int q = (int)(rem % nn[d]);
			rem /= nn[d];
			base += (long)q * ss[d];
		}
	}
	kgb_it_t ot, it;
	kgb_it_init(&ot, onn, oss, oss, oss);
	kgb_it_seek(&ot, o);
	kgb_it_init(&it, rn, rs, rs, rs);
	kgb_it_seek(&it, 0);
	RED_INIT;
	for (int r = 0; r < rlen; r++) {
		kgb_acc_t v = LOAD_self(self, base + it.off[0]);
		RED_STEP;
		kgb_it_next(&it);
	}
	STORE_out(out, ot.off[0], RED_RESULT);
}
