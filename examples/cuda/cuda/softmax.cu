/* aten softmax over the last dim: one block of WG threads per row; max and sum
 * reduced through shared memory, in float. */
extern "C" __global__ void softmax_kernel(const T_self *self, T_out *out, int cols)
{
	__shared__ float red[WG];
	const T_self *x = self + (long)blockIdx.x * cols;
	T_out *y = out + (long)blockIdx.x * cols;
	int t = threadIdx.x;
	float m = -__int_as_float(0x7f800000); /* -inf */
	for (int j = t; j < cols; j += WG)
		m = fmaxf(m, LOAD_self(x, j));
	red[t] = m;
	__syncthreads();
	for (int s = WG / 2; s > 0; s >>= 1) {
		if (t < s)
			red[t] = fmaxf(red[t], red[t + s]);
		__syncthreads();
	}
	m = red[0];
	__syncthreads();
	float sum = 0.0f;
	for (int j = t; j < cols; j += WG)
		sum += __expf(LOAD_self(x, j) - m);
	red[t] = sum;
	__syncthreads();
	for (int s = WG / 2; s > 0; s >>= 1) {
		if (t < s)
			red[t] += red[t + s];
		__syncthreads();
	}
	float inv = 1.0f / red[0];
	for (int j = t; j < cols; j += WG)
		STORE_out(y, j, __expf(LOAD_self(x, j) - m) * inv);
}
