/* scatter with its four overloads: .src and .reduce take a src tensor, .value and
 * .value_reduce a Python scalar (V_T 0); reduce is 0 (none), 1 (add) or 2 (multiply).
 * scatter_copy_k copies self (any layout) into out; scatter_k then walks index line by
 * line along dim: every write of a line lands in the same line of out, so one
 * work-item per line keeps repeated indices (the reduce overloads) free of races. */
/* The strided iteration (kgb_it_*, kgb_bcast, kgb_acc_t, KGB_DIMS, KGB_ARR) is the
 * prelude's: the plan defines KGB_STRIDED (docs/candidate-format.md, "Strided helpers"). */
#define EPT 8   /* elements per work-item */

__kernel void scatter_copy_k(__global const T_self *self, __global T_out *out, int n, KGB_DIMS(n), KGB_DIMS(s), KGB_DIMS(o))
{
	long base = (long)get_global_id(0) * EPT;
	if (base >= n)
		return;
	int nn[KGB_KD] = KGB_ARR(n), ss[KGB_KD] = KGB_ARR(s), so[KGB_KD] = KGB_ARR(o);
	kgb_it_t it;
	kgb_it_init(&it, nn, ss, so, so);
	kgb_it_seek(&it, base);
	for (int k = 0; k < EPT && base + k < n; k++) {
		STORE_out(out, it.off[1], LOAD_self(self, it.off[0]));
		kgb_it_next(&it);
	}
}

/* Compiled only with V_T defined (the scatter_k entries of the plan): the copy kernel's
 * program must not name src, which the .value overloads do not have. */
#ifdef V_T
/* lines: the number of index lines (index.numel / index.size(dim)); in / ix: index's
 * sizes and strides; rs: src's strides; os: out's strides. */
__kernel void scatter_k(__global const T_index *index,
#if V_T
                        float value,
#else
                        __global const T_src *src,
#endif
                        __global T_out *out, int lines, int dim, int reduce, KGB_DIMS(in), KGB_DIMS(ix), KGB_DIMS(rs),
                        KGB_DIMS(os))
{
	long line = get_global_id(0);
	if (line >= lines)
		return;
	int n_[KGB_KD] = KGB_ARR(in), xs[KGB_KD] = KGB_ARR(ix), ss[KGB_KD] = KGB_ARR(rs), o_[KGB_KD] = KGB_ARR(os);
	long off[3];
	kgb_line_seek(line, dim, n_, xs, ss, o_, off);
	long xoff = off[0], soff = off[1], ooff = off[2];
	for (int j = 0; j < n_[dim]; j++) {
		long t = (long)LOAD_index(index, xoff + (long)j * xs[dim]);
		long dst = ooff + t * o_[dim];
#if V_T
		kgb_acc_t v = (kgb_acc_t)value;
#else
		kgb_acc_t v = (kgb_acc_t)LOAD_src(src, soff + (long)j * ss[dim]);
#endif
		if (reduce == 1)
			v = (kgb_acc_t)LOAD_out(out, dst) + v;
		else if (reduce == 2)
			v = (kgb_acc_t)LOAD_out(out, dst) * v;
		STORE_out(out, dst, v);
	}
}
#endif
