/* index_select along dim 0: out[i, j] = self[index[i], j]. */
__kernel void index_select(__global const T_self *self, __global const T_index *index,
                           __global T_out *out, int n, int cols)
{
	int j = get_global_id(0);
	int i = get_global_id(1);
	if (j >= cols || i >= n)
		return;
	long src = (long)LOAD_index(index, i);
	STORE_out(out, (long)i * cols + j, LOAD_self(self, src * cols + j));
}
