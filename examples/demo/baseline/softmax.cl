/* softmax over the last dimension: one work-item per row, three passes. */
__kernel void softmax_rows(__global const T_self *self, __global T_out *out, int rows, int cols)
{
	int r = get_global_id(0);
	if (r >= rows)
		return;
	long base = (long)r * cols;
	float m = -INFINITY;
	for (int j = 0; j < cols; j++)
		m = fmax(m, LOAD_self(self, base + j));
	float s = 0.0f;
	for (int j = 0; j < cols; j++)
		s += exp(LOAD_self(self, base + j) - m);
	float inv = 1.0f / s;
	for (int j = 0; j < cols; j++)
		STORE_out(out, base + j, exp(LOAD_self(self, base + j) - m) * inv);
}
