/* aten add: out = self + alpha * other, other broadcast along the trailing dims
 * (other index = i % other_n). One element per thread. */
extern "C" __global__ void add_kernel(const T_self *self, const T_other *other, T_out *out, float alpha,
                                      int n, int other_n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	int j = other_n == n ? i : i % other_n;
	STORE_out(out, i, LOAD_self(self, i) + alpha * LOAD_other(other, j));
}
