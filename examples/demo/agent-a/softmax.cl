/* softmax over the last dimension: one work-group per row; max and sum reduced in
 * local memory. WG is the work-group size. */
__kernel void softmax_wg(__global const T_self *self, __global T_out *out, int cols, __local float *red)
{
	int r = get_group_id(0);
	int l = get_local_id(0);
	long base = (long)r * cols;
	float m = -INFINITY;
	for (int j = l; j < cols; j += WG)
		m = fmax(m, LOAD_self(self, base + j));
	red[l] = m;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = WG / 2; s > 0; s >>= 1) {
		if (l < s)
			red[l] = fmax(red[l], red[l + s]);
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	m = red[0];
	barrier(CLK_LOCAL_MEM_FENCE);
	float acc = 0.0f;
	for (int j = l; j < cols; j += WG)
		acc += exp(LOAD_self(self, base + j) - m);
	red[l] = acc;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = WG / 2; s > 0; s >>= 1) {
		if (l < s)
			red[l] += red[l + s];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	float inv = 1.0f / red[0];
	for (int j = l; j < cols; j += WG)
		STORE_out(out, base + j, exp(LOAD_self(self, base + j) - m) * inv);
}
