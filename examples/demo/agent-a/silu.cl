/* silu, four elements per work-item. */
__kernel void silu_x4(__global const T_self *self, __global T_out *out, int n)
{
	int base = get_global_id(0) * 4;
	for (int k = 0; k < 4; k++) {
		int i = base + k;
		if (i < n) {
			float x = LOAD_self(self, i);
			STORE_out(out, i, x / (1.0f + exp(-x)));
		}
	}
}
