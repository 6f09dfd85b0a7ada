/* vllm rms_norm: one work-group per token, the sum of squares reduced in local memory. */
__kernel void rms_norm_wg(__global const T_input *input, __global const T_weight *weight,
                          __global T_out *out, float epsilon, int hidden, __local float *red)
{
	int t = get_group_id(0);
	int l = get_local_id(0);
	long base = (long)t * hidden;
	float ss = 0.0f;
	for (int j = l; j < hidden; j += WG) {
		float x = LOAD_input(input, base + j);
		ss += x * x;
	}
	red[l] = ss;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = WG / 2; s > 0; s >>= 1) {
		if (l < s)
			red[l] += red[l + s];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	float scale = rsqrt(red[0] / (float)hidden + epsilon);
	for (int j = l; j < hidden; j += WG)
		STORE_out(out, base + j, LOAD_input(input, base + j) * scale * LOAD_weight(weight, j));
}
