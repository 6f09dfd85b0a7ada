/* cumsum: out[..., j, ...] = the inclusive prefix sum of self along dim, in double; any rank and layout. */


/* One work-item per line of self along dim (a negative dim counts from the end); the
 * other dims select the line through self's and out's own strides. */
__kernel void cumsum_k(__global const T_self *self, __global T_out *out, int numel, int ndim, int dim,
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
	kgb_acc_t acc = 0;
	for (int j = 0; j < len; j++) {
		acc += (kgb_acc_t)LOAD_self(self, bs + j * sd);
		STORE_out(out, bo + j * od, acc);
	}
}
