/* vllm rms_norm: out = input / sqrt(mean(input^2) + epsilon) * weight; a row per work-item. */
__kernel void rms_norm(__global const T_input *input, __global const T_weight *weight,
                       __global T_out *out, float epsilon, int tokens, int hidden)
{
	int t = get_global_id(0);
	if (t >= tokens)
		return;
	long base = (long)t * hidden;
	float ss = 0.0f;
	for (int j = 0; j < hidden; j++) {
		float x = LOAD_input(input, base + j);
		ss += x * x;
	}
	float scale = rsqrt(ss / (float)hidden + epsilon);
	for (int j = 0; j < hidden; j++)
		STORE_out(out, base + j, LOAD_input(input, base + j) * scale * LOAD_weight(weight, j));
}
