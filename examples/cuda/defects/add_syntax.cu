/* Planted defect (compile_error): a missing semicolon and an undeclared name. */
extern "C" __global__ void add_kernel(const T_self *self, const T_other *other, T_out *out, float alpha,
                                      int n, int other_n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x
	if (i < n)
		STORE_out(out, i, LOAD_self(self, i) + alpha * undeclared_other[i]);
}
