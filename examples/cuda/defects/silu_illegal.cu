/* Planted defect (illegal_address): writes a terabyte past its output. */
extern "C" __global__ void silu_kernel(const T_self *self, T_out *out, int n)
{
	long i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		STORE_out(out, i + (1L << 40), LOAD_self(self, i));
}
