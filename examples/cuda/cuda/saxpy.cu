/* cublasSaxpy_v2: y[i*incy] += alpha * x[i*incx]. */
extern "C" __global__ void saxpy_kernel(const float *x, float *y, int n, int incx, int incy, float alpha)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i * incy] += alpha * x[i * incx];
}
