/* inclusive cumsum over the last dimension: one work-group per row, the row scanned in
 * chunks of WG elements with a Hillis-Steele scan in local memory and a running carry. */
__kernel void cumsum_scan(__global const T_self *self, __global T_out *out, int cols, __local float *buf)
{
	int r = get_group_id(0);
	int l = get_local_id(0);
	long base = (long)r * cols;
	double carry = 0.0;
	for (int c0 = 0; c0 < cols; c0 += WG) {
		int j = c0 + l;
		buf[l] = j < cols ? LOAD_self(self, base + j) : 0.0f;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int s = 1; s < WG; s <<= 1) {
			float v = l >= s ? buf[l - s] : 0.0f;
			barrier(CLK_LOCAL_MEM_FENCE);
			buf[l] += v;
			barrier(CLK_LOCAL_MEM_FENCE);
		}
		if (j < cols)
			STORE_out(out, base + j, (float)(carry + buf[l]));
		carry += buf[WG - 1];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
}
