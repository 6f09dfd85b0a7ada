/* Planted defect (input_modified): correct output, but it also overwrites its input. */
extern "C" __global__ void silu_kernel(T_self *self, T_out *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float x = LOAD_self(self, i);
		STORE_out(out, i, x / (1.0f + __expf(-x)));
		STORE_self(self, i, 0.0f);
	}
}
