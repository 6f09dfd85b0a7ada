/* vllm rms_norm: out = input * rsqrt(mean(input^2) + eps) * weight, one block per
 * token, float accumulation. */
extern "C" __global__ void rms_norm_kernel(const T_input *input, const T_weight *weight, T_out *out,
                                           float eps, int hidden)
{
	__shared__ float red[WG];
	const T_input *x = input + (long)blockIdx.x * hidden;
	T_out *y = out + (long)blockIdx.x * hidden;
	int t = threadIdx.x;
	float ss = 0.0f;
	for (int j = t; j < hidden; j += WG) {
		float v = LOAD_input(x, j);
		ss += v * v;
	}
	red[t] = ss;
	__syncthreads();
	for (int s = WG / 2; s > 0; s >>= 1) {
		if (t < s)
			red[t] += red[t + s];
		__syncthreads();
	}
	float r = rsqrtf(red[0] / hidden + eps);
	for (int j = t; j < hidden; j += WG)
		STORE_out(y, j, LOAD_input(x, j) * r * LOAD_weight(weight, j));
}
