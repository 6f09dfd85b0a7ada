/* gt, four elements per work-item. */
__kernel void gt_x4(__global const T_self *self, __global const T_other *other, __global T_out *out, int n)
{
	int base = get_global_id(0) * 4;
	for (int k = 0; k < 4; k++) {
		int i = base + k;
		if (i < n)
			STORE_out(out, i, LOAD_self(self, i) > LOAD_other(other, i) ? 1 : 0);
	}
}
