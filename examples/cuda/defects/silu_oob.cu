/* Planted defect (out_of_bounds_write): computes silu, and its first 64 threads also
 * write just past the end of out's storage, whatever the case's shape and layout. */
extern "C" __global__ void silu_kernel(const T_self *self, T_out *out, int n, long long storage)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float x = LOAD_self(self, i);
		STORE_out(out, i, x / (1.0f + __expf(-x)));
	}
	if (i < 64)
		STORE_out(out, storage + i, 1.0f);
}
