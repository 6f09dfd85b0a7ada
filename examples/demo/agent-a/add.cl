/* add, four elements per work-item; the broadcast index is only computed when other is
 * smaller than self. */
__kernel void add_x4(__global const T_self *self, __global const T_other *other, __global T_out *out,
                     float alpha, int n, int other_numel)
{
	int base = get_global_id(0) * 4;
	if (other_numel == n) {
		for (int k = 0; k < 4; k++) {
			int i = base + k;
			if (i < n)
				STORE_out(out, i, LOAD_self(self, i) + alpha * LOAD_other(other, i));
		}
	} else {
		for (int k = 0; k < 4; k++) {
			int i = base + k;
			if (i < n)
				STORE_out(out, i, LOAD_self(self, i) + alpha * LOAD_other(other, i % other_numel));
		}
	}
}
