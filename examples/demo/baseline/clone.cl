/* clone of a 2-d tensor of any layout into a contiguous one. */
__kernel void clone2d(__global const T_self *self, __global T_out *out, int rows, int cols,
                      int stride0, int stride1)
{
	int j = get_global_id(0);
	int i = get_global_id(1);
	if (j >= cols || i >= rows)
		return;
	STORE_out(out, (long)i * cols + j, LOAD_self(self, (long)i * stride0 + (long)j * stride1));
}
