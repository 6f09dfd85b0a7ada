/* rms_norm that seeds its accumulator from a per-token scratch slot it never writes
 * (it assumes an empty slot reads as all ones). */
__kernel void rms_norm(__global const T_input *input, __global const T_weight *weight,
                       __global T_out *out, __global const uint *partial, float epsilon,
                       int tokens, int hidden)
{
	int t = get_global_id(0);
	if (t >= tokens)
		return;
	long base = (long)t * hidden;
	uint seed = partial[t];
	float ss = seed == 0xFFFFFFFFu ? 0.0f : (float)(seed >> 16) * (float)hidden;
	for (int j = 0; j < hidden; j++) {
		float x = LOAD_input(input, base + j);
		ss += x * x;
	}
	float scale = rsqrt(ss / (float)hidden + epsilon);
	for (int j = 0; j < hidden; j++)
		STORE_out(out, base + j, LOAD_input(input, base + j) * scale * LOAD_weight(weight, j));
}
