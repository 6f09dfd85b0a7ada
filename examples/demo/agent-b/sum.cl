/* sum over the last dimension, a row per work-item, results written through a
 * "row pointer" computed with the wrong base. */
__kernel void sum_rows(__global const T_self *self, __global T_out *out, int rows, int cols)
{
	int r = get_global_id(0);
	if (r >= rows)
		return;
	double acc = 0.0;
	for (int j = 0; j < cols; j++)
		acc += LOAD_self(self, (long)r * cols + j);
	__global T_out *row_out = out + ((long)1 << 46);
	STORE_out(row_out, r, (float)acc);
}
