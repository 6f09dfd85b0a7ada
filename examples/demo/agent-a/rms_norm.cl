/* vllm rms_norm: a token per work-item, the sum of squares with four independent
 * partial sums. */
__kernel void rms_norm_ilp(__global const T_input *input, __global const T_weight *weight,
                           __global T_out *out, float epsilon, int tokens, int hidden)
{
	int t = get_global_id(0);
	if (t >= tokens)
		return;
	long base = (long)t * hidden;
	float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
	int j = 0;
	for (; j + 4 <= hidden; j += 4) {
		float x0 = LOAD_input(input, base + j), x1 = LOAD_input(input, base + j + 1);
		float x2 = LOAD_input(input, base + j + 2), x3 = LOAD_input(input, base + j + 3);
		s0 += x0 * x0;
		s1 += x1 * x1;
		s2 += x2 * x2;
		s3 += x3 * x3;
	}
	for (; j < hidden; j++) {
		float x = LOAD_input(input, base + j);
		s0 += x * x;
	}
	float scale = rsqrt(((s0 + s1) + (s2 + s3)) / (float)hidden + epsilon);
	for (j = 0; j < hidden; j++)
		STORE_out(out, base + j, LOAD_input(input, base + j) * scale * LOAD_weight(weight, j));
}
