/* cublasSaxpy_v2: a work-item per element, a unit-stride fast path, fused multiply-add. */
__kernel void saxpy_fma(__global const float *x, __global float *y, int n, int incx, int incy, float alpha)
{
	int i = get_global_id(0);
	if (i >= n)
		return;
	if (incx == 1 && incy == 1)
		y[i] = fma(alpha, x[i], y[i]);
	else
		y[(long)i * incy] = fma(alpha, x[(long)i * incx], y[(long)i * incy]);
}
