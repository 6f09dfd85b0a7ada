/* cublasSaxpy_v2, four elements per work-item, unit strides on a fast path. */
__kernel void saxpy_x4(__global const float *x, __global float *y, int n, int incx, int incy, float alpha)
{
	int base = get_global_id(0) * 4;
	if (incx == 1 && incy == 1) {
		for (int k = 0; k < 4; k++)
			if (base + k < n)
				y[base + k] += alpha * x[base + k];
	} else {
		for (int k = 0; k < 4; k++) {
			long i = base + k;
			if (i < n)
				y[i * incy] += alpha * x[i * incx];
		}
	}
}
