/* cublasSaxpy_v2: y[i*incy] += alpha * x[i*incx] for i < n; other elements untouched. */
__kernel void saxpy(__global const float *x, __global float *y, int n, int incx, int incy, float alpha)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	y[(long)i * incy] += alpha * x[(long)i * incx];
}
