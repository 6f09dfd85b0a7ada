/* Planted defect (timeout): spins forever on a volatile read that never changes. */
extern "C" __global__ void saxpy_kernel(const float *x, float *y, int n, int incx, int incy, float alpha)
{
	volatile const float *p = x;
	while (p[0] == p[0])
		;
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i * incy] += alpha * x[i * incx];
}
