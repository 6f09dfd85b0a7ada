/* Planted defect (unwritten_output): writes only the first half of the output. */
extern "C" __global__ void silu_kernel(const T_self *self, T_out *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n / 2) {
		float x = LOAD_self(self, i);
		STORE_out(out, i, x / (1.0f + __expf(-x)));
	}
}
