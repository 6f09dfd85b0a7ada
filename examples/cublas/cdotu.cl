/* cublasCdotu_v2: result = sum_i x[i] * y[i] (no conjugation), complex float, with
 * increments that may be negative (then the vector is walked backwards). One
 * work-group of 64 work-items, each a strided partial sum, accumulated in double where
 * the device has it, then a tree reduction in local memory. */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double2 acc_t;
#else
typedef float2 acc_t;
#endif

static long at(long i, int n, int inc)
{
	return inc >= 0 ? i * inc : (long)(n - 1 - i) * -inc;
}

__kernel void cdotu(__global const float2 *x, __global const float2 *y, __global float2 *result, int n,
                    int incx, int incy)
{
	__local acc_t part[64];
	int t = get_local_id(0);
	acc_t s = (acc_t)(0, 0);
	for (long i = t; i < n; i += 64) {
		float2 a = x[at(i, n, incx)], b = y[at(i, n, incy)];
		s += (acc_t)((a.x * b.x - a.y * b.y), (a.x * b.y + a.y * b.x));
	}
	part[t] = s;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int w = 32; w > 0; w >>= 1) {
		if (t < w)
			part[t] += part[t + w];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (t == 0)
		result[0] = (float2)((float)part[0].x, (float)part[0].y);
}
