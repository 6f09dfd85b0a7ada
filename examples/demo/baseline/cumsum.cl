/* inclusive cumsum over the last dimension: one work-item per row. */
__kernel void cumsum_rows(__global const T_self *self, __global T_out *out, int rows, int cols)
{
	int r = get_global_id(0);
	if (r >= rows)
		return;
	long base = (long)r * cols;
	double acc = 0.0;
	for (int j = 0; j < cols; j++) {
		acc += LOAD_self(self, base + j);
		STORE_out(out, base + j, (float)acc);
	}
}
