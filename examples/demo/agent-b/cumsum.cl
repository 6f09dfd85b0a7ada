/* inclusive cumsum with an off-by-one loop bound: one element past each row. */
__kernel void cumsum_rows(__global const T_self *self, __global T_out *out, int rows, int cols)
{
	int r = get_global_id(0);
	if (r >= rows)
		return;
	long base = (long)r * cols;
	float acc = 0.0f;
	for (int j = 0; j <= cols; j++) {
		acc += LOAD_self(self, base + j);
		STORE_out(out, base + j, acc);
	}
}
