/* margin_ranking_loss: l = max(0, -y (x1 - x2) + margin); reduction none, mean or sum (work-group partial sums in double, then one work-item). */
#define EPT 8   /* elements per work-item */

#define LOSS(x, t, m) fmax((kgb_acc_t)0, -y * ((x) - (t)) + (kgb_acc_t)(m))

/* Stage 1: one work-item per EPT elements. reduction 0 (none): out = l elementwise;
 * 1 (mean) or 2 (sum): the work-group's sum of l goes to partial[group] (double). */
__kernel void margin_ranking_loss_k(__global const T_input1 *input1, __global const T_input2 *input2, __global const T_target *target, __global T_out *out,
                    __global double *partial, __local double *lsum, int n, int reduction, float p,
                    KGB_DIMS(n), KGB_DIMS(a), KGB_DIMS(b), KGB_DIMS(c), KGB_DIMS(o))
{
	long base = (long)get_global_id(0) * EPT;
	int nn[KGB_KD] = KGB_ARR(n), sa[KGB_KD] = KGB_ARR(a), sb[KGB_KD] = KGB_ARR(b), so[KGB_KD] = KGB_ARR(o);
	int sc[KGB_KD] = KGB_ARR(c);
	double acc = 0;
	if (base < n) {
		kgb_it_t it;
		kgb_it_init(&it, nn, sa, sb, so);
		kgb_it_seek(&it, base);
		kgb_it_t it3;
		kgb_it_init(&it3, nn, sc, sc, sc);
		kgb_it_seek(&it3, base);
		for (int k = 0; k < EPT && base + k < n; k++) {
			kgb_acc_t x = LOAD_input1(input1, it.off[0]), t = LOAD_input2(input2, it.off[1]);
			kgb_acc_t y = LOAD_target(target, it3.off[0]);
			kgb_acc_t l = LOSS(x, t, p);
			if (reduction == 0)
				STORE_out(out, it.off[2], l);
			else
				acc += l;
			kgb_it_next(&it);
			kgb_it_next(&it3);
		}
	}
	if (reduction == 0)
		return;   /* uniform across the work-group: no barrier is skipped by some only */
	int lid = get_local_id(0), ls = get_local_size(0);
	lsum[lid] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = ls / 2; s > 0; s >>= 1) {
		if (lid < s)
			lsum[lid] += lsum[lid + s];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0)
		partial[get_group_id(0)] = lsum[0];
}

/* Stage 2 (one work-item): out (0-d) = the sum of the partials, / n for the mean. */
__kernel void margin_ranking_loss_k_final(__global const double *partial, __global T_out *out, int ngroups, int n,
                          int reduction)
{
	if (get_global_id(0) != 0 || reduction == 0)
		return;
	double s = 0;
	for (int g = 0; g < ngroups; g++)
		s += partial[g];
	STORE_out(out, 0, reduction == 1 ? s / n : s);
}
