/* index_select along dim 0: a work-item copies a run of VEC columns of one row. */
__kernel void index_select_vec(__global const T_self *self, __global const T_index *index,
                               __global T_out *out, int n, int cols)
{
	int j0 = get_global_id(0) * VEC;
	int i = get_global_id(1);
	if (i >= n)
		return;
	long src = (long)LOAD_index(index, i) * cols;
	long dst = (long)i * cols;
	for (int j = j0; j < j0 + VEC && j < cols; j++)
		STORE_out(out, dst + j, LOAD_self(self, src + j));
}
