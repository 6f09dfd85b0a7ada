/* sum over the last dimension: one work-item per row, a serial loop. */
__kernel void sum_rows(__global const T_self *self, __global T_out *out, int rows, int cols)
{
	int r = get_global_id(0);
	if (r >= rows)
		return;
	double acc = 0.0;
	for (int j = 0; j < cols; j++)
		acc += LOAD_self(self, (long)r * cols + j);
	STORE_out(out, r, (float)acc);
}
