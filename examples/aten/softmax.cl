/* softmax: out = exp(self - max) / sum(exp(self - max)) along dim, in double; any rank and
 * layout. Also _softmax, whose out may be fp32 for fp16 self (half_to_float). */


/* One work-item per line of self along dim (a negative dim counts from the end); the
 * other dims select the line through self's and out's own strides. */
__kernel void softmax_k(__global const T_self *self, __global T_out *out, int numel, int ndim, int dim,
                    KGB_DIMS(n), KGB_DIMS(s), KGB_DIMS(os))
{
	int nn[KGB_KD] = KGB_ARR(n), ss[KGB_KD] = KGB_ARR(s), oss[KGB_KD] = KGB_ARR(os);
	if (dim < 0)
		dim += ndim > 0 ? ndim : 1;
	int len = nn[dim];
	int l = get_global_id(0);
	if (l >= numel / len)
		return;
	long off[3];
	kgb_line_seek(l, dim, nn, ss, oss, oss, off);
	long bs = off[0], bo = off[1];
	long sd = ss[dim], od = oss[dim];
	kgb_acc_t m = -INFINITY, sum = 0;
	for (int j = 0; j < len; j++)
		m = fmax(m, (kgb_acc_t)LOAD_self(self, bs + j * sd));
	for (int j = 0; j < len; j++)
		sum += exp((kgb_acc_t)LOAD_self(self, bs + j * sd) - m);
	for (int j = 0; j < len; j++)
		STORE_out(out, bo + j * od, exp((kgb_acc_t)LOAD_self(self, bs + j * sd) - m) / sum);
}
