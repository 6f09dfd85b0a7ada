/* Planted defect (out_of_bounds_write): writes 64 elements past the end of out. */
extern "C" __global__ void silu_kernel(const T_self *self, T_out *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n + 64) {
		float x = i < n ? LOAD_self(self, i) : 1.0f;
		STORE_out(out, i, x / (1.0f + __expf(-x)));
	}
}
