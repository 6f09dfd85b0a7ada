/* sum over the last dimension: one work-group per row, a strided partial sum per
 * work-item, then a tree reduction in local memory. WG is the work-group size. */
__kernel void sum_wg(__global const T_self *self, __global T_out *out, int cols, __local double *part)
{
	int r = get_group_id(0);
	int l = get_local_id(0);
	long base = (long)r * cols;
	double acc = 0.0;
	for (int j = l; j < cols; j += WG)
		acc += LOAD_self(self, base + j);
	part[l] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = WG / 2; s > 0; s >>= 1) {
		if (l < s)
			part[l] += part[l + s];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (l == 0)
		STORE_out(out, r, (float)part[0]);
}
