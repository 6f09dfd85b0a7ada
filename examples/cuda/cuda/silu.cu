/* aten silu: out = x / (1 + exp(-x)), computed in float. */
extern "C" __global__ void silu_kernel(const T_self *self, T_out *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float x = LOAD_self(self, i);
		STORE_out(out, i, x / (1.0f + __expf(-x)));
	}
}
