/* sum over the last dimension: a row per work-item with four independent partial sums
 * (no loop-carried dependence on one accumulator). */
__kernel void sum_ilp(__global const T_self *self, __global T_out *out, int rows, int cols)
{
	int r = get_global_id(0);
	if (r >= rows)
		return;
	long base = (long)r * cols;
	float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
	int j = 0;
	for (; j + 4 <= cols; j += 4) {
		a0 += LOAD_self(self, base + j);
		a1 += LOAD_self(self, base + j + 1);
		a2 += LOAD_self(self, base + j + 2);
		a3 += LOAD_self(self, base + j + 3);
	}
	for (; j < cols; j++)
		a0 += LOAD_self(self, base + j);
	STORE_out(out, r, (a0 + a1) + (a2 + a3));
}
