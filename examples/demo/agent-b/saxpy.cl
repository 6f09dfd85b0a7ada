/* cublasSaxpy_v2 with a grid-stride loop. */
__kernel void saxpy_gs(__global const float *x, __global float *y, int n, int incx, int incy, float alpha)
{
	for (long i = get_global_id(0); i < n; i += get_global_size(0))
		y[i * incy] = fma(alpha, x[i * incx], y[i * incy]);
}
