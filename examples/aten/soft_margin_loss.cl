/* soft_margin_loss: l = log(1 + exp(-y x)) computed stably; reduction none, mean or sum (work-group partial sums in double, then one work-item). */
#define EPT 8   /* elements per work-item */

#define LOSS(x, t, unused) softplus1(-(t) * (x))
static kgb_acc_t softplus1(kgb_acc_t v)
{
	return v > 0 ? v + log1p(exp(-v)) : log1p(exp(v));
}

/* Stage 1: one work-item per EPT elements. reduction 0 (none): out = l elementwise;
 * 1 (mean) or 2 (sum): the work-group's sum of l goes to partial[group] (double). */
__kernel void soft_margin_loss_k(__global const T_self *self, __global const T_target *target, __global T_out *out,
                    __global double *partial, __local double *lsum, int n, int reduction, float p,
                    KGB_DIMS(n), KGB_DIMS(a), KGB_DIMS(b), KGB_DIMS(o))
{
	long base = (long)get_global_id(0) * EPT;
	int nn[KGB_KD] = KGB_ARR(n), sa[KGB_KD] = KGB_ARR(a), sb[KGB_KD] = KGB_ARR(b), so[KGB_KD] = KGB_ARR(o);
	double acc = 0;
	if (base < n) {
		kgb_it_t it;
		kgb_it_init(&it, nn, sa, sb, so);
		kgb_it_seek(&it, base);
		for (int k = 0; k < EPT && base + k < n; k++) {
			kgb_acc_t x = LOAD_self(self, it.off[0]), t = LOAD_target(target, it.off[1]);
			kgb_acc_t l = LOSS(x, t, p);
			if (reduction == 0)
				STORE_out(out, it.off[2], l);
			else
				acc += l;
			kgb_it_next(&it);
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
__kernel void soft_margin_loss_k_final(__global const double *partial, __global T_out *out, int ngroups, int n,
                          int reduction)
{
	if (get_global_id(0) != 0 || reduction == 0)
		return;
	double s = 0;
	for (int g = 0; g < ngroups; g++)
		s += partial[g];
	STORE_out(out, 0, reduction == 1 ? s / n : s);
}
